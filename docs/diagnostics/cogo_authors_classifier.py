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
"""
from __future__ import annotations

import collections
import contextlib
import glob
import io
import os
import sys
import tempfile

import numpy as np

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
    for k in ("sol_4_4cxi", "sol_6_4csynab", "sol_6_nusyn", "sol_others"):
        v = 100 * np.array(agg[k])
        print(f"  {k}: {v.mean():.2f} +- {v.std():.2f}")
    for k, v in pairs.most_common():
        print("  ", k, v)


def ours(luck: str, results: str, runs: list[str]) -> None:
    import torch
    import xarray as xr

    agg, pairs = collections.defaultdict(list), collections.Counter()
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
            model = {f"layer{x}.weight": torch.tensor(w[f"W_{x}"].isel(snapshot=-1).sel(seed=s).values) for x in "abc"}
            torch.save({"model": model, "results": [{"epoch": int(w.snapshot.values[-1])}]}, f"{folder}/model00001.pt")
            stats, res = authors(folder, 1)
            for k, v in res.items():
                agg[k].append(float(v[0]))
            pairs += pairs_of(stats)
    report("the authors' classifier on this project's weights", agg, pairs)


def theirs(luck: str, folders: list[str]) -> None:
    import torch

    from pipeline_lib.analysis.fourier import TYPES, analyse, fourier_coefficients, table_row

    agg, pairs, mine = collections.defaultdict(list), collections.Counter(), collections.defaultdict(list)
    for folder in folders:
        last = sorted(glob.glob(os.path.join(folder, "model*.pt")))[-1]
        stats, res = authors(folder, int(os.path.basename(last)[5:10]))
        for k, v in res.items():
            agg[k].append(float(v[0]))
        pairs += pairs_of(stats)
        m = torch.load(last, map_location="cpu")["model"]
        A, B, C = fourier_coefficients(*(m[f"layer{x}.weight"].double().numpy() for x in "abc"))
        row = table_row(*(analyse(A, B, C, 0.05, 0.1)[k] for k in ("q_k", "fact_error", "factorable", "sol_type")))
        for t in TYPES:
            mine[t].append(row[f"sol_{t}"])
    report("the authors' classifier on models of the authors' script", agg, pairs)
    print("the project's classifier on the same models: mean +- std over seeds")
    for t, v in mine.items():
        print(f"  {t}: {np.mean(v):.2f} +- {np.std(v):.2f}")


if __name__ == "__main__":
    mode, luck = sys.argv[1], sys.argv[2]
    print("shims in", shims(luck))
    if mode == "ours":
        ours(luck, sys.argv[3], sys.argv[4:])
    elif mode == "theirs":
        theirs(luck, sys.argv[3:])
    elif mode != "shims":
        sys.exit(f"unknown mode {mode!r}: ours, theirs or shims")
