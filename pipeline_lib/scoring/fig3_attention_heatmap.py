"""Scoring of figure fig3_attention_heatmap's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.fig3_attention_heatmap import SOLELY, SOLVED, Params
from ..intervals import read_floats
from .fig4_embeddings import LEARNED


def score_claims(stats: dict, params: Params) -> dict:
    out = {"circuits.fig3.attention_concentrates_on_first_k": _concentration(stats),
           "circuits.fig3.attention_on_zeros": _zeros(stats.get("curriculum")),
           "circuits.fig3.solely_first_k_p2": _solely(stats.get("curriculum"), "curriculum"),
           "circuits.fig3.solely_first_k_p2_d2": _solely(stats.get("curriculum, d=2"), "curriculum, d=2")}
    out.update(_probe_claims(stats.get("probes", {})))
    out["circuits.probes.count_before_answer"] = _count_first(stats.get("probes", {}))
    return out


def _solely(arm: dict | None, label: str) -> dict:
    """'focus solely on the first k' of the p=2 model: its first-k mass at the end of the p=2 phase, over the seeds
    whose p=2 phase learned its task (:func:`_learned`)."""
    if arm is None:
        return claims.not_run(f"arm {label!r} not drawn")
    if "first_k_mass_switch_per_seed" not in arm:
        return claims.not_run(f"arm {label!r} has a single phase: no p=2 phase before a switch")
    seeds, why = _learned(arm, "first_k_mass_switch_per_seed")
    if why:
        return claims.not_run(why)
    mass = [arm["first_k_mass_switch_per_seed"][i] for i in seeds]
    e, elo, ehi = claims.mean_interval(mass)
    return claims.score(e, (elo, ehi), _paired(mass), f"solely: more than {SOLELY:g} of the attention on the first k; "
                        + _learned_text(arm, seeds), claims.above(e, elo, SOLELY))


def _learned(arm: dict, key: str) -> tuple[list[int], str | None]:
    """The seeds (indices) whose phase before the switch ends at train accuracy >= LEARNED (the bar of
    circuits.fig4.d2_learns_p2) with a number for ``key``: the attention of a model that did not learn the task is
    no structure of it. None, or why the claim cannot be scored: statistics without the accuracy, or fewer than two
    such seeds (no interval)."""
    if "train_acc_switch_per_seed" not in arm:
        return [], "the statistics predate the p=2 phase's train accuracy: rerun the figure"
    acc = read_floats(arm["train_acc_switch_per_seed"])
    values = read_floats(arm[key])
    seeds = [i for i, (a, v) in enumerate(zip(acc, values)) if a >= LEARNED and np.isfinite(v)]
    if len(seeds) < 2:
        return seeds, (f"{len(seeds)} of {len(acc)} seeds learned p=2 (train accuracy >= {LEARNED:g} at the switch; "
                       f"per seed {', '.join(f'{a:.3f}' for a in acc)}): too few for an interval, and the attention "
                       "of a seed that did not learn the task is not the structure the sentence describes")
    return seeds, None


def _learned_text(arm: dict, seeds: list[int]) -> str:
    return (f"over the {len(seeds)} of {len(arm['train_acc_switch_per_seed'])} seeds that learned p=2 (train accuracy "
            f">= {LEARNED:g} at the switch)")


def _paired(values: list) -> int:
    return int(np.isfinite(read_floats(values)).sum())


def _concentration(stats: dict) -> dict:
    if "curriculum" not in stats or "scratch" not in stats:
        return claims.not_run("arms 'curriculum' and 'scratch' not both drawn")

    def change(s: dict) -> list:
        return list(read_floats(s["first_k_mass_end_per_seed"]) - read_floats(s["first_k_mass_start_per_seed"]))

    cur, scr = change(stats["curriculum"]), change(stats["scratch"])
    m, lo, hi = claims.mean_interval(cur)
    m0, lo0, hi0 = claims.mean_interval(scr)
    # the rise over scratch; "solely" (the level of the p=2 model) is scored by circuits.fig3.solely_first_k_p2
    return claims.score(m, (lo, hi), _paired(cur), claims.fmt_interval("scratch change", m0, lo0, hi0),
                        claims.exceeds(m, lo, m0, hi0))


# "focuses on the 0": at least half of the way from attention spread as the tokens are to all of the first-k
# attention on the zeros (figures.fig3_attention_heatmap.zero_measures, its zero_focus); a level the project chose, the paper prints none
FOCUS = 0.5


def _zeros(cur: dict | None) -> dict:
    """"it focuses on the 0 among these tokens": the zero focus at the switch (signed: the ones are not the zeros),
    over the seeds whose p=2 phase learned its task; the seeds favouring each value are counted beside it."""
    if cur is None:
        return claims.not_run("arm 'curriculum' not drawn")
    if "first_k_mass_switch_per_seed" not in cur:
        return claims.not_run("arm 'curriculum' has a single phase: no p=2 phase before a switch")
    if "zero_focus_switch_per_seed" not in cur:
        return claims.not_run("the statistics predate the signed zero focus: rerun the figure")
    if not _paired(cur["zero_focus_switch_per_seed"]):
        return claims.not_run("no probe sequence has both zeros and non-zeros among the first k")
    seeds, why = _learned(cur, "zero_focus_switch_per_seed")
    if why:
        return claims.not_run(why)
    focus = [cur["zero_focus_switch_per_seed"][i] for i in seeds]
    m, lo, hi = claims.mean_interval(focus)
    m0, lo0, hi0 = claims.mean_interval([cur["zero_focus_start_per_seed"][i] for i in seeds])
    favours = [cur["favours_switch_per_seed"][i] for i in seeds]
    return claims.score(m, (lo, hi), _paired(focus),
                        f"zero focus: >= {FOCUS:g}; " + claims.fmt_interval("epoch 0 (untrained)", m0, lo0, hi0)
                        + f"; {_learned_text(cur, seeds)}; of them favouring the zeros / the ones at the switch: "
                        f"{favours.count('zeros')} / {favours.count('ones')}", claims.above(m, lo, FOCUS))


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
    k minus their sum, the sum modulo k + 1), read out nearly exactly, at the bar that calls the count solved; over
    the seeds that learned p=2 within the probe run (:func:`_trained`)."""
    if why := _absent(probes, "pretrain"):
        return claims.not_run(why)
    pre = probes["pretrain"]
    seeds, why = _trained(pre)
    if why:
        return claims.not_run(why)
    kept = [pre["last_per_seed"][i] for i in seeds]
    m, lo, hi = claims.mean_interval(kept)
    return claims.score(m, (lo, hi), _paired(kept),
                        f"read out: >= {SOLVED:g} at epoch {pre['last_snapshot']} of the p=2 run, on p=2 inputs; chance "
                        f"(majority class) {pre['chance']:.3g}; {_trained_text(pre, seeds)}", claims.above(m, lo, SOLVED))


def _trained(pre: dict) -> tuple[list[int], str | None]:
    """The seeds (indices) of probe run ``pre`` whose own test accuracy reached SOLVED within it (the sentences
    describe the network trained on parity data, which a seed still short of it is not), as :func:`_learned` does
    for the p=2 phase's train accuracy; and None, or why the claim cannot be scored: fewer than two such seeds."""
    seeds = [i for i, a in enumerate(pre["answer_solved_epoch"]) if a is not None]
    why = None if len(seeds) >= 2 else (f"{len(seeds)} seed(s) of the p=2 probe run learned p=2 (test accuracy >= "
                                        f"{SOLVED:g}): no trained network to read")
    return seeds, why


def _trained_text(pre: dict, seeds: list[int]) -> str:
    return (f"{len(seeds)} of {len(pre['answer_solved_epoch'])} seeds learned p=2 (test accuracy >= "
            f"{SOLVED:g}) within the probe run, the others left out")


def _count_first(probes: dict) -> dict:
    """Sec. II.c "first solves for z ... before solving for y": per seed of the p=2 run that learned it (its test
    accuracy reaching SOLVED within the run), 'before' where the count probe is solved at a probed snapshot before
    the first epoch the model's own test accuracy is; 'after' where it is still unsolved at a snapshot at or after
    that epoch (or never solved); 'undetermined' where the answer falls between the last unsolved and the first
    solved snapshot. share_holds over those seeds for 'before'."""
    if why := _absent(probes, "pretrain"):
        return claims.not_run(why)
    pre = probes["pretrain"]
    seeds, why = _trained(pre)
    if why:
        return claims.not_run(why)
    order = [count_order(pre["count_solved_epoch"][i], pre["count_unsolved_epoch"][i], pre["answer_solved_epoch"][i])
             for i in seeds]
    k, n = order.count("before"), len(order)
    p, lo, hi = claims.rate(k, n)
    return claims.score(p, (lo, hi), n, f"count solved before / after / undetermined: {k} / {order.count('after')} / "
                        f"{order.count('undetermined')} of {n} ({pre['snapshots_probed']} probed snapshots); "
                        f"{_trained_text(pre, seeds)}; per seed, epoch the count probe reaches {SOLVED:g} / epoch the test "
                        "accuracy does: " + ", ".join(f"{c}/{a}" for c, a in zip(pre["count_solved_epoch"],
                                                                                pre["answer_solved_epoch"]))
                        + f"; the count probe at the first snapshot (untrained), median "
                        f"{np.nanmedian(read_floats(pre['first_per_seed'])):.3f}", claims.share_holds(k, n))


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
