"""Diagnostic, outside the pipeline: does the project's CoGO type classification agree with the authors'?

The authors' classifier is facebookresearch/luckmatters ssl/real-dataset/cogo/factorize_sol.py
(load_model_traj -> analyze_solution -> summarize46). This script imports it from a checkout of that
repository (it copies nothing), with three shims so that it runs here: a stub ``tensorboardX`` (imported by
its common_utils, never used by the classifier), ``common_utils.print_info``/``set_all_seeds`` (which its
training script calls), and ``.cuda()`` as a no-op (its training script assumes a GPU).

  python docs/diagnostics/cogo_authors_classifier.py ours LUCKMATTERS RESULTS RUN [RUN ...]
      the authors' classifier on this project's saved weights (final snapshot, solved seeds)
  python docs/diagnostics/cogo_authors_classifier.py theirs LUCKMATTERS FOLDER [FOLDER ...]
      both classifiers on models trained by the authors' modular_addition_simple2.py (the last model*.pt)

Training with the authors' script (needs hydra-core; run with PYTHONPATH=<shim dir printed by 'shims'>):
  python LUCKMATTERS/ssl/real-dataset/cogo/modular_addition_simple2.py activation=sqr loss_func=mse
      num_epochs=10000 weight_decay=5e-5 hidden_size=512 learning_rate=0.01 M=23 test_size=0.1
      save_interval=100 seed=S hydra.run.dir=FOLDER
(the settings of luckmatters ssl/real-dataset/cogo/sweep.log at q = 512, wd = 5e-5, d = 23).

``--keep`` (after the mode) also writes what the mode printed as the tables of ``cogo_types.md``, beside this
file in ``kept/``, from which ``python -m pipeline_lib publish`` fills that page: ``ours`` keeps the types by both
classifiers (``cogo_types_ours.json``, with the per-seed shares that ``theirs`` compares with) and the factor
kinds with their distances to the syn form (``cogo_types_factors.json``); ``theirs`` keeps the types of the
authors' models by seed group, with a permutation test against the kept ``ours`` (``cogo_types_theirs.json``).
"""
from __future__ import annotations

import collections
import contextlib
import glob
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

KEPT = Path(__file__).resolve().parent / "kept"
SPLIT = ("sol_4_4cxi", "sol_6_4csynab", "sol_6_nusyn", "sol_others")  # the authors' names of the four types
NAMES = {"sol_4_4cxi": "z_nu=i * z_xi", "sol_6_4csynab": "z_nu=i * z_syn,ab", "sol_6_nusyn": "z_nu * z_syn",
         "sol_others": "others"}
OURS = dict(zip(SPLIT, ("nu_i*xi", "nu_i*syn_ab", "nu*syn", "other")))  # the project's (analysis.fourier.TYPES)

SHIMS = {
    "tensorboardX/__init__.py": "class SummaryWriter:\n    def __init__(self, *a, **k):\n        pass\n",
    "sitecustomize.py": ("try:\n    import torch\n    torch.Tensor.cuda = lambda self, *a, **k: self\n"
                         "    torch.nn.Module.cuda = lambda self, *a, **k: self\nexcept Exception:\n    pass\n"),
    "common_utils/__init__.py": (
        "import importlib.util, os, sys\n_real = os.environ['LUCK_COMMON_UTILS']\n"
        "_spec = importlib.util.spec_from_file_location('_real_common_utils', os.path.join(_real, '__init__.py'),\n"
        "                                               submodule_search_locations=[_real])\n"
        "_mod = importlib.util.module_from_spec(_spec); sys.modules['_real_common_utils'] = _mod\n"
        "_spec.loader.exec_module(_mod)\n"
        "globals().update({k: v for k, v in vars(_mod).items() if not k.startswith('__')})\n"
        "from _real_common_utils.helper import set_all_seeds\n"
        "def print_info(args=None):\n    return f'args: {args}'\n"),
}


def shims(luck: str) -> str:
    """Write the shims into a temporary folder, put it and the authors' folders on the path; return it."""
    root = tempfile.mkdtemp(prefix="cogo_shims_")
    for rel, text in SHIMS.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
        with open(os.path.join(root, rel), "w") as fh:
            fh.write(text)
    os.environ["LUCK_COMMON_UTILS"] = os.path.join(luck, "ssl", "common_utils")
    sys.path[:0] = [root, os.path.join(luck, "ssl", "real-dataset", "cogo")]
    return root


def authors(folder: str, index: int):
    import factorize_sol as fs

    with contextlib.redirect_stdout(io.StringIO()):
        As, Bs, Cs, _, _ = fs.load_model_traj(folder, indices=[index])
        stats = fs.analyze_solution(As[:, :, -1], Bs[:, :, -1], Cs[:, :, -1])
        return stats, fs.summarize46(stats)


def pairs_of(stats: dict) -> collections.Counter:
    out = collections.Counter()
    for q in (4, 6):
        for key, v in stats[f"stats{q}"].items():
            if isinstance(key, tuple):
                out[(q, *key)] += len(v)
    return out


def report(label: str, agg: dict, pairs: collections.Counter) -> None:
    print(f"{label}: {len(agg['sol_6_nusyn'])} seeds; mean +- std over seeds, % of factorable frequencies")
    for k in SPLIT:
        v = 100 * np.array(agg[k])
        print(f"  {k}: {v.mean():.2f} +- {v.std():.2f}")
    for k, v in pairs.most_common():
        print("  ", k, v)


def syn_distance(comp: np.ndarray) -> float:
    """How far an order-3 factor lies from the constructed syn form, as ``classify`` measures it: the smallest
    tolerance at which it would call the factor syn (the larger of its two columns' distances to (omega,
    omega-bar), over sqrt 3), found by bisection on ``classify`` itself rather than by restating its arithmetic."""
    from pipeline_lib.analysis.fourier import classify

    low, high = 0.0, 10.0
    if classify(comp, high) != "order-3-syn":
        return float("inf")
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if classify(comp, mid) == "order-3-syn" else (mid, high)
    return high


def project_classes(W_a, W_b, W_c) -> tuple[dict, collections.Counter, list]:
    """The project's classifier (``pipeline_lib.analysis.fourier.analyse`` at its default threshold and tolerance)
    on one model: its table row, its factorable frequencies' kind pairs (counted as the authors' ``pairs_of``
    counts theirs) and, per factorable order-6 frequency whose second factor is of order 3, (kind pair, solution
    type, distance of that factor to syn)."""
    from pipeline_lib.analysis.fourier import (
        FACTOR_KINDS,
        TYPES,
        Params,
        analyse,
        fourier_coefficients,
        node_frequencies,
        split_factors,
        table_row,
    )

    prm = Params()
    A, B, C = fourier_coefficients(W_a, W_b, W_c)
    res = analyse(A, B, C, prm.threshold, prm.tolerance)
    row = table_row(*(res[k] for k in ("q_k", "fact_error", "factorable", "sol_type")))
    node_k = node_frequencies(A, prm.threshold)
    pairs, factors = collections.Counter(), []
    for k in np.flatnonzero(res["factorable"] == 1) + 1:
        kinds = tuple(FACTOR_KINDS[int(res[f"factor_kind_{i}"][k - 1])] for i in (2, 3))
        pairs[(int(res["q_k"][k - 1]), *sorted(kinds))] += 1
        if res["q_k"][k - 1] == 6 and kinds[1].startswith("order-3"):
            nodes = np.flatnonzero(node_k == k)
            F = np.stack([A[k, nodes], B[k, nodes], C[k, nodes]])
            factors.append((" x ".join(kinds), TYPES[int(res["sol_type"][k - 1])], syn_distance(split_factors(F)[1])))
    return row, pairs, factors


def mean_sem(v) -> str:
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.2f} ± {v.std(ddof=1) / np.sqrt(len(v)):.2f}" if len(v) > 1 else f"{v.mean():.2f}"


def keep_table(name: str, columns: list, rows: list, extra: dict | None = None) -> None:
    from pipeline_lib.build.kept_tables import keep

    print("kept", keep(KEPT / name, columns, rows, ["python", "docs/diagnostics/cogo_authors_classifier.py"]
                       + [a if not os.path.isabs(a) else os.path.basename(a.rstrip("/")) for a in sys.argv[1:]],
                       extra=extra))


def classify_thres() -> float:
    """The tolerance at which ``classify`` calls an order-3 factor syn (its own default, which ``factorise_kinds``
    uses)."""
    import inspect

    from pipeline_lib.analysis.fourier import classify

    return inspect.signature(classify).parameters["thres"].default


def ours(luck: str, results: str, runs: list[str], keep: bool = False) -> None:
    import torch
    import xarray as xr

    agg, pairs, mine = collections.defaultdict(list), collections.Counter(), collections.defaultdict(list)
    agree = total = total_theirs = 0
    factors, d = [], None
    tmp = tempfile.mkdtemp(prefix="cogo_models_")
    for run in runs:
        w = xr.open_dataset(f"{results}/runs/{run}/weights.h5", engine="h5netcdf")
        t = xr.open_dataset(f"{results}/runs/{run}/trajectory.h5", engine="h5netcdf")
        for s in w.seed.values:
            last = t.sel(seed=s).isel(epoch=-1)
            if not (float(last.train_acc) >= 1 and float(last.test_acc) >= 1):
                continue
            folder = os.path.join(tmp, f"{run}_{s}")
            os.makedirs(folder)
            W = {x: w[f"W_{x}"].isel(snapshot=-1).sel(seed=s).values for x in "abc"}
            d = W["a"].shape[1]
            model = {f"layer{x}.weight": torch.tensor(W[x]) for x in "abc"}
            torch.save({"model": model, "results": [{"epoch": int(w.snapshot.values[-1])}]}, f"{folder}/model00001.pt")
            stats, res = authors(folder, 1)
            for k, v in res.items():
                agg[k].append(float(v[0]))
            theirs_pairs = pairs_of(stats)
            pairs += theirs_pairs
            row, our_pairs, found = project_classes(*(W[x].astype(np.float64) for x in "abc"))
            for k in SPLIT:
                mine[k].append(row[f"sol_{OURS[k]}"])
            agree += sum((our_pairs & theirs_pairs).values())
            total, total_theirs = total + sum(our_pairs.values()), total_theirs + sum(theirs_pairs.values())
            factors += found
    report("the authors' classifier on this project's weights", agg, pairs)
    print(f"factorable frequencies: {total} (project), {total_theirs} (authors); the same kind pair, matched per "
          f"seed as multisets: {agree}")
    if not keep:
        return
    n = len(agg["sol_6_nusyn"])
    rows = [[f"{NAMES[k]}, mean % over seeds", f"{np.mean(mine[k]):.2f}", f"{100 * np.mean(agg[k]):.2f}"]
            for k in SPLIT]
    rows += [["factorable frequencies, all seeds", str(total), str(total_theirs)],
             ["of which both classifiers give the same pair of factor kinds (matched per seed, as multisets: the "
              "authors' record keeps no frequency index)", str(agree), str(agree)]]
    keep_table("cogo_types_ours.json", [f"d = {d}, {n} seeds that solved the task", "the project's classifier",
                                        "the authors' classifier"], rows,
               {"per_seed": {NAMES[k]: [round(float(v), 4) for v in mine[k]] for k in SPLIT},
                "per_seed_authors": {NAMES[k]: [round(100 * v, 4) for v in agg[k]] for k in SPLIT}})
    by = collections.defaultdict(list)
    for pair, kind, dist in factors:
        by[(pair, kind)].append(dist)
    thres = classify_thres()
    rows = [[pair, kind, str(len(x)), f"{min(x):.3f}", f"{max(x):.3f}", str(sum(v >= thres for v in x))]
            for (pair, kind), x in sorted(by.items(), key=lambda kv: (kv[0][1] != "nu*syn", kv[0]))]
    keep_table("cogo_types_factors.json", ["factor kinds (order 2 x order 3)", "solution type", "frequencies",
                                           "syn distance: least", "syn distance: most",
                                           f"at or beyond the syn tolerance {thres}"], rows)


def permutation_p(a, b, draws: int = 20000) -> float:
    """Two-sided permutation test of the difference of two means (a fixed generator: the same p on every run)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    both, rng = np.concatenate([a, b]), np.random.default_rng(0)
    seen = abs(a.mean() - b.mean())
    hits = 0
    for _ in range(draws):
        x = rng.permutation(both)
        hits += abs(x[:len(a)].mean() - x[len(a):].mean()) >= seen - 1e-12
    return (hits + 1) / (draws + 1)


TALK_SEEDS = {1, 2, 3, 4, 5}  # luckmatters ssl/real-dataset/cogo/sweep.log at ba2de90: "seed=1,2,3,4,5"


def run_seed(folder: str) -> int:
    """The seed a run of the authors' script was given (its hydra record)."""
    import yaml

    with open(os.path.join(folder, ".hydra", "config.yaml")) as fh:
        return int(yaml.safe_load(fh)["seed"])


def theirs(luck: str, folders: list[str], keep: bool = False) -> None:
    import torch

    agg, pairs, mine = collections.defaultdict(list), collections.Counter(), collections.defaultdict(list)
    seeds, unsolved = [], []
    for seed, folder in sorted((run_seed(f), f) for f in folders):
        last = sorted(glob.glob(os.path.join(folder, "model*.pt")))[-1]
        saved = torch.load(last, map_location="cpu")
        end = saved["results"][-1]
        if not (float(end["train_acc"]) >= 1 and float(end["test_acc"]) >= 1):  # as `ours`: solved seeds only
            unsolved.append(seed)
            continue
        seeds.append(seed)
        stats, res = authors(folder, int(os.path.basename(last)[5:10]))
        for k, v in res.items():
            agg[k].append(float(v[0]))
        pairs += pairs_of(stats)
        row, _, _ = project_classes(*(saved["model"][f"layer{x}.weight"].double().numpy() for x in "abc"))
        for k in SPLIT:
            mine[k].append(row[f"sol_{OURS[k]}"])
    report("the authors' classifier on models of the authors' script", agg, pairs)
    print(f"seeds {seeds}; not solved (left out): {unsolved}")
    print("the project's classifier on the same models: mean +- std over seeds")
    for k, v in mine.items():
        print(f"  {NAMES[k]}: {np.mean(v):.2f} +- {np.std(v):.2f}")
    if not keep:
        return
    kept = KEPT / "cogo_types_ours.json"
    project = json.loads(kept.read_text()) if kept.exists() else None
    talk = np.array([s in TALK_SEEDS for s in seeds])
    group = lambda v, sel: mean_sem(np.asarray(v)[sel]) if sel.any() else "-"  # noqa: E731
    columns = ["type, % (mean ± standard error over seeds)",
               f"authors' script, the talk's seeds {sorted(set(seeds) & TALK_SEEDS)}",
               f"its other seeds {sorted(set(seeds) - TALK_SEEDS)}", f"all {len(seeds)} seeds",
               "the project's classifier on the same models (all)"]
    if project:
        n = len(project["per_seed"]["others"])
        columns += [f"this project's {n} seeds (authors' classifier)", "permutation p, authors' classifier on both",
                    f"this project's {n} seeds (project's classifier)", "permutation p, project's classifier on both"]
    rows = []
    for k in SPLIT:
        v = 100 * np.array(agg[k])
        row = [NAMES[k], group(v, talk), group(v, ~talk), mean_sem(v), mean_sem(mine[k])]
        if project:
            a, b = project["per_seed_authors"][NAMES[k]], project["per_seed"][NAMES[k]]
            row += [mean_sem(a), f"{permutation_p(v, a):.3f}", mean_sem(b), f"{permutation_p(mine[k], b):.3f}"]
        rows.append(row)
    extra = {"seeds": seeds, "not_solved": unsolved}
    if project:
        extra["compared_with"] = {k: project[k] for k in ("command", "date", "machine") if k in project}
    keep_table("cogo_types_theirs.json", columns, rows, extra)


if __name__ == "__main__":
    keep = "--keep" in sys.argv
    args = [a for a in sys.argv if a != "--keep"]
    mode, luck = args[1], args[2]
    print("shims in", shims(luck))
    if mode == "ours":
        ours(luck, args[3], args[4:], keep)
    elif mode == "theirs":
        theirs(luck, args[3:], keep)
    elif mode != "shims":
        sys.exit(f"unknown mode {mode!r}: ours, theirs or shims")
