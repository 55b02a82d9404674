"""Scoring of figure fig4_embeddings's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.fig4_embeddings import PURE, Params

# Final train accuracy from which a seed counts as having learned its task (its clusters mean something). The
# authors call their notebook's recipe 'Works' (factorization.ipynb, 'Training recipes'); re-run at the notebook's
# own seed it ends at train accuracy 0.965 (docs/diagnostics/pal_fig4_recipe.md), so the bar sits below that
# level: a run like the one the authors call working counts as learned.
LEARNED = 0.95


def _by_seed(d: dict) -> dict:
    """A per-seed mapping with int keys (JSON, as kept in docs/stats, turns them into strings)."""
    return {int(k): v for k, v in d.items()}


def _of(d: dict, seeds: list[int]) -> list:
    """The values of a per-seed mapping (:func:`_by_seed`) for ``seeds``, in their order."""
    by_seed = _by_seed(d)
    return [by_seed[x] for x in seeds]


def learned_seeds(s: dict) -> list[int]:
    """The seeds of a run whose final train accuracy reaches LEARNED."""
    return [x for x, a in _by_seed(s["final_train_acc"]).items() if a is not None and a >= LEARNED]


def score_claims(stats: dict, params: Params) -> dict:
    pairs = [("main", {"pretrain": params.pretrain, "finetune": params.finetune}), *params.settings]
    out = {"circuits.fig4.clusters_after_p2": one_per_sum(stats, params.pretrain),
           "circuits.fig4.clusters_after_p4": one_per_sum(stats, params.finetune),
           "circuits.fig4.clusters_after_p2_every_setting": every_setting(stats, pairs, "pretrain"),
           "circuits.fig4.clusters_after_p4_every_setting": every_setting(stats, pairs, "finetune")}
    p3 = dict(params.p3 or ())
    out["circuits.fig4.clusters_after_p3"] = (one_per_sum(stats, p3["finetune"], before=p3["pretrain"]) if p3
                                              else claims.not_run("no 'p3' row configured"))
    out["circuits.fig4.d2_learns_p2"] = learned_share(stats[params.pretrain], "p=2")
    out["circuits.fig4.d2_learns_p4_after_p2"] = learned_after(stats[params.finetune], stats[params.pretrain])
    out["circuits.fig4.not_from_p4_only"] = (
        not_from_scratch(stats[params.finetune], stats[params.scratch], stats[params.pretrain]) if params.scratch
        else claims.not_run("no 'scratch' control configured"))
    out["circuits.fig4.z_a_ordered_by_count"] = ordered_by_count(stats[params.pretrain])
    return out


def learned_share(s: dict, task: str) -> dict:
    """Share of seeds whose final train accuracy reaches LEARNED (share_holds: "works" read as every seed)."""
    n, k = len(s["final_train_acc"]), len(learned_seeds(s))
    p, lo, hi = claims.rate(k, n)
    tests = sorted(s["final_test_acc"].values())
    return claims.score(p, (lo, hi), n, f"seeds with final train accuracy >= {LEARNED:g} on {task}: {k} of {n}; "
                        f"final test accuracy median {np.median(tests):.3f}", claims.share_holds(k, n))


def after_p2(finetune: dict, pretrain: dict) -> tuple[set[int], int, int]:
    """The seeds whose pretraining learned p=2 (a seed that never learned recipe 1 does not test what follows it),
    and of the finetune's seeds: how many of those it has, and how many of those learn p=4."""
    before = set(learned_seeds(pretrain))
    n = len(before & set(_by_seed(finetune["final_train_acc"])))
    return before, n, len(before & set(learned_seeds(finetune)))


def learned_after(finetune: dict, pretrain: dict) -> dict:
    """"Works after 1": the share of the finetune's seeds that learn p=4, among the seeds whose pretraining learned
    p=2 (:func:`after_p2`); not run where none did."""
    before, n, k = after_p2(finetune, pretrain)
    unlearned = len(finetune["final_train_acc"]) - n
    if n == 0:
        return claims.not_run(f"no seed learned p=2 (train accuracy >= {LEARNED:g}): recipe 1 did not work, so "
                              "nothing tests what follows it")
    p, lo, hi = claims.rate(k, n)
    tests = [v for x, v in _by_seed(finetune["final_test_acc"]).items() if x in before and v is not None]
    test_text = f"final test accuracy median {np.median(tests):.3f}" if tests else "no final test accuracy"
    return claims.score(p, (lo, hi), n, f"of the {n} seed(s) that learned p=2, {k} reach final train accuracy >= "
                        f"{LEARNED:g} on p=4 ({test_text}); {unlearned} seed(s) that never learned p=2 are left out",
                        claims.share_holds(k, n))


def not_from_scratch(finetune: dict, scratch: dict, pretrain: dict) -> dict:
    """The finetune's learned share, over the seeds whose pretraining learned p=2 (:func:`after_p2`), against the
    same task's from-scratch run at the same width."""
    _, n, k = after_p2(finetune, pretrain)
    k0, n0 = len(learned_seeds(scratch)), len(scratch["final_train_acc"])
    if n == 0:
        return claims.not_run(f"no seed learned p=2 (train accuracy >= {LEARNED:g}): no curriculum to contrast")
    if k == 0:  # the sentence contrasts a structure the curriculum reached with p=4 alone: here none reached it
        p, lo, hi = claims.rate(k, n)
        return claims.score(p, (lo, hi), n, claims.fmt_rate("from scratch", k0, n0) + " (no curriculum seed learned "
                            "p=4: no structure to contrast)", claims.guard("not run", "no seed of the curriculum "
                            f"learned p=4 (train accuracy >= {LEARNED:g}): nothing emerged to contrast with p=4 alone"))
    return claims.rate_exceeds(k, n, k0, n0, "from scratch")


# "z_A ... ~ k - sum x_i": one line, a position set by the count. "~" has no number: the order along the first
# principal axis (|Spearman|) and that axis's share of z_A's variance both at least this, per seed (the project's
# level, fixed before a seed that learned p=2 at d = 2 was seen)
ONE_LINE = 0.9


def ordered_by_count(s: dict) -> dict:
    """z_A of the seeds that learned p=2 lies along one axis ordered by the count, seed by seed: |Spearman| of the
    first principal axis against the sum and the axis's share of the variance both at least ONE_LINE at the final
    weights, and the order higher than the same seed's at the run's first snapshot (initialisation); share_holds
    over the learned seeds, as circuits.fig4.clusters_after_p2 on the same precondition; not run (a guard) when
    none learned."""
    learned, n_all = learned_seeds(s), len(s["order_per_seed"])
    end, start = _of(s["order_per_seed"], learned), _of(s["order_start_per_seed"], learned)
    pc1 = _of(s["pc1_share_per_seed"], learned)
    holds = [None not in (e, b, p) and e >= ONE_LINE and p >= ONE_LINE and e > b
             for e, b, p in zip(end, start, pc1)]
    r = lambda xs: [None if x is None else round(x, 3) for x in xs]  # noqa: E731
    control = (claims.fmt_rate(f"seeds that learned p=2 (train accuracy >= {LEARNED:g})", len(learned), n_all)
               + f"; per learned seed |rho| {r(end)} (at initialisation {r(start)}), share of variance on the first "
               f"axis {r(pc1)}; each needs both >= {ONE_LINE:g} and |rho| above its initialisation's")
    if not learned:
        p, lo, hi = claims.rate(0, n_all)
        return claims.score(p, (lo, hi), n_all, control + " (no seed learned: no trained z_A to order)",
                            claims.guard("not run", f"no seed learned p=2 (train accuracy >= {LEARNED:g}): z_A of a "
                                         "model that did not learn the task is not the equation's"))
    k = sum(holds)
    p, lo, hi = claims.rate(k, len(learned))
    return claims.score(p, (lo, hi), len(learned), control, claims.share_holds(k, len(learned)))


def _predates(s: dict, run: str) -> str | None:
    """Why the kept statistics ``s`` of ``run`` cannot score the cluster claims (they predate the per-seed purities
    at its last and first snapshots); None where they can."""
    if "purity_per_seed" in s and "purity_start_per_seed" in s:
        return None
    return f"the statistics of {run!r} predate per-seed purities at its last and first snapshots: rerun the figure"


def one_per_sum(stats: dict, run: str, before: str | None = None) -> dict:
    """Score of "the seeds of ``run`` that learned its task show one z_A cluster per sum": as many clusters as
    sums, each holding one sum (:func:`sum_purity` >= PURE), where the run's first snapshot did not already show them
    ("the emergence of"); share_holds over the learned seeds; not run (a guard) when none learned. ``before``: the run whose counts of the
    same seeds the control text lists (the pretraining of a finetune)."""
    s = stats.get(run)
    if s is None:
        return claims.not_run(f"run {run!r} not drawn")
    if why := _predates(s, run):
        return claims.not_run(why)
    learned, n_all, sums = learned_seeds(s), len(s["clusters_per_seed"]), s["distinct_sums"]
    counts, purity = _of(s["clusters_per_seed"], learned), _of(s["purity_per_seed"], learned)
    start = [c == sums and q >= PURE for c, q in zip(_of(s["clusters_start_per_seed"], learned),
                                                     _of(s["purity_start_per_seed"], learned))]
    # "the emergence of": one cluster per sum at the end that the run's first snapshot did not already show
    k = sum(c == sums and q >= PURE and not was for c, q, was in zip(counts, purity, start))
    control = (claims.fmt_rate(f"seeds that learned the task (train accuracy >= {LEARNED:g})", len(learned), n_all)
               + f"; one cluster per sum = {sums} clusters of sum purity >= {PURE:g}, not already at the run's first "
               f"snapshot; the learned seeds' counts {counts}, purities {[round(q, 3) for q in purity]}; at the first "
               f"snapshot {_of(s['clusters_start_per_seed'], learned)}, already one per sum: {sum(start)}")
    if before in stats:
        prior = _by_seed(stats[before]["clusters_per_seed"])
        control += f"; the same seeds' counts after {before}: {[prior.get(x) for x in learned]}"
    if not learned:
        p, lo, hi = claims.rate(0, n_all)
        return claims.score(p, (lo, hi), n_all, control + " (no seed learned: no embedding to count clusters in)",
                            claims.guard("not run", f"no seed learned the task (train accuracy >= {LEARNED:g}): the "
                                         "clusters of a learned embedding cannot be counted"))
    p, lo, hi = claims.rate(k, len(learned))
    return claims.score(p, (lo, hi), len(learned), control, claims.share_holds(k, len(learned)))


def every_setting(stats: dict, pairs: list, phase: str) -> dict:
    """Score of "one cluster per sum in every setting": share_holds over the settings whose
    :func:`one_per_sum` is reproduced (``phase``: 'pretrain' or 'finetune'); not run where the config draws the
    main pair alone (its verdict is the main claim's, not one over settings)."""
    if len(pairs) < 2:
        return claims.not_run("no 'settings' rows configured beside the main pair "
                              "(config/circuits_fig4_settings.yaml draws them)")
    stale = [_predates(stats[pair[phase]], pair[phase]) for _, pair in pairs if pair[phase] in stats]
    if any(stale):  # a setting whose statistics predate the count: the claim over every setting cannot be scored
        return claims.not_run(next(w for w in stale if w))
    verdicts = {label: one_per_sum(stats, pair[phase])["verdict"] for label, pair in pairs}
    ran = [v for v in verdicts.values() if v != "not run"]  # a setting where no seed learned shows no clusters
    text = "; ".join(f"{lbl}: {v}" for lbl, v in verdicts.items())
    if not ran:
        return claims.score(float("nan"), (float("nan"),) * 2, 0, text,
                            claims.guard("not run", "no setting has a seed that learned the task"))
    ok = sum(v == "reproduced" for v in ran)
    p, lo, hi = claims.rate(ok, len(ran))
    seeds = sum(len(stats[pair[phase]]["clusters_per_seed"]) for label, pair in pairs if verdicts[label] != "not run")
    return claims.score(p, (lo, hi), seeds, text + f" (over the {len(ran)} setting(s) where a seed learned, "
                        f"{seeds} seeds in all)", claims.share_holds(ok, len(ran), of="settings"))
