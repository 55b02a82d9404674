"""Golden runs: the digests of every artifact of a results folder, what moved between two of them, and the
machine they were written on.

A digest is, per data variable of each HDF5 artifact (datasets, trajectories, weights, analyses) and per
numeric leaf of each figure's sidecar, four numbers: the size, the mean, the mean absolute value and the
root mean square. With the artifact it keeps the stage that wrote it and that stage's code hash (from
the provenance), so a comparison can say which stage moved and whether its code changed.

Floating point is not the same on every machine: the vector width a kernel takes (torch's CPU capability,
numpy's SIMD dispatch), the BLAS and its code path, the thread count and the library versions each move
the last bits of a result, and a few epochs of training carry them further. So the digests file records
the *fingerprint* of the machine that wrote it (:func:`fingerprint`) and, per variable, its *spread*: how
far that variable's digest moved when the test config was rerun on the writing machine with its kernels
forced elsewhere (:data:`PERTURBATIONS`: another vector width for torch and for numpy, MKL's conditional
numerical reproducibility modes, one thread instead of two). Two comparisons follow:

- :func:`compare`, on a machine with the writing fingerprint: every number at a relative 1e-4 (far above a
  rerun's own noise there, which is none: the runs are deterministic), so any change of a formula or a
  hyperparameter fails, naming the stage.
- :func:`compare_across`, on any machine: a variable of an artifact that no perturbation moved is compared
  as exactly as the digest's own arithmetic allows (1e-9); one that moved by a spread s at most
  :data:`CROSS_FACTOR` times s (a variable that did not move, beside others of its artifact that did, takes
  their largest spread); one that moved by so much that the factor leaves no test (s >= :data:`CHAOTIC`: a
  per-seed outcome that flips with the last bits of a kernel) by its size alone, and the comparison names
  every such variable, so that nothing passes silently.

``tests/test_golden.py`` runs the first where the fingerprint is the writer's (and says why it skips it
elsewhere) and the second everywhere. ``python -m pipeline_lib golden --write --measure`` reruns the test
config under each perturbation and writes the digests with their spread.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .fingerprint import PERTURBATIONS, fingerprint, fingerprint_diff, measure, perturbation_env, run_test_config
from .store import read_dataset

__all__ = ["PERTURBATIONS", "compare", "compare_across", "deviation", "digest", "fingerprint", "fingerprint_diff",
           "deviations", "identical", "load", "measure", "run_test_config", "spread", "spread_report", "tolerance", "write"]

# Agreement of two digests on the writing machine: |a - b| <= RTOL * max(|a|, |b|) + ATOL_SCALE * (the
# variable's mean |x|). 1e-4: the test config's runs are short (a few epochs) and deterministic on one
# machine, while a change of any hyperparameter or formula moves some statistic of some artifact past it.
RTOL = 1e-4
ATOL_SCALE = 1e-6
# Across machines (compare_across): deviations are measured relative to the variable's root mean square
# (a mean near 0 would make any relative test of it fragile). A variable no perturbation moved is held to
# the digest's own arithmetic (sums of the same values in another SIMD order); one that moved, to
# CROSS_FACTOR times its spread (another CPU's last bits enter at other places than the perturbations', but
# are of the same size, and training amplifies them alike: two orders of magnitude of margin); one whose
# spread reaches CHAOTIC is checked by its size only (the factor would leave no test). A variable that moved
# is held to no less than CROSS_FLOOR of its rms (8 float32 units in the last place, the artifacts' storage
# precision): below that, six perturbations do not bound every CPU's rounding (seen: a d=2 run's MLP bias,
# spread 1e-10, moved 1.4e-8 on another x86 CPU with the same libraries), while any change of a formula or a
# hyperparameter moves trained weights by orders of magnitude more.
EXACT = 1e-9
CROSS_FACTOR = 100.0
CROSS_FLOOR = 8 * 2.0**-23  # 9.5e-7
CHAOTIC = 1e-3


# -- digests ----------------------------------------------------------------------------------------------------

def _stats(values: np.ndarray) -> list[float]:
    x = np.asarray(values, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [0, 0.0, 0.0, 0.0]
    return [int(x.size), float(x.mean()), float(np.abs(x).mean()), float(np.sqrt((x * x).mean()))]


def _stage(rel: str) -> str:
    parts = rel.split("/")
    if parts[0] == "datasets":
        return f"dataset {Path(parts[1]).stem}"
    if parts[0] == "runs":
        return f"train {parts[1]}"
    if parts[0] == "analysis":
        return f"{parts[1]} {Path(parts[2]).stem}"
    return f"figure {Path(parts[-1]).stem}"


def _h5_digest(path: Path) -> tuple[dict[str, list[float]], str]:
    with read_dataset(path) as ds:
        out = {}
        for name in sorted([*ds.data_vars, *ds.coords]):
            arr = ds[name].values
            if arr.dtype.kind in "biuf":
                out[name] = _stats(arr)
        code = str(ds.attrs.get("code_hash", ""))
    return out, code


def _leaves(node: Any, prefix: str, out: dict[str, list]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "provenance":
                _leaves(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(node, list) and node and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  or v is None for v in node):
        out.setdefault(prefix, []).extend(np.nan if v is None else v for v in node)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _leaves(v, f"{prefix}[{i}]", out)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        out.setdefault(prefix, []).append(node)


def _json_digest(path: Path) -> tuple[dict[str, list[float]], str]:
    side = json.loads(path.read_text())
    leaves: dict[str, list] = {}
    _leaves(side, "", leaves)
    return {k: _stats(np.array(v, dtype=np.float64)) for k, v in sorted(leaves.items())}, \
        side.get("provenance", {}).get("code_hash", "")


def digest(results: Path) -> dict[str, dict]:
    """``relative path -> {"stage", "code", "vars": {name: [size, mean, mean |x|, rms]}}`` for every
    artifact of a results folder (a replicate's subfolder excluded)."""
    results = Path(results)
    out = {}
    files = sorted(p for p in results.rglob("*.h5") if "replication" not in p.relative_to(results).parts)
    files += sorted((results / "figures").glob("*.json"))
    for path in files:
        rel = path.relative_to(results).as_posix()
        values, code = (_h5_digest if path.suffix == ".h5" else _json_digest)(path)
        out[rel] = {"stage": _stage(rel), "code": code, "vars": values}
    return out


# -- comparisons ------------------------------------------------------------------------------------------------

def _close(a: list[float], b: list[float]) -> bool:
    if a[0] != b[0]:
        return False
    scale = ATOL_SCALE * max(abs(a[2]), abs(b[2]))
    return all(math.isclose(x, y, rel_tol=RTOL, abs_tol=scale) for x, y in zip(a[1:], b[1:]))


def deviation(a: list[float], b: list[float]) -> float:
    """How far two digests of one variable lie apart, relative to its root mean square: the largest
    difference of mean, mean |x| and rms over the larger rms (inf where the sizes differ)."""
    if a[0] != b[0]:
        return math.inf
    scale = max(abs(a[3]), abs(b[3]))
    diff = max(abs(x - y) for x, y in zip(a[1:], b[1:]))
    if scale == 0:
        return 0.0 if diff == 0 else math.inf
    return diff / scale


def _line(rel: str, stage: str, moved: list[str]) -> str:
    return f"{rel} (stage {stage}): " + (", ".join(moved[:5]) + (" ..." if len(moved) > 5 else "")
                                         if moved else "no number moved")


def compare(golden: dict[str, dict], current: dict[str, dict]) -> dict[str, list[str]]:
    """What differs, by kind: ``moved`` (numbers moved, code hash the same: a failure), ``changed``
    (code hash and numbers both changed: digests to rewrite if intended), ``unmoved`` (code hash changed,
    numbers did not: a refactor to record as equivalent), ``missing`` / ``new`` artifacts."""
    out: dict[str, list[str]] = {"moved": [], "changed": [], "unmoved": [], "missing": [], "new": []}
    for rel in sorted(set(golden) | set(current)):
        if rel not in current:
            out["missing"].append(f"{rel} ({golden[rel]['stage']})")
            continue
        if rel not in golden:
            out["new"].append(f"{rel} ({current[rel]['stage']})")
            continue
        g, c = golden[rel], current[rel]
        moved = sorted(v for v in set(g["vars"]) | set(c["vars"])
                       if v not in g["vars"] or v not in c["vars"] or not _close(g["vars"][v], c["vars"][v]))
        line = _line(rel, c["stage"], moved)
        if g["code"] == c["code"]:
            if moved:
                out["moved"].append(line)
        elif moved:
            out["changed"].append(line)
        else:
            out["unmoved"].append(line)
    return out


def tolerance(spread: float | None) -> float | None:
    """The cross-machine tolerance of a variable with this measured spread (None: its size alone is
    checked; a spread of None means it was never measured)."""
    if spread is None or spread >= CHAOTIC:
        return None
    return EXACT if spread == 0 else max(CROSS_FLOOR, CROSS_FACTOR * spread)


def compare_across(golden: dict[str, dict], current: dict[str, dict], measured: bool = True) -> dict[str, list[str]]:
    """What differs beyond what another machine explains, by kind: ``moved`` (past the tolerance of the
    variable's spread, code hash the same), ``changed`` (the same, code hash changed), ``missing`` / ``new``
    artifacts or variables; and what was checked how: ``exact`` / ``within`` (counts of variables, as one
    line each) and ``size_only`` (every variable checked by its size alone: chaotic, or ``measured`` False:
    digests written without their spread)."""
    out: dict[str, list[str]] = {"moved": [], "changed": [], "missing": [], "new": [], "size_only": []}
    exact = within = 0
    for rel in sorted(set(golden) | set(current)):
        if rel not in current or rel not in golden:
            out["missing" if rel not in current else "new"].append(f"{rel} ({(golden.get(rel) or current[rel])['stage']})")
            continue
        g, c = golden[rel], current[rel]
        spreads = g.get("spread", {})
        # a variable no perturbation moved, in an artifact where others moved, takes the artifact's largest
        # spread (short of chaotic): what moved its neighbours can reach it on a CPU the perturbations missed
        floor = min(max(spreads.values(), default=0.0), CHAOTIC / 2)
        moved, loose = [], []
        for v in sorted(set(g["vars"]) | set(c["vars"])):
            if v not in g["vars"] or v not in c["vars"]:
                moved.append(v)
                continue
            tol = tolerance(spreads.get(v) or floor if measured else None)
            dev = deviation(g["vars"][v], c["vars"][v])
            if tol is None:
                loose.append(v)
                if g["vars"][v][0] != c["vars"][v][0]:
                    moved.append(v)
            elif dev > tol:
                moved.append(f"{v} ({dev:.1e} > {tol:.0e})")
            elif tol == EXACT:
                exact += 1
            else:
                within += 1
        if moved:
            out["moved" if g["code"] == c["code"] else "changed"].append(_line(rel, c["stage"], moved))
        if loose:
            out["size_only"].append(_line(rel, c["stage"], loose).replace("no number moved", ""))
    out["exact"] = [f"{exact} variables equal within {EXACT:.0e} of their rms (no perturbation moved them)"]
    out["within"] = [f"{within} variables within {CROSS_FACTOR:.0f}x their measured spread"]
    return out


def deviations(base: dict[str, dict], other: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Per artifact and variable of ``base``, its :func:`deviation` in ``other`` (inf where ``other`` lacks it)."""
    return {rel: {var: deviation(stats, other[rel]["vars"][var]) if rel in other and var in other[rel]["vars"]
                  else math.inf for var, stats in art["vars"].items()} for rel, art in base.items()}


def spread(devs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per artifact, the largest of each variable's :func:`deviations` over the perturbed reruns; variables
    that none moved are left out (a size that changed counts as 1, the largest finite spread)."""
    out: dict[str, dict[str, float]] = {}
    for rel in (devs[0] if devs else {}):
        for var in devs[0][rel]:
            worst = max(d[rel][var] for d in devs)
            if worst > 0:
                out.setdefault(rel, {})[var] = float(f"{worst:.3g}") if math.isfinite(worst) else 1.0
    return out


# provenance that differs between two runs of the same numbers (the code, the time, the inputs' file digests)
_RUN_ATTRS = frozenset({"config_json", "config_hash", "inputs_json", "code_hash", "pipeline_lib_version", "git_commit",
                        "torch_version", "library_versions", "device", "created_at"})


def identical(before: Path, after: Path, only: str = "") -> dict[str, list[str]]:
    """Bit-level comparison of two results folders (a restructure's before and after): every data
    variable, coordinate and attribute (other than the provenance and timings of the run itself) of every HDF5
    artifact present in ``before`` (under ``only``, e.g. ``runs``) must be equal in ``after``, NaN where
    NaN, and every figure sidecar's statistics and claims (verdicts and their strings) too. By kind:
    ``differ`` (artifact: what differs), ``missing`` (in ``before`` only), ``same`` (artifacts equal)."""
    before, after = Path(before), Path(after)
    out: dict[str, list[str]] = {"differ": [], "missing": [], "same": []}
    for path in sorted([*(before / only).rglob("*.h5"), *(before / only).glob("**/figures/*.json")]):
        rel = path.relative_to(before).as_posix()
        if not (after / rel).exists():
            out["missing"].append(rel)
            continue
        bad = _h5_differences(path, after / rel) if path.suffix == ".h5" else _sidecar_differences(path, after / rel)
        out["differ" if bad else "same"].append(f"{rel}: {', '.join(bad)}" if bad else rel)
    return out


def _h5_differences(a_path: Path, b_path: Path) -> list[str]:
    with read_dataset(a_path) as a, read_dataset(b_path) as b:
        names = sorted({*a.data_vars, *a.coords} | {*b.data_vars, *b.coords})
        bad = [n for n in names if n not in a or n not in b
               or not np.array_equal(a[n].values, b[n].values, equal_nan=a[n].dtype.kind in "fc")
               or _attrs(a[n].attrs) != _attrs(b[n].attrs)]
        if _attrs(a.attrs) != _attrs(b.attrs):
            bad.append("attrs: " + ", ".join(sorted(k for k in {*_attrs(a.attrs), *_attrs(b.attrs)}
                                                    if _attrs(a.attrs).get(k) != _attrs(b.attrs).get(k))))
    return bad


def _attrs(attrs: dict) -> dict:
    """Attributes as comparable values (arrays as lists), the run's own provenance and its timings (``seconds``,
    ``seconds_*``: how long a job took, not what it computed) left out."""
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in attrs.items()
            if k not in _RUN_ATTRS and k != "seconds" and not k.startswith("seconds_")}


def _sidecar_differences(a_path: Path, b_path: Path) -> list[str]:
    a, b = (json.loads(Path(p).read_text()) for p in (a_path, b_path))
    return [k for k in ("stats", "claims") if a.get(k) != b.get(k)]


# -- the digests file -------------------------------------------------------------------------------------------

def load(path: Path) -> dict[str, Any]:
    """The digests file: ``{"fingerprint", "perturbations", "artifacts"}`` (``artifacts``: :func:`digest`'s
    mapping, each artifact with its ``spread``)."""
    doc = json.loads(Path(path).read_text())
    if "artifacts" not in doc or "fingerprint" not in doc:
        raise ValueError(f"{path}: not a digests file with a fingerprint (rewrite it with `python -m pipeline_lib "
                         "golden --write --measure`)")
    return doc


def _stage_kind(rel: str) -> str:
    parts = rel.split("/")
    return {"datasets": "datasets", "runs": "training", "figures": "figure sidecars"}.get(parts[0], f"analysis {parts[1]}")


def spread_report(devs: dict[str, dict[str, dict[str, float]]]) -> str:
    """Markdown: per kind of stage and perturbation (name -> its :func:`deviations`), how many artifacts moved
    at all and the largest deviation of a variable (relative to its rms), with the artifacts that moved most."""
    names = list(devs)
    base = devs[names[0]]
    kinds = sorted({_stage_kind(rel) for rel in base})
    lines = ["# How far each stage of the test config moves when the kernels change", "",
             "Generated by `python -m pipeline_lib golden --write --measure`: the test config rerun on the machine "
             "that wrote the digests with its kernels forced elsewhere. Per kind of stage and perturbation: "
             "artifacts moved / artifacts, and the largest deviation of a variable's digest (its mean, mean |x| "
             "or rms, over its rms). 0: bit-identical digests; around 1e-7: last bits; 1e-3 and above: a "
             "per-seed outcome moved (checked by size only across machines).", "",
             "| stage | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    worst: dict[str, float] = {}
    for kind in kinds:
        rels = [r for r in base if _stage_kind(r) == kind]
        cells = []
        for name in names:
            moved = {r: max(devs[name][r].values(), default=0.0) for r in rels}
            for r, d in moved.items():
                worst[r] = max(worst.get(r, 0.0), d)
            top = max(moved.values(), default=0.0)
            cells.append(f"{sum(d > 0 for d in moved.values())}/{len(rels)}, max {top:.1e}" if top else f"0/{len(rels)}")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", "Artifacts that moved by 1e-3 of their rms or more under some perturbation:", ""]
    lines += [f"- `{r}`: {d:.2g}" for r, d in sorted(worst.items(), key=lambda x: -x[1]) if d >= CHAOTIC] or ["- none"]
    return "\n".join(lines) + "\n"


def write(results: Path, path: Path, perturbed: dict[str, Path] | None = None) -> int:
    """Write the digests of ``results`` with this machine's fingerprint and, from the results folders of
    ``perturbed`` (name -> folder, the same config rerun under :data:`PERTURBATIONS`), each variable's spread,
    with :func:`spread_report` beside it (``<path stem>_spread.md``). One artifact a line, so that a diff
    names it."""
    data = digest(results)
    perturbed = perturbed or {}
    devs = {name: deviations(data, digest(p)) for name, p in perturbed.items()}
    spreads = spread(list(devs.values()))
    if devs:
        path.with_name(path.stem + "_spread.md").write_text(spread_report(devs))
    for rel, art in data.items():
        art["spread"] = spreads.get(rel, {})
    head = {"fingerprint": fingerprint(), "perturbations": {
        name: next(({"env": perturbation_env(env), "cores": cores} for n, env, cores in PERTURBATIONS if n == name), {})
        for name in perturbed}}
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{json.dumps(rel)}: {json.dumps(data[rel], sort_keys=True)}" for rel in sorted(data)]
    path.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in head.items())
                    + ',\n"artifacts": {\n' + ",\n".join(lines) + "\n}\n}\n")
    return len(data)
