"""Eureka-moments at 600 and at 10K epochs, seed by seed: reads the finished runs of the
default config (results/) and of config/eureka_10k.yaml (results/eureka_10k/), prints a Markdown table.

Both configs train seeds 0-4 from the same initial weights on the same data (their first epochs' losses agree to
the last digit); they differ in the run's length, and so in how fast the per-epoch cosine falls. For each arm and
learning rate, per seed: the Eureka epoch in each run (test accuracy first >= the analysis' threshold, as the
eureka analysis finds it) and the share of the peak learning rate the schedule gives at that epoch, in the run
that jumped and in the other run at the same epoch.

    python docs/diagnostics/eureka_length.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from pipeline_lib.lr_schedule import epoch_lr  # noqa: E402
from pipeline_lib.plumbing.config import load_config_file  # noqa: E402

RUNS = {  # (experiment, arm) -> (default config's run, eureka_10k's run)
    ("reasoning", "Softmax"): ("reasoning_softmax", "softmax_lr2e3"),
    ("reasoning", "HT"): ("reasoning_ht", "ht_lr2e3"),
    ("reasoning", "NormSoftmax"): ("reasoning_normsoftmax", "normsoftmax_lr2e3"),
    ("reasoning_lr5e4", "Softmax"): ("reasoning_softmax_lr5e4", "softmax_lr5e4"),
    ("reasoning_lr5e4", "HT"): ("reasoning_ht_lr5e4", "ht_lr5e4"),
    ("reasoning_lr5e4", "NormSoftmax"): ("reasoning_normsoftmax_lr5e4", "normsoftmax_lr5e4"),
}


def share(cfg, run: str, epoch) -> str:
    """The schedule's learning rate at ``epoch`` as a share of the run's peak rate."""
    spec = cfg.runs[run]
    return f"{epoch_lr(spec.optimizer, spec.epochs, int(epoch)) / spec.optimizer.lr:.2f}"


def main() -> None:
    short = load_config_file(REPO / "config" / "config.yaml")
    long_ = load_config_file(REPO / "config" / "eureka_10k.yaml")
    arms = {name: json.loads((REPO / folder / "figures" / "eureka_table.json").read_text())["stats"]["arms"]
            for name, folder in (("short", "results"), ("long", "results/eureka_10k"))}
    n_short, n_long = short.runs["reasoning_softmax"].epochs, long_.runs["softmax_lr2e3"].epochs
    print(f"| experiment | arm | lr | seed | Eureka epoch, {n_short} epochs | lr share then | Eureka epoch, "
          f"{n_long} epochs | lr share then | lr share of the {n_short}-epoch run at that epoch |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for (exp, arm), (run_s, run_l) in RUNS.items():
        ee_s = arms["short"][exp][arm]["eureka_epochs"]
        ee_l = arms["long"][exp][arm]["eureka_epochs"]
        for seed, e_l in enumerate(ee_l):
            e_s = ee_s[seed]
            cells = [exp, arm, f"{long_.runs[run_l].optimizer.lr:g}", str(seed),
                     "none" if e_s is None else str(int(e_s)), "-" if e_s is None else share(short, run_s, e_s),
                     "none" if e_l is None else str(int(e_l)), "-" if e_l is None else share(long_, run_l, e_l),
                     "-" if e_l is None or e_l >= n_short else share(short, run_s, e_l)]
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
