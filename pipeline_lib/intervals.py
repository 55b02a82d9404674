"""The intervals a figure's statistics and a claim's score are stated with: the share of a count with its Wilson
interval, the mean over seeds with its Student's t interval, and numbers as JSON holds them. Apart from the rules
(:mod:`pipeline_lib.claim_rules`), so that a figure's code does not include them; imported without numpy, which
each function loads when called (the DAG is built without it)."""
from __future__ import annotations

import math
from collections.abc import Iterable


def rate(successes: int, n: int) -> tuple[float, float, float]:
    """(share, Wilson 95% low, high) of a count."""
    from .stats import wilson_interval

    lo, hi = wilson_interval(int(successes), int(n))
    return successes / n, lo, hi


def mean_interval(values: Iterable[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the mean over seeds (NaN values dropped; one value: no
    interval)."""
    import numpy as np

    v = np.asarray([x for x in values if x is not None], dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    m = float(v.mean())
    if v.size < 2:
        return m, math.nan, math.nan
    from scipy.special import stdtrit  # Student's t quantile (scipy.stats.t.ppf's own; scipy.stats costs ~1 s)

    half = float(stdtrit(v.size - 1, 0.5 + level / 2) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - half, m + half


def read_floats(values):
    """A sidecar's list of numbers as a float array, None as NaN (the inverse of :func:`json_floats`)."""
    import numpy as np

    return np.array([np.nan if v is None else v for v in values], dtype=float)


def json_floats(values) -> list:
    """Numbers as a JSON-ready list (flattened), NaN and inf as None (a figure's sidecar holds per-seed values)."""
    import numpy as np

    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float).ravel()]
