"""The published page of a calibration config (one whose figures include ``eureka_calibration``): written by
``publish`` from the config's kept statistics in place of a claims ledger, since a calibration scores no claim
(the Softmax rate it tunes is a setting, not a result)."""
from __future__ import annotations

from .cost import cost_text

FIGURE = "eureka_calibration"  # the figure whose presence makes a kept config a calibration


def is_calibration(kept: dict) -> bool:
    return FIGURE in kept["figures"]


def calibration_markdown(kept: dict) -> str:
    """The page: per task the knob's values with the Softmax Eureka-ratio at each (exploration seeds), the
    source's ratio, the rule and the value it picks; where the config draws eureka_norm_cap, the share of
    attention rows on which NormSoftmax at the runs' tau would bind; the run's cost."""
    stats = kept["figures"][FIGURE]["stats"]
    cap = kept["figures"].get("eureka_norm_cap", {}).get("stats", {})
    config = kept["config"]
    lines = [f"# Calibration: `{config}`", "",
             "Softmax alone, on exploration seeds, at each value of one knob per task; the value whose Softmax "
             "Eureka-ratio lies closest to the ratio the paper prints is the setting every arm then trains at on "
             "the report seeds (a tie goes to the value nearest the default's, then to the smaller). The rule was "
             f"fixed in `{config}` before these runs. Rerun: `snakemake --cores all --configfile {config}`, then "
             f"`python -m pipeline_lib publish --keep <its results folder> --config {config}`.", ""]
    for task, s in stats.items():
        if task == "summary":
            continue
        lines += [f"## {task}", "",
                  f"The paper's Softmax ratio: **{s['target']:.2f}** ({s['source']}). Knob: `{s['knob']}` "
                  f"(the default's: {s['default']:g}). Picked: **{s['knob']} = {s['picked']:g}** "
                  f"(Softmax {s['picked_ratio']:.2f}).{_not_reached(s)}", "",
                  f"| {s['knob']} | Softmax Eureka-ratio | Wilson 95% | distance to {s['target']:.2f} | epochs | seeds "
                  "| NormSoftmax at the same tau would bind (share of rows, last epoch, median over seeds) |",
                  "|---:|---|---|---:|---:|---|---|"]
        for r in s["rows"]:
            binds = cap.get(r["experiment"], {}).get("Softmax", {}).get("final_median")
            seeds = r["seeds"]
            span = f"{seeds[0]}-{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds))
            lines.append(f"| {r['value']:g}{' (picked)' if r['value'] == s['picked'] else ''} | "
                         f"{r['n_eureka']}/{r['n_seeds']} = {r['ratio']:.2f} | [{r['ci_low']:.2f}, {r['ci_high']:.2f}] | "
                         f"{abs(r['ratio'] - s['target']):.2f} | {r['epochs']} | {span} | "
                         f"{'-' if binds is None else format(binds, '.2f')} |")
        lines.append("")
    lines += ["## Cost", "", cost_text(kept["cost"], kept.get("machine")) + ".", ""]
    return "\n".join(lines)


def _not_reached(task: dict) -> str:
    """Where the picked value's Softmax ratio lies more than one seed (1 / its seeds) from the paper's, the knob
    does not reach the regime: said beside the pick, which the rule makes whatever the distance."""
    row = next(r for r in task["rows"] if r["value"] == task["picked"])
    if abs(row["ratio"] - task["target"]) <= 1 / row["n_seeds"] + 1e-9:
        return ""
    return (f" **Not reached:** no value lies within one seed (1/{row['n_seeds']}) of {task['target']:.2f}, so this "
            f"knob does not put Softmax in the paper's regime; the pick is the rule's, not a calibrated setting.")
