"""A replicate of a config: the same DAG on disjoint seeds and another data draw, in its own results folder.

``snakemake --config replicate=true`` runs it: every run's seeds move past the largest seed any run of the config
uses (so no seed is shared), every ``seed`` of a dataset, analysis or figure block moves by the same offset (a new
data draw for every task, new graphs and orders for the analyses that draw them; a figure that shows one seed
shows the replicate's counterpart), and everything is written under ``<results>/replication``. The replicate's
``claims`` rule puts its ledger beside the original's (``<results>/claims.csv``, which it needs).
"""
from __future__ import annotations

import copy
from typing import Any

SECTIONS = ("datasets", "runs", "analyses", "figures")


def _seed_values(node) -> list[int]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "seed" and isinstance(v, int) and not isinstance(v, bool):
                out.append(v)
            elif k == "seeds" and isinstance(v, int) and not isinstance(v, bool):
                out.append(v - 1)
            elif k == "seeds" and isinstance(v, list):
                out += [s for s in v if isinstance(s, int)]
            else:
                out += _seed_values(v)
    elif isinstance(node, list):
        for v in node:
            out += _seed_values(v)
    return out


def _shift(node, offset: int, in_runs: bool = False):
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "seed" and isinstance(v, int) and not isinstance(v, bool):
                out[k] = v + offset
            elif k == "seeds" and isinstance(v, int) and not isinstance(v, bool):
                out[k] = [s + offset for s in range(v)]  # a count n means seeds 0..n-1
            elif k == "seeds" and isinstance(v, list) and all(isinstance(s, int) for s in v):
                out[k] = [s + offset for s in v]
            else:
                out[k] = _shift(v, offset)
        return out
    if isinstance(node, list):
        return [_shift(v, offset) for v in node]
    return node


def seed_offset(raw: dict) -> int:
    """The smallest multiple of 100 above every seed the config names (100 for seeds 0..99)."""
    top = max([0, *(s for sec in SECTIONS for s in _seed_values(raw.get(sec, {})))])
    return 100 * (top // 100 + 1)


def replicate_config(raw: dict[str, Any]) -> dict[str, Any]:
    """The replicate of a validated config (defaults filled, so every dataset's seed is explicit); a config
    that already is a replicate is returned unchanged."""
    if raw.get("replicate_of"):
        return copy.deepcopy(dict(raw))
    offset = seed_offset(raw)
    out = copy.deepcopy(dict(raw))
    for sec in SECTIONS:
        if sec in out:
            out[sec] = _shift(out[sec], offset)
    results = raw.get("results", "results")
    out.update(results=f"{results}/replication", replicate_of=results, replicate=True)
    return out
