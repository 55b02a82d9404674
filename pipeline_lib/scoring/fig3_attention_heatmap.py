"""Scoring of figure fig3_attention_heatmap's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.fig3_attention_heatmap import SOLELY, SOLVED, Params, as_array


def score_claims(stats: dict, params: Params) -> dict:
    out = {"circuits.fig3.attention_concentrates_on_first_k": _concentration(stats),
           "circuits.fig3.attention_on_zeros": _zeros(stats.get("curriculum")),
           "circuits.fig3.solely_first_k_p2": _solely(stats.get("curriculum"), "curriculum"),
           "circuits.fig3.solely_first_k_p2_d2": _solely(stats.get("curriculum, d=2"), "curriculum, d=2")}
    out.update(_probe_claims(stats.get("probes", {})))
    out["circuits.probes.count_before_answer"] = _count_first(stats.get("probes", {}))
    return out


def _solely(arm: dict | None, label: str) -> dict:
    """'focus solely on the first k' of the p=2 model: its first-k mass at the end of the p=2 phase."""
    if arm is None:
        return claims.not_run(f"arm {label!r} not drawn")
    if "first_k_mass_switch_per_seed" not in arm:
        return claims.not_run(f"arm {label!r} has a single phase: no p=2 phase before a switch")
    e, elo, ehi = claims.mean_interval(arm["first_k_mass_switch_per_seed"])
    n = _paired(arm["first_k_mass_switch_per_seed"])
    return claims.score(e, (elo, ehi), n, f"solely: more than {SOLELY:g} of the attention on the first k",
                        claims.above(e, elo, SOLELY))


def _paired(values: list) -> int:
    return int(np.isfinite(as_array(values)).sum())


def _concentration(stats: dict) -> dict:
    if "curriculum" not in stats or "scratch" not in stats:
        return claims.not_run("arms 'curriculum' and 'scratch' not both drawn")

    def change(s: dict) -> list:
        return list(as_array(s["first_k_mass_end_per_seed"]) - as_array(s["first_k_mass_start_per_seed"]))

    cur, scr = change(stats["curriculum"]), change(stats["scratch"])
    m, lo, hi = claims.mean_interval(cur)
    m0, lo0, hi0 = claims.mean_interval(scr)
    # the rise over scratch; "solely" (the level of the p=2 model) is scored by circuits.fig3.solely_first_k_p2
    return claims.score(m, (lo, hi), _paired(cur), claims.fmt_interval("scratch change", m0, lo0, hi0),
                        claims.exceeds(m, lo, m0, hi0))


# "focuses on the 0": at least half of the way from attention spread as the tokens are to all of the first-k
# attention on one value (figures.fig3_attention_heatmap.zero_measures, its value_focus); a level the project chose, the paper prints none
FOCUS = 0.5


def _zeros(cur: dict | None) -> dict:
    if cur is None:
        return claims.not_run("arm 'curriculum' not drawn")
    if "first_k_mass_switch_per_seed" not in cur:
        return claims.not_run("arm 'curriculum' has a single phase: no p=2 phase before a switch")
    if "favours_switch_per_seed" not in cur:
        return claims.not_run("the statistics predate the favoured value: rerun the figure")
    if not _paired(cur["value_focus_switch_per_seed"]):
        return claims.not_run("no probe sequence has both zeros and non-zeros among the first k")
    # focus on one value: attending to the zeros or to the ones solves the parity equally
    m, lo, hi = claims.mean_interval(cur["value_focus_switch_per_seed"])
    m0, lo0, hi0 = claims.mean_interval(cur["value_focus_start_per_seed"])
    zeros, ones = (cur["favours_switch_per_seed"].count(v) for v in ("zeros", "ones"))
    return claims.score(m, (lo, hi), _paired(cur["value_focus_switch_per_seed"]),
                        f"focus: >= {FOCUS:g}; " + claims.fmt_interval("epoch 0 (untrained)", m0, lo0, hi0)
                        + f"; seeds favouring the zeros / the ones at the switch: {zeros} / {ones}",
                        claims.above(m, lo, FOCUS))


def _absent(probes: dict, name: str) -> str | None:
    """Why probe run ``name``'s statistics cannot be read (not configured, or its artifact lacks the probe); None
    where they can."""
    entry = probes.get(name)
    if entry is None:
        return f"probe run '{name}' not configured (probe_runs)"
    return f"'{name}': {entry['missing']}" if "missing" in entry else None


def _probe_claims(probes: dict) -> dict:
    ids = ("circuits.probes.count_read_out", "circuits.probes.zeros_above_untrained",
           "circuits.probes.zeros_above_scratch_end")
    cur, scr = probes.get("curriculum"), probes.get("scratch")
    out = {ids[0]: _read_out(probes)}
    why = _absent(probes, "curriculum")
    if why:
        return out | {cid: claims.not_run(why) for cid in ids[1:]}
    m, lo, hi = claims.mean_interval(cur["first_per_seed"])
    n = _paired(cur["first_per_seed"])
    for cid, key, what in ((ids[1], "first_per_seed", "scratch at its first snapshot (untrained)"),
                           (ids[2], "last_per_seed", "scratch at its last snapshot")):
        if why := _absent(probes, "scratch"):
            out[cid] = claims.not_run(why)
            continue
        m0, lo0, hi0 = claims.mean_interval(scr[key])
        out[cid] = claims.score(m, (lo, hi), n, claims.fmt_interval(what, m0, lo0, hi0), claims.exceeds(m, lo, m0, hi0))
    return out


def _read_out(probes: dict) -> dict:
    """"If we first train the network with parity data ... the first attention layer will implement an addition
    modulo k + 1": the p=2 run at its last probed snapshot, on parity inputs (where the zeros among the first k are
    k minus their sum, the sum modulo k + 1), read out nearly exactly, at the bar that calls the count solved."""
    if why := _absent(probes, "pretrain"):
        return claims.not_run(why)
    pre = probes["pretrain"]
    m, lo, hi = claims.mean_interval(pre["last_per_seed"])
    return claims.score(m, (lo, hi), _paired(pre["last_per_seed"]),
                        f"read out: >= {SOLVED:g} at epoch {pre['last_snapshot']} of the p=2 run, on p=2 inputs; chance "
                        f"(majority class) {pre['chance']:.3g}", claims.above(m, lo, SOLVED))


def _count_first(probes: dict) -> dict:
    """Sec. II.c "first solves for z ... before solving for y": per seed of the p=2 run, 'before' where the count
    probe is solved at a probed snapshot before the first epoch the model's own test accuracy is; 'after' where
    it is still unsolved at a snapshot at or after that epoch (or never solved); 'undetermined' where the answer
    falls between the last unsolved and the first solved snapshot. share_holds over all seeds for 'before'."""
    if why := _absent(probes, "pretrain"):
        return claims.not_run(why)
    pre = probes["pretrain"]
    order = [count_order(c, u, a) for c, u, a in zip(pre["count_solved_epoch"], pre["count_unsolved_epoch"],
                                                      pre["answer_solved_epoch"])]
    k, n = order.count("before"), len(order)
    p, lo, hi = claims.rate(k, n)
    return claims.score(p, (lo, hi), n, f"count solved before / after / undetermined: {k} / {order.count('after')} / "
                        f"{order.count('undetermined')} of {n} ({pre['snapshots_probed']} probed snapshots); per seed, "
                        f"epoch the count probe reaches {SOLVED:g} / epoch the test accuracy does: "
                        + ", ".join(f"{c}/{a}" for c, a in zip(pre["count_solved_epoch"], pre["answer_solved_epoch"]))
                        + f"; the count probe at the first snapshot (untrained), median "
                        f"{np.nanmedian(as_array(pre['first_per_seed'])):.3f}", claims.share_holds(k, n))


def count_order(count: int | None, unsolved: int | None, answer: int | None) -> str:
    """'before', 'after' or 'undetermined' (see :func:`_count_first`); ``unsolved``: the probed snapshot before
    the count's first solved one (None: the count is solved at the first snapshot)."""
    if count is not None and (answer is None or count < answer):
        return "before"
    if answer is None:
        return "undetermined"  # neither is solved
    if count is None or (unsolved is not None and unsolved >= answer):
        return "after"
    return "undetermined"
