"""Scoring of figure eureka_accuracy's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

import numpy as np

from .. import claims
from ..figures.eureka_accuracy import ARMS, FAST_JUMP, LEAP_SHARE, LOSS_BAND, STEP_SHARE, TARGET_SHARE, Params
from ..figures.eureka_arms import BASE, EXPERIMENTS
from .eureka_table import counted_twice

# "after both training and validation loss saturated for hundreds of epochs": a plateau of at least two hundred
HUNDREDS = 200
# "very long training": the length the sentence's own evidence prints (Sec. 5.3, "training for 3000 epochs results in
# an Eureka-ratio of 4/4"); and the default config's length, the short run stated beside the long one
LONG_EPOCHS = 3000
SHORT_EPOCHS = 600


def score_claims(stats: dict, params: Params) -> dict:
    """The plateau-then-jump shape of the Softmax seeds, and each intervention's epochs to 95% of Softmax's
    accuracy as a share of Softmax's, per experiment."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get(exp, {})
        out[f"eureka.accuracy.{exp}_plateau_then_jump"] = plateau_score(arms)
        out[f"eureka.accuracy.{exp}_losses_leap_together"] = leap_score(arms)
        for key, arm in ARMS.items():
            out[f"eureka.accuracy.{exp}_{key}_95pct_in_20pct_of_steps"] = (
                arm in arms and counted_twice(arms, arm, exp)) or speed_score(arms, arm)
    out["eureka.accuracy.reasoning_long_training_reliable"] = long_training_score(stats.get("reasoning", {}))
    return out


def long_training_score(arms: dict) -> dict:
    """"one potential solution to reliably get Eureka-moments is very long training": the share of the Softmax
    seeds with a Eureka epoch by the end of a run at least as long as the paper's (:data:`LONG_EPOCHS`); share_holds (every
    seed). The same seeds' count by the default's :data:`SHORT_EPOCHS` stands beside it. Not run on a shorter run.
    A seed of a long run that learns within :data:`SHORT_EPOCHS` counts: "very long training" is the whole recipe,
    its learning-rate schedule stretched with it, not the epochs past the short run's end."""
    base = arms.get(BASE)
    if base is None or "eureka_epoch" not in base:
        return claims.not_run(f"arm {BASE!r} not drawn (or drawn without a Eureka threshold)")
    epochs, n = base["eureka_epoch"], len(base["eureka_epoch"])
    if base["last_epoch"] < LONG_EPOCHS:
        return claims.not_run(f"the run is {base['last_epoch']} epochs, shorter than the paper's {LONG_EPOCHS} "
                              "(config/eureka_long.yaml and config/eureka_10k.yaml run longer)")
    k = sum(e is not None for e in epochs)
    early = sum(e is not None and e <= SHORT_EPOCHS for e in epochs)
    p, lo, hi = claims.rate(k, n)
    control = (f"{k} of {n} {BASE} seeds have a Eureka-moment within {base['last_epoch']} epochs, {early} of them "
               f"within {SHORT_EPOCHS} (the default's length); their epochs: "
               f"{sorted(int(e) for e in epochs if e is not None)}")
    return claims.score(p, (lo, hi), n, control, claims.share_holds(k, n))


def eureka_shaped(plateau, jump) -> bool:
    """A plateau of hundreds of epochs (>= :data:`HUNDREDS`) ended by a rapid jump (<= FAST_JUMP of the
    plateau)."""
    return plateau is not None and jump is not None and plateau >= HUNDREDS and jump <= FAST_JUMP * plateau


def plateau_score(arms: dict) -> dict:
    """"When transformers learn the intermediate task, they do this rapidly ... after [a plateau of] hundreds of
    epochs": over the Softmax seeds with a Eureka epoch (those that learned it), the share whose curve has that
    shape (:func:`eureka_shaped`); share_holds. Not run where no seed learned, or where the run is shorter than
    the plateau the sentence names."""
    base = arms.get(BASE)
    if base is None or "plateau_epochs" not in base:
        return claims.not_run(f"arm {BASE!r} not drawn (or drawn without a Eureka threshold)")
    if "loss_flat_epochs" not in base:
        return claims.not_run("the statistics predate the losses' saturated stretch: rerun the figure")
    n_all = len(base["plateau_epochs"])
    learned = [(p, j) for p, j, e in zip(base["loss_flat_epochs"], base["loss_flat_jump_epochs"], base["eureka_epoch"])
               if e is not None]
    k = sum(eureka_shaped(p, j) for p, j in learned)
    control = (f"{len(learned)} of {n_all} {BASE} seeds learned the intermediate task (a Eureka epoch); saturated: "
               f"an unbroken stretch before the Eureka epoch over which the train and the test loss each vary by at "
               f"most {LOSS_BAND:.0%} of their lowest value there; hundreds: >= {HUNDREDS} epochs, rapid: the Eureka "
               f"epoch <= {FAST_JUMP:g} x the stretch after its end; (stretch, epochs from its end to the Eureka "
               f"epoch) of the learned seeds: {[(p, None if j is None else round(j)) for p, j in learned]}")
    if base["last_epoch"] < HUNDREDS:
        return claims.score(float("nan"), (float("nan"),) * 2, n_all, control, claims.guard(
            "not run", f"the run is {base['last_epoch']} epochs: no plateau of hundreds of epochs fits in it"))
    if not learned:
        return claims.score(float("nan"), (float("nan"),) * 2, n_all, control, claims.guard(
            "not run", "no Softmax seed learned the intermediate task: no jump to time"))
    p, lo, hi = claims.rate(k, len(learned))
    return claims.score(p, (lo, hi), len(learned), control, claims.share_holds(k, len(learned)))


def leap_score(arms: dict) -> dict:
    """"the sudden leap occurs for both [validation and training loss] simultaneously": over the Softmax seeds
    with a Eureka epoch, the share whose two losses leap (:func:`..figures.eureka_accuracy.loss_leap`) within the
    test accuracy's own jump of each other (at least one epoch apart allowed); a loss that never leaps counts
    against; share_holds. Not run where no seed learned."""
    base = arms.get(BASE)
    if base is None or "eureka_epoch" not in base:
        return claims.not_run(f"arm {BASE!r} not drawn (or drawn without a Eureka threshold)")
    if "train_loss_leap_epoch" not in base:
        return claims.not_run("the statistics predate the losses' leap: rerun the figure")
    learned = [(tr, te, max(j, 1.0)) for tr, te, j, e in zip(base["train_loss_leap_epoch"], base["test_loss_leap_epoch"],
                                                           base["jump_epochs"], base["eureka_epoch"])
               if e is not None and j is not None]
    n_all = len(base["eureka_epoch"])
    together = [tr is not None and te is not None and abs(tr - te) <= tol for tr, te, tol in learned]
    control = (f"{len(learned)} of {n_all} {BASE} seeds learned the intermediate task (a Eureka epoch); a loss leaps at "
               f"the first epoch from the jump's start at which it is below {LEAP_SHARE:g} of its value there; "
               f"(train leap, test leap, allowed gap) of the learned seeds: "
               f"{[(tr, te, round(tol)) for tr, te, tol in learned]}")
    if not learned:
        return claims.score(float("nan"), (float("nan"),) * 2, n_all, control, claims.guard(
            "not run", "no Softmax seed learned the intermediate task: no leap to time"))
    k = sum(together)
    p, lo, hi = claims.rate(k, len(learned))
    return claims.score(p, (lo, hi), len(learned), control, claims.share_holds(k, len(learned)))


def _censored(arm: dict) -> list[float]:
    """Per seed the epochs to the baseline's target; a seed that never reaches it: the run's length + 1."""
    return [arm["last_epoch"] + 1 if e is None else e for e in arm["epochs_to_baseline_target"]]


def speed_score(arms: dict, arm: str) -> dict:
    """Median epochs of ``arm`` to 95% of Softmax's final accuracy over Softmax's own, against 0.2."""
    if arm not in arms or BASE not in arms or "epochs_to_baseline_target" not in arms[arm]:
        return claims.not_run(f"arms {arm!r} and {BASE!r} not both drawn")
    a, b = _censored(arms[arm]), _censored(arms[BASE])
    ratio, lo, hi = ratio_of_medians(a, b)
    base = arms[BASE]
    control = (f"{BASE} median {np.median(b):g} epochs to {base['baseline_target_acc']:.3f} "
               f"({TARGET_SHARE:g} x its median final test accuracy {base['median_final_test_acc']:.3f})")
    level = arms.get("chance_without_step1")
    if level is not None and not np.isnan(level) and base["baseline_target_acc"] <= level:
        # the baseline's median seed never solved the first step: reaching its target needs only the second
        return claims.score(ratio, (lo, hi), len(a), control + f" <= the no-first-step accuracy {level:.3f}",
                            claims.guard("not run", "the baseline's target is below the accuracy reached without the "
                                                    "first step: reaching it does not measure the task"))
    return claims.score(ratio, (lo, hi), len(a), control, claims.below(ratio, hi, STEP_SHARE))


def ratio_of_medians(a: list, b: list, level: float = 0.95, n_boot: int = 2000) -> tuple[float, float, float]:
    """(median(a) / median(b), low, high): percentile bootstrap, seeds resampled within each sample (fixed
    seed, as :func:`claims.median_interval`); NaN where median(b) is 0. A draw whose median(b) is 0 has no finite
    ratio (0 / 0 included): it counts as unbounded, so the interval widens instead of turning NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.median(b) == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(0)
    ra = np.median(rng.choice(a, size=(n_boot, a.size)), axis=1)
    rb = np.median(rng.choice(b, size=(n_boot, b.size)), axis=1)
    r = np.full(n_boot, np.inf)
    np.divide(ra, rb, out=r, where=rb > 0)
    finite = np.isfinite(r)  # the quantiles' interpolation cannot take inf (inf - inf): the largest float stands in
    q = np.quantile(np.where(finite, r, np.finfo(float).max), [0.5 - level / 2, 0.5 + level / 2])
    lo, hi = np.where(q > r[finite].max(initial=-np.inf), np.inf, q)
    return float(np.median(a) / np.median(b)), float(lo), float(hi)
