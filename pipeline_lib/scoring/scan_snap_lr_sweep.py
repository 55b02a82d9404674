"""Scoring of figure scan_snap_lr_sweep's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.scan_snap_lr_sweep import REFERENCE_SEEDS, RELEASE, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Its declared claims on the cells of every panel (``stats[run]['cells']``)."""
    panels = {run: stats[run] for run in params.runs if isinstance(stats.get(run), dict)}
    by_lr = [(_series(p["cells"], "ratio", "lr_Z"), -1) for p in panels.values()]
    by_ratio = [(_series(p["cells"], "lr_Z", "ratio"), +1) for p in panels.values()]
    ones = {run: p for run, p in panels.items() if p["num_last"] == 1}
    one = [(_series(p["cells"], "lr_Z", "ratio"), +1) for p in ones.values()]
    return {"tian.scan_snap_lr_sweep.larger_lr_sparser": _monotone(by_lr, "smallest lr_Z", panels, ends=True),
            "tian.scan_snap_lr_sweep.larger_ratio_denser": _monotone(by_ratio, "eta_Y/eta_Z = 1", panels, ends=True),
            "tian.scan_snap_lr_sweep.larger_ratio_denser_num_last_1": (
                _monotone(one, "eta_Y/eta_Z = 1", ones) if one else claims.not_run("no num_last = 1 panel")),
            "tian.scan_snap_lr_sweep.entropies_match_release": _match_release(panels)}


def _series(cells: list[dict], group: str, along: str) -> list[list[float]]:
    """Cell means grouped by ``group``, each list ordered along ``along``."""
    out: dict = {}
    for c in sorted(cells, key=lambda c: c[along]):
        out.setdefault(c[group], []).append(c["mean"])
    return list(out.values())


def _monotone(groups: list, control: str, panels: dict, ends: bool = False) -> dict:
    """The share of series (of >= 2 cells) strictly monotone in the direction given with each group; with
    ``ends``, the share whose last cell (the largest value swept) lies beyond its first in that direction (the talk's
    "large ... leads to": large against small, not every step between)."""
    series = [(v, sign) for sers, sign in groups for v in sers if len(v) > 1]
    if not series:
        return claims.not_run("no series of two or more cells")
    pairs = (lambda v: [(v[0], v[-1])]) if ends else (lambda v: list(zip(v, v[1:])))
    k = sum(all(sign * (b - a) > 0 for a, b in pairs(v)) for v, sign in series)
    p, lo, hi = claims.rate(k, len(series))
    first = np.mean([v[0] for v, _ in series])
    init = np.mean([q["initial_entropy"] for q in panels.values()])
    return claims.score(p, (lo, hi), _seeds(panels), f"{control}: mean entropy {first:.3f}; untrained {init:.3f}; "
                        + claims.fmt_rate("series with the largest beyond the smallest" if ends else "monotone series", k, len(series)), claims.share_holds(k, len(series), of="series"))


def _match_release(panels: dict) -> dict:
    from scipy.special import ndtri  # the normal quantile (scipy.stats.norm.ppf's own)

    cells = [c for q in panels.values() for c in q["cells"] if c.get("reference") is not None]
    if not cells:
        return claims.not_run(f"no run is the setting of {RELEASE}")
    z = float(ndtri(1 - 0.025 / len(cells)))
    diffs = [c["mean"] - c["reference"] for c in cells]
    bounds = [z * np.sqrt(c["std"] ** 2 / c["n"] + c["reference_std"] ** 2 / REFERENCE_SEEDS) for c in cells]
    k = sum(abs(d) <= b for d, b in zip(diffs, bounds))  # cells whose difference lies within its bound
    p, lo, hi = claims.rate(k, len(cells))
    init = np.mean([q["initial_entropy"] for q in panels.values()])
    control = (f"none; untrained entropy {init:.3f}; mean difference {np.mean(diffs):+.3f}, mean |difference| "
               f"{np.mean(np.abs(diffs)):.3f} over {len(cells)} cells (z = {z:.2f})")
    return claims.score(p, (lo, hi), _seeds(panels), control, claims.share_holds(k, len(cells), of="cells"))


def _seeds(panels: dict) -> int | None:
    ns = [c["n"] for q in panels.values() for c in q["cells"]]
    return min(ns) if ns else None
