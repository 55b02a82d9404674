"""Scoring of figure scan_snap_transition's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.scan_snap_transition import SLOPE_TOLERANCE, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Its declared claims: the exponent of eta_Y, and the equal-eta_Y pairs."""
    slope = stats.get("slope") or {}
    pairs = stats.get("pairs") or []
    n = min((c["n"] for run in params.runs if isinstance(stats.get(run), dict) for c in stats[run]["cells"]),
            default=None)
    if slope.get("series"):
        value, (lo, hi) = slope["value"], slope["ci"]
        exponent = claims.score(value, (lo, hi), n, f"{slope['series']} series (a lr_Z of a panel, its settled cells); "
                                f"no dependence on eta_Y would be 0, 1/sqrt(eta_Y) -0.5",
                                claims.near(value, lo, hi, -1.0, SLOPE_TOLERANCE))
    else:
        exponent = claims.not_run("no series of two or more settled cells")
    if pairs:
        k = sum(p["holds"] for p in pairs)
        p, lo, hi = claims.rate(k, len(pairs))
        control = (f"median seed-half difference {np.median([q['seed_half_difference'] for q in pairs]):.1f} steps "
                   f"against a median gap of {np.median([q['earlier_by'] for q in pairs]):.1f}; "
                   + claims.fmt_rate("pairs earlier beyond it", k, len(pairs)))
        faster = claims.score(p, (lo, hi), n, control, claims.share_holds(k, len(pairs), of="pairs"))
    else:
        faster = claims.not_run("no two cells share an eta_Y")
    return {"tian.scan_snap_transition.t0_inverse_eta_y": exponent,
            "tian.scan_snap_transition.larger_eta_z_faster": faster}
