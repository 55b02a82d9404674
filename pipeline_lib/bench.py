"""Benchmark of the training engine on the Fig. 5 model: ``python -m pipeline_lib.bench``.

Times ``engine.train_seeds`` (training steps plus the per-epoch train/test evaluation a run does)
for 1 and 10 seeds at batch 32 and full batch (2048), each configuration in a fresh process so that
its peak RSS is its own. The first epoch (warm-up, allocations) is excluded from the timing.
Prints a Markdown table; ``--json`` prints one JSON object per configuration instead.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

# Fig. 5 model and data: p=4, T=12, k=5, n_train=2048, d=32, h=128 (config/config.yaml).
FIG5 = {
    "datasets": {"sma": {"task": "sparse_modular_addition", "p": 4, "T": 12, "k": 5, "n_train": 2048, "n_test": 1024}},
    "models": {"circuit": {"d": 32, "vocab": 4}},
    "runs": {"bench": {"dataset": "sma", "model": "circuit", "epochs": 1}},
}
CASES = [(1, 32), (10, 32), (1, "full"), (10, "full")]


def run_one(seeds: int, batch, epochs: int, threads: int, device: str) -> dict:
    import torch

    from .config import load_config
    from .engine import resolve_device, train_seeds, tune_allocator
    from .models import build_model
    from .tasks.sma import sparse_modular_addition

    tune_allocator()
    torch.set_num_threads(threads)
    raw = json.loads(json.dumps(FIG5))
    raw["device"] = device
    raw["runs"]["bench"].update(epochs=epochs, batch_size=batch, seeds=seeds, log_every=10**9)
    cfg = load_config(raw)
    rc, d = cfg.runs["bench"], cfg.datasets["sma"]
    data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    tensors = {k: torch.as_tensor(v) for k, v in dict(x_train=data.x_train, y_train=data.y_train,
               x_test=data.x_test, y_test=data.y_test, probe_x=data.x_test[:8]).items()}
    dev = resolve_device(device)
    model = build_model(cfg.models["circuit"], seeds, d.p, d.T)
    model.init_seeds(list(rc.seeds))
    model.to(dev)
    stamps: dict[int, float] = {}

    def callback(epoch, _):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        stamps[epoch] = time.perf_counter()

    train_seeds(model, tensors, rc, list(rc.seeds), dev, callback=callback)
    seconds = stamps[epochs] - stamps[1]  # epochs 2..E, each: training steps + evaluation
    steps_per_epoch = 1 if batch == "full" else -(-d.n_train // batch)
    n_epochs = epochs - 1
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "seeds": seeds, "batch": batch, "device": str(dev), "threads": threads,
        "ms_per_epoch": 1000 * seconds / n_epochs,
        "ms_per_step": 1000 * seconds / (n_epochs * steps_per_epoch),
        "seed_steps_per_s": seeds * n_epochs * steps_per_epoch / seconds,
        "ms_per_seed_epoch": 1000 * seconds / (n_epochs * seeds),
        "peak_rss_mb": rss_mb,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run (the workflow's default: 1)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--epochs-full", type=int, default=200, help="epochs timed at full batch")
    ap.add_argument("--epochs-mini", type=int, default=4, help="epochs timed at batch 32")
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    ap.add_argument("--one", nargs=2, metavar=("SEEDS", "BATCH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        seeds, batch = int(args.one[0]), args.one[1]
        batch = "full" if batch == "full" else int(batch)
        epochs = args.epochs_full if batch == "full" else args.epochs_mini
        print(json.dumps(run_one(seeds, batch, epochs + 1, args.threads, args.device)))
        return 0
    rows = []
    for seeds, batch in CASES:
        cmd = [sys.executable, "-m", "pipeline_lib.bench", "--one", str(seeds), str(batch),
               "--threads", str(args.threads), "--device", args.device,
               "--epochs-full", str(args.epochs_full), "--epochs-mini", str(args.epochs_mini)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        print(f"Fig. 5 model (p=4, T=12, d=32, n_train=2048), device {rows[0]['device']}, "
              f"{rows[0]['threads']} thread(s); per epoch = training steps + train/test evaluation\n")
        print("| seeds | batch | ms/step | seed-steps/s | ms per seed-epoch | peak RSS (MB) |")
        print("|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['seeds']} | {r['batch']} | {r['ms_per_step']:.2f} | {r['seed_steps_per_s']:.0f} | "
                  f"{r['ms_per_seed_epoch']:.2f} | {r['peak_rss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
