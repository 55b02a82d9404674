"""Scoring of figure eureka_attention_distribution's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.eureka_arms import BASE, EXPERIMENTS
from ..figures.eureka_attention_distribution import ARMS, Params
from ..intervals import read_floats
from .eureka_table import counted_twice


def score_claims(stats: dict, params: Params) -> dict:
    """At the last drawn epoch: most Softmax weights below 0.05; over training (the mean over the drawn epochs
    after 0, :func:`over_training`): each intervention's share above 0.5 higher than Softmax's."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        if BASE not in arms:
            out[f"eureka.attention_distribution.{exp}_softmax_mostly_tiny"] = claims.not_run(
                f"arm {BASE!r} of experiment {exp!r} not drawn")
            for key in ARMS:
                out[f"eureka.attention_distribution.{exp}_{key}_more_high_weights"] = claims.not_run(
                    f"arm {BASE!r} of experiment {exp!r} not drawn")
            continue
        first, last = _ends(arms[BASE])
        m, lo, hi = claims.mean_interval(last["below_0.05_per_seed"])
        init = claims.mean_interval(first["below_0.05_per_seed"])
        control = claims.fmt_interval("Softmax share below 0.05 at the first recorded epoch", *init)
        out[f"eureka.attention_distribution.{exp}_softmax_mostly_tiny"] = claims.score(
            m, (lo, hi), len(last["below_0.05_per_seed"]), control, claims.above(m, lo, 0.5))
        base, epochs = over_training(arms[BASE], "above_0.5_per_seed")
        m0, lo0, hi0 = claims.mean_interval(base)
        for key, arm in ARMS.items():
            cid = f"eureka.attention_distribution.{exp}_{key}_more_high_weights"
            if arm not in arms:
                out[cid] = claims.not_run(f"arm {arm!r} of experiment {exp!r} not drawn")
                continue
            if twice := counted_twice(arms, arm, exp):
                out[cid] = twice
                continue
            high, own = over_training(arms[arm], "above_0.5_per_seed")
            if own != epochs:
                out[cid] = claims.not_run(f"arm {arm!r} is drawn at epochs {own}, {BASE!r} at {epochs}")
                continue
            m, lo, hi = claims.mean_interval(high)
            control = claims.fmt_interval(f"{BASE} share above 0.5", m0, lo0, hi0) + f" (epochs {epochs})"
            out[cid] = claims.score(m, (lo, hi), len(high), control, claims.exceeds(m, lo, m0, hi0))
    out["eureka.attention_distribution.reasoning_ht_centralized_then_uniform"] = ht_heating(stats.get("reasoning", {}))
    return out


def ht_heating(arms: dict) -> dict:
    """Heat Treatment "starts with centralized attention but ... the next epochs attention will be more uniform than
    the previous": at the first drawn epoch after 0, HT's share of weights above 0.5 exceeds Softmax's
    (claims.exceeds); and per HT seed that share falls from that epoch to the last drawn epoch within the heating (the
    schedule's first half, the run's last drawn epoch taken as its length): share_holds. The weakest of the two."""
    if "HT" not in arms or BASE not in arms:
        return claims.not_run(f"arms 'HT' and {BASE!r} of experiment 'reasoning' not both drawn")
    epochs = sorted(int(e) for e in arms["HT"])
    heating = [e for e in epochs if 0 < e <= epochs[-1] / 2]
    if len(heating) < 2:
        return claims.not_run(f"fewer than two drawn epochs within the heating (epochs {epochs})")
    first, last = arms["HT"][str(heating[0])], arms["HT"][str(heating[-1])]
    soft = arms[BASE].get(str(heating[0]))
    if soft is None:
        return claims.not_run(f"{BASE} is not drawn at epoch {heating[0]}")
    m, lo, hi = claims.mean_interval(first["above_0.5_per_seed"])
    m0, lo0, hi0 = claims.mean_interval(soft["above_0.5_per_seed"])
    falls = [b < a for a, b in zip(first["above_0.5_per_seed"], last["above_0.5_per_seed"])]
    k, n = sum(falls), len(falls)
    p, plo, phi = claims.rate(k, n)
    return claims.score(p, (plo, phi), n,
                        f"at epoch {heating[0]}: HT's share of weights above 0.5 {m:.4f} [{lo:.4f}, {hi:.4f}] against "
                        f"{BASE}'s {m0:.4f} [{lo0:.4f}, {hi0:.4f}] (centralized: must exceed); from epoch {heating[0]} to "
                        f"{heating[-1]} (the last drawn within the heating, epochs 0-{epochs[-1] // 2}) it falls in {k} of "
                        f"{n} HT seeds (mean {m:.4f} -> {claims.mean_interval(last['above_0.5_per_seed'])[0]:.4f})",
                        claims.weakest(claims.exceeds(m, lo, m0, hi0), claims.share_holds(k, n)))


def _ends(arm: dict) -> tuple[dict, dict]:
    """The numbers of the first and the last drawn epoch of one arm."""
    epochs = sorted(arm, key=int)
    return arm[epochs[0]], arm[epochs[-1]]


def over_training(arm: dict, key: str) -> tuple[list[float], list[int]]:
    """Per seed, the mean of ``key`` over the arm's drawn epochs after 0 (the paper's Fig. 8 draws the attention
    "over training"; epoch 0 is the initialisation, which no intervention but the temperature has touched), and
    those epochs."""
    epochs = sorted(int(e) for e in arm if int(e) > 0)
    per_epoch = np.array([read_floats(arm[str(e)][key]) for e in epochs])  # (epoch, seed)
    return [float(v) for v in per_epoch.mean(0)], epochs
