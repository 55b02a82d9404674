"""Tian's table "Gradient Descent solutions matches with construction" (CoGO, modular addition): per
configured modulus d, the % of frequencies whose node count q_k is not 0, 4 or 6 (the reference code
prints their count; both are 0 in the talk's table); the % of order-4
and order-6 frequencies that do not factorise; the mean factorisation error (x 1e-2) of those that
do; and the share of each constructed solution type among the factorable ones; mean +- std/sqrt(n)
over the solved seeds (both accuracies 1). The talk's values (q = 512, wd = 5e-5, 5 seeds) are
shown beside ours for d = 23, 71, 127; also written as CSV and Markdown."""
from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

from ..analysis.fourier import FACTOR_KINDS, TABLE, TYPES
from ..intervals import json_floats
from ..plumbing.store import read_dataset
from .tables import table_figure, write_table

# the talk's table as printed (slide 'Gradient Descent solutions matches with construction'; q = 512, wd = 5e-5),
# every cell "mean ± its uncertainty"; columns as TABLE
REFERENCE = {
    23: ["0.0 ± 0.0", "0.00 ± 0.00", "5.71 ± 5.71", "0.05 ± 0.01", "4.80 ± 0.96", "47.07 ± 1.88", "11.31 ± 1.76",
         "39.80 ± 2.11", "1.82 ± 1.82"],
    71: ["0.0 ± 0.0", "0.00 ± 0.00", "0.00 ± 0.00", "0.03 ± 0.00", "5.02 ± 0.25", "72.57 ± 0.70", "4.00 ± 1.14",
         "21.14 ± 2.14", "2.29 ± 1.07"],
    127: ["0.0 ± 0.0", "1.50 ± 0.92", "0.00 ± 0.00", "0.26 ± 0.14", "0.93 ± 0.18", "82.96 ± 0.39", "2.25 ± 0.64",
          "14.13 ± 0.87", "0.66 ± 0.66"],
}
TALK_SETTING = {"q": 512, "weight_decay": 5e-5}

NAME = "cogo_table"
PAPER = "Tian: algebraic structure of solutions (CoGO, GaLore)"
CONFIG = """
description: The talk's CoGO table (order-4/6 structure, factorisation, solution types) per run.
required: [runs]
properties:
  runs:
    description: "Runs listed in analyses.fourier.runs (one row each, e.g. one per modulus d)."
    type: array
    minItems: 1
    items: {type: string, x-ref: run, x-reads: [analysis/fourier]}
  split_groups:
    description: >
      Rows pooled over several runs, label -> runs: each run trains its own seeds on its own train/test split (a
      dataset per split seed), so the row's seeds differ in both (the talk drew a split per seed). The claims of a
      modulus are scored on such a row where one exists, else on the first run of that modulus.
    type: object
    default: {}
    additionalProperties:
      type: array
      minItems: 2
      items: {type: string, x-ref: run, x-reads: [analysis/fourier]}
"""
EXTRA_OUTPUTS = [".csv", ".md"]

COLUMNS = ["source", "d", "q", "wd", "solved", "% not order-4/6", "non-fact. order-4 %", "non-fact. order-6 %",
           "error order-4 (x1e-2)", "error order-6 (x1e-2)", "z_nu=i*z_xi %", "z_nu=i*z_syn,ab %", "z_nu*z_syn %",
           "others %"]
CELL_IDS = {"pct_not_46": "not_order_46", "nonfact_4": "nonfact_order4", "nonfact_6": "nonfact_order6",
             "err_4": "error_order4", "err_6": "error_order6", "sol_nu_i*xi": "type_nu_i_xi",
             "sol_nu_i*syn_ab": "type_nu_i_syn_ab", "sol_nu*syn": "type_nu_syn", "sol_other": "type_others"}


@dataclass(frozen=True)
class Params:
    runs: tuple[str, ...]
    split_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()


def mean_sem(values: np.ndarray) -> tuple[float, float]:
    """Mean and std/sqrt(n) (sample std, as the reference) over the finite values."""
    v = values[np.isfinite(values)]
    if len(v) == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0


def fmt(mean: float, sem: float) -> str:
    return "-" if not np.isfinite(mean) else f"{mean:.2f} ± {sem:.2f}"


def run_row(an: xr.Dataset) -> tuple[list[str], dict]:
    solved = an.solved.values.astype(bool)
    cells, numbers = [], {}
    for c in TABLE:
        m, s = mean_sem(an[f"table_{c}"].values[solved])
        cells.append(fmt(m, s))
        numbers[c] = {"mean": m, "sem": s}
    return cells, numbers


def per_seed(an: xr.Dataset) -> dict:
    """The solved seeds' own values: each table column, the count behind '% not order-4/6', the mean order,
    the % of the order-4/6 frequencies that are factorable and the % of frequencies (q_k > 0) that are order 4/6,
    factorable and of a constructed type."""
    solved = an.solved.values.astype(bool)
    last = an.isel(snapshot=-1, seed=np.flatnonzero(solved))
    q_k, fact, kind = last.q_k.values, last.factorable.values == 1, last.sol_type.values
    o46 = np.isin(q_k, (4, 6))
    constructed = o46 & fact & (kind >= 0) & (kind != TYPES.index("other"))
    present = np.maximum((q_k > 0).sum(-1), 1)
    out = {c: json_floats(an[f"table_{c}"].values[solved]) for c in TABLE}
    out.update({"seed": [int(s) for s in an.seed.values[solved]],
                "count_not_46": [int(c) for c in (~np.isin(q_k, (0, 4, 6))).sum(-1)],
                "mean_order": json_floats(last.order.values.mean(-1)) if len(q_k) else [],
                "pct_factorable_46": json_floats(100 * (o46 & fact).sum(-1) / np.maximum(o46.sum(-1), 1)),
                "pct_constructed": json_floats(100 * constructed.sum(-1) / present)})
    return out


def others_breakdown(an: xr.Dataset) -> dict:
    """What the 'others' column holds: over the solved seeds' last snapshot, the factorable order-4/6
    frequencies of no constructed type, counted per pair of their factors' kinds ("<2-column kind> x <other
    kind>", FACTOR_KINDS), most frequent first."""
    if "factor_kind_2" not in an:
        return {}
    last = an.isel(snapshot=-1, seed=np.flatnonzero(an.solved.values.astype(bool)))
    other = (last.factorable.values == 1) & (last.sol_type.values == TYPES.index("other"))
    pairs = collections.Counter(f"{FACTOR_KINDS[int(a)]} x {FACTOR_KINDS[int(b)]}" for a, b in
                                zip(last.factor_kind_2.values[other], last.factor_kind_3.values[other]))
    return dict(pairs.most_common())


def _pooled(paths, runs) -> xr.Dataset:
    """The fourier artifacts of several runs as one, their seeds side by side (each run its own split)."""
    parts = [read_dataset(paths.analysis("fourier", r), rule="fourier") for r in runs]
    keys = {(int(p.attrs["d"]), int(p.attrs["q"])) for p in parts}
    if len(keys) > 1:
        raise ValueError(f"split group {list(runs)} mixes moduli / widths {sorted(keys)}: a row is one (d, q)")
    seeds = [int(s) for p in parts for s in p.seed.values]
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"split group {list(runs)}: the runs share seeds {sorted(seeds)}; give each its own")
    return xr.concat(parts, dim="seed", combine_attrs="override")


def build(cfg, params: Params, paths, outputs: dict[str, str]) -> tuple[Figure, dict]:
    by_d, at_talk_setting, stats = {}, {}, {"runs": {}}  # per d: our rows, then the talk's once
    entries = [(run, (run,)) for run in params.runs] + [(label, tuple(rs)) for label, rs in params.split_groups]
    for run, members in entries:
        an = _pooled(paths, members)
        d, q = int(an.attrs["d"]), int(an.attrs["q"])
        opts = {(cfg.runs[r].optimizer.name, cfg.runs[r].optimizer.lr, cfg.runs[r].optimizer.weight_decay)
                for r in members}
        if len(opts) > 1:
            raise ValueError(f"split group {run!r}: its runs differ in optimizer, lr or weight decay: {sorted(opts)}")
        opt = cfg.runs[members[0]].optimizer
        wd = opt.weight_decay
        cells, numbers = run_row(an)
        solved = f"{int(an.solved.sum())}/{an.sizes['seed']}"
        by_d.setdefault(d, []).append([f"ours ({run})", str(d), str(q), f"{wd:g}", solved, *cells])
        talk_setting = q == TALK_SETTING["q"] and np.isclose(wd, TALK_SETTING["weight_decay"])
        at_talk_setting[d] = at_talk_setting.get(d, False) or bool(talk_setting)
        stats["runs"][run] = {"d": d, "q": q, "weight_decay": wd, "solved": int(an.solved.sum()),
                              "seeds": int(an.sizes["seed"]), "columns": numbers, "talk_setting": bool(talk_setting),
                              "reference": dict(zip(TABLE, REFERENCE[d])) if d in REFERENCE else None,
                              "optimizer": opt.name, "lr": float(opt.lr), "n_freq": int(an.sizes["freq"]),
                              "per_seed": per_seed(an), "others_breakdown": others_breakdown(an),
                              "split_per_seed": len(members) > 1,
                              "members": list(members), "datasets": [cfg.runs[r].dataset for r in members]}
    rows = [row for d, ours in by_d.items() for row in ours + (
        [["talk" + ("" if at_talk_setting[d] else " (other q/wd)"), str(d), "512", "5e-05", "5 seeds", *REFERENCE[d]]]
        if d in REFERENCE else [])]
    write_table(COLUMNS, rows, outputs)
    stats["summary"] = "; ".join(
        f"d={s['d']} ({s['solved']}/{s['seeds']} seeds solved): not order-4/6 {fmt(**s['columns']['pct_not_46'])}%, "
        f"non-factorable order-4 {fmt(**s['columns']['nonfact_4'])}%, order-6 {fmt(**s['columns']['nonfact_6'])}%, "
        f"error x1e-2 order-4 {fmt(**s['columns']['err_4'])}, order-6 {fmt(**s['columns']['err_6'])}; types "
        + " / ".join(f"{s['columns'][f'sol_{t}']['mean']:.2f}" for t in ("nu_i*xi", "nu_i*syn_ab", "nu*syn", "other"))
        + (f" (talk: {', '.join(s['reference'].values())})" if s["reference"] else " (no talk value at this d)")
        + ("; 'others' by their factors' kinds: " + ", ".join(f"{k} {v}" for k, v in s["others_breakdown"].items())
           if s["others_breakdown"] else "")
        for s in stats["runs"].values())
    return table_figure(COLUMNS, rows, width=13, fontsize=6), stats


