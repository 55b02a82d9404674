"""Scoring of figure eureka_table's claims from its statistics (its sidecar's ``stats``, or the copy kept in
``docs/stats``): the ledger job and ``publish`` call :func:`score_claims`; the figure job does not."""
from __future__ import annotations

from .. import claims
from ..figures.eureka_arms import (
    ACCURACY,
    BASE,
    EXPERIMENTS,
    INTERVENTIONS,
    NOPOS,
    RESNET,
    TABLE1_LOWERS,
    TABLE1_RAISES,
)
from ..figures.eureka_table import ARMS, IMMEDIATE, MIN_EUREKA_SEEDS, Params


def score_claims(stats: dict, params: Params) -> dict:
    """Every intervention against Softmax, per experiment: the Eureka-ratio and the mean Eureka epoch."""
    out = {}
    for exp in EXPERIMENTS:
        arms = stats.get("arms", {}).get(exp, {})
        for key, arm in ARMS.items():
            why = _pair(arms, arm, exp)
            if why is not None:
                out[f"eureka.table.{exp}_{key}_raises_ratio"] = out[f"eureka.table.{exp}_{key}_earlier_eureka"] = why
                continue
            out[f"eureka.table.{exp}_{key}_raises_ratio"] = ratio_score(arms[arm], arms[BASE])
            out[f"eureka.table.{exp}_{key}_earlier_eureka"] = epoch_score(arms[arm], arms[BASE])
        if exp == "reasoning":  # declared for the default config's task only
            out[f"eureka.table.{exp}_non_eureka_softmax_seeds_plateau"] = plateau_score(arms.get(BASE))
    for exp in EXPERIMENTS:
        out[f"eureka.table.{exp}_normsoftmax_most_effective"] = most_effective_score(
            stats.get("arms", {}).get(exp, {}), exp)
    out.update(table1_scores(stats.get("arms", {})))
    out["eureka.table.reasoning_larger_lr_no_fix"] = larger_lr_score(stats.get("arms", {}))
    second = stats.get("arms", {}).get(SECOND_RATE, {})  # HT's timing at the grid's second rate too
    out["eureka.table.reasoning_lr5e4_ht_earlier_eureka"] = (_pair(second, ARMS["ht"], SECOND_RATE)
                                                            or epoch_score(second[ARMS["ht"]], second[BASE]))
    return out


SECOND_RATE = "reasoning_lr5e4"  # the reasoning task's experiment at the grid's second rate (the reference's 5e-4)
RIVALS = ("lowtemp", "ht")  # NormSoftmax's rivals among the paper's interventions on the Softmax (Sec. 5.2)


def most_effective_score(arms: dict, exp: str) -> dict:
    """"We found it [NormSoftmax] as the most effective intervention on the Softmax function" (Sec. 2):
    NormSoftmax against each other intervention on the Softmax the experiment draws (the lower temperature, HT),
    by Table 1's first column, the Eureka-ratio (rates_exceed); a pair whose two arms reach the threshold in every
    seed (as every such row of the paper's main column does, 10/10) is compared by the table's next, the mean
    Eureka epoch (earlier; t intervals). The weakest verdict over the rivals: 'most' holds only as far as it holds
    against each. The estimate is NormSoftmax's Eureka-ratio, or its mean Eureka epoch where every pair is
    compared by epochs."""
    norm = INTERVENTIONS["normsoftmax"]
    rivals = [INTERVENTIONS[k] for k in RIVALS if INTERVENTIONS[k] in arms]
    if norm not in arms or not rivals:
        return claims.not_run(f"experiment {exp!r} does not hold {norm!r} and another intervention on the Softmax "
                              f"({', '.join(INTERVENTIONS[k] for k in RIVALS)})")
    for arm in (norm, *rivals):
        why = _pair(arms, arm, exp)
        if why is not None:
            return why
    a = arms[norm]
    if a["n_eureka"] == 0 and all(arms[r]["n_eureka"] == 0 for r in rivals):
        return claims.not_run(f"no seed of {norm} or its rivals ({', '.join(rivals)}) reaches the threshold: "
                              "nothing learned to rank")
    def every_seed(x: dict) -> bool:
        return x["n_eureka"] == x["n_seeds"]

    full = [r for r in rivals if every_seed(a) and every_seed(arms[r])]
    mine = _eureka_epochs(a)
    m, lo, hi = claims.mean_interval(mine)  # NormSoftmax's mean Eureka epoch: each epoch pair's and the estimate
    verdicts, controls = [], []
    for r in rivals:
        b = arms[r]
        if r in full:
            theirs = _eureka_epochs(b)
            if min(len(mine), len(theirs)) < MIN_EUREKA_SEEDS:
                return claims.not_run(f"{norm} and {r} reach the threshold in fewer than {MIN_EUREKA_SEEDS} seeds "
                                      "each: no mean Eureka epochs with intervals to compare")
            m0, lo0, hi0 = claims.mean_interval(theirs)
            verdicts.append(claims.exceeds(-m, -hi, -m0, -lo0))
            controls.append(claims.fmt_interval(f"{r} mean Eureka epoch", m0, lo0, hi0)
                            + f" (both {b['n_seeds']}/{b['n_seeds']}: epochs compared)")
        else:
            verdicts.append(claims.rates_exceed(a["n_eureka"], a["n_seeds"], b["n_eureka"], b["n_seeds"]))
            controls.append(claims.fmt_rate(r, b["n_eureka"], b["n_seeds"]))
    if len(full) == len(rivals):
        label = f"{norm} mean Eureka epoch"
    else:
        m, lo, hi = claims.rate(a["n_eureka"], a["n_seeds"])
        label = f"{norm} Eureka-ratio {a['n_eureka']}/{a['n_seeds']}"
    return claims.score(m, (lo, hi), a["n_seeds"], f"{label}; against " + "; ".join(controls),
                        claims.weakest(*verdicts))


def larger_lr_score(arms_by_exp: dict) -> dict:
    """"This cannot be fixed by simply using a larger learning rate ... but it can be fixed by a simple
    normalization": over the reasoning task's experiments that differ only in the learning rate (same epochs, seeds,
    heads), Softmax at the largest rate against NormSoftmax at the smallest, NormSoftmax's Eureka-ratio above
    (rates_exceed, roles swapped as in a lower ratio); Softmax at the smallest rate is stated beside (what the
    larger rate itself changed)."""
    norm = INTERVENTIONS["normsoftmax"]
    grid = [a for name, a in sorted(arms_by_exp.items())
            if name.startswith("reasoning") and BASE in a and norm in a and a[BASE].get("lr") is not None
            and a[BASE]["lr"] == a[norm].get("lr")]

    def setting(a: dict) -> tuple:  # all that must match besides the rate
        return a[BASE].get("epochs"), a[BASE]["n_seeds"], a[BASE].get("n_heads"), a[BASE].get("d_head")

    pairs = [(lg, sm) for lg in grid for sm in grid if setting(lg) == setting(sm) and lg[BASE]["lr"] > sm[BASE]["lr"]]
    if not pairs:
        return claims.not_run("no two reasoning experiments that differ only in the learning rate, each with "
                              f"{BASE} and {norm}")
    large, small = max(pairs, key=lambda p: p[0][BASE]["lr"] / p[1][BASE]["lr"])  # the widest step of the grid
    s, n0, lr = large[BASE], small[norm], small[BASE]["lr"]
    p, lo, hi = claims.rate(s["n_eureka"], s["n_seeds"])
    control = (claims.fmt_rate(f"{norm} at lr {lr:g}", n0["n_eureka"], n0["n_seeds"]) + "; "
               + claims.fmt_rate(f"{BASE} at lr {lr:g}", small[BASE]["n_eureka"], small[BASE]["n_seeds"]))
    if small[BASE]["n_eureka"] == small[BASE]["n_seeds"]:  # no problem at the smaller rate: nothing to fix
        why = (f"every {BASE} seed at the smaller rate has a Eureka-moment: there is no problem for a larger rate "
               "or the normalisation to fix")
        return claims.score(p, (lo, hi), s["n_seeds"], control + f" (saturated: {BASE} learns at the smaller rate)",
                            claims.guard("not run", why))
    return claims.score(p, (lo, hi), s["n_seeds"], control,
                        claims.rates_exceed(n0["n_eureka"], n0["n_seeds"], s["n_eureka"], s["n_seeds"]))


def _pair(arms: dict, arm: str, exp: str):
    """None where the experiment holds the arm and Softmax and the arm trained a run of its own, else the 'not
    run' score saying which is missing, or which arm's run it repeats (:func:`counted_twice`)."""
    if arm not in arms or BASE not in arms:
        return claims.not_run(f"arms {arm!r} and {BASE!r} of experiment {exp!r} not both in the table")
    return counted_twice(arms, arm, exp, _table_ends, "every seed ends with the same Eureka epoch and final accuracy")


def _table_ends(a: dict):
    """How a table arm's seeds ended: per seed its final accuracy to three decimals and its Eureka epoch."""
    if "final_accs" not in a or "eureka_epochs" not in a:
        return None
    return [None if v is None else round(v, 3) for v in a["final_accs"]], list(a["eureka_epochs"])


def signature(x):
    """Every number of ``x`` (nested mappings and lists: one arm's statistics in any figure) to three significant
    digits, NaN as None: two arms that trained one run give the same signature."""
    if isinstance(x, dict):
        return tuple(sorted((str(k), signature(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(signature(v) for v in x)
    if isinstance(x, float):
        return None if x != x else float(f"{x:.3g}")
    return x


def twin(arms: dict, arm: str, ends) -> str | None:
    """The arm listed before ``arm`` (not the control) whose ``ends`` equal ``arm``'s (e.g. :func:`_table_ends`: per
    seed the same Eureka epoch and final test accuracy to three decimals). The two then trained one run (e.g. NormSoftmax+HT where
    NormSoftmax's cap never binds, so the temperature it rescales does not matter), and ``arm``'s claims add no
    evidence of their own."""
    mine = ends(arms[arm])
    for other in arms:
        if other == arm:
            return None
        if other != BASE and isinstance(arms[other], dict) and mine is not None and ends(arms[other]) == mine:
            return other
    return None


def counted_twice(arms: dict, arm: str, exp: str, ends=signature,
                  how: str = "every statistic of this figure the same to three significant digits") -> dict | None:
    """The 'not run' score of a claim on ``arm`` where ``arm`` trained the same run as an arm listed before it
    (:func:`twin` by ``ends``, which ``how`` describes), else None: its verdict would count the other arm's seeds
    twice."""
    other = twin(arms, arm, ends)
    if other is None:
        return None
    return claims.not_run(f"arm {arm!r} of experiment {exp!r} trained the same run as arm {other!r} ({how}): a "
                          f"verdict of its own would count {other!r}'s seeds twice")


def table1_scores(arms_by_exp: dict) -> dict:
    """Table 1's rows on its own task (the digits stand-in, config/eureka_table1.yaml): the other rows'
    Eureka-ratios and epochs against Softmax, the 'Acc.' column, the No-position task and the ResNet."""
    out = {}
    arms = arms_by_exp.get("digits", {})
    for key, arm in TABLE1_LOWERS.items():
        out[f"eureka.table.digits_{key}_lowers_ratio"] = _pair(arms, arm, "digits") or lower_ratio_score(
            arms[arm], arms[BASE])
    for key, arm in TABLE1_RAISES.items():
        out[f"eureka.table.digits_{key}_raises_ratio"] = _pair(arms, arm, "digits") or ratio_score(arms[arm], arms[BASE])
    key, arm = "normsoftmax_lowtemp", TABLE1_RAISES["normsoftmax_lowtemp"]
    out[f"eureka.table.digits_{key}_earlier_eureka"] = _pair(arms, arm, "digits") or epoch_score(arms[arm], arms[BASE])
    for key, arm in ACCURACY.items():
        out[f"eureka.table.digits_{key}_higher_accuracy"] = _pair(arms, arm, "digits") or accuracy_score(
            arms[arm], arms[BASE])
    nopos = arms_by_exp.get(NOPOS, {})
    out["eureka.table.digits_nopos_harder"] = harder_score(arms, nopos)
    arm = INTERVENTIONS["normsoftmax"]
    out["eureka.table.digits_nopos_normsoftmax_raises_ratio"] = _pair(nopos, arm, NOPOS) or ratio_score(
        nopos[arm], nopos[BASE])
    exp, arm = RESNET
    out["eureka.table.digits_resnet_learns_immediately"] = _pair(arms_by_exp.get(exp, {}), arm, exp) or immediate_score(
        arms_by_exp[exp][arm], arms_by_exp[exp][BASE])
    return out


def immediate_score(arm: dict, base: dict) -> dict:
    """"In contrast, a ResNet learns both tasks immediately": every seed of the arm has its Eureka epoch within
    the first IMMEDIATE of the run (claims.share_holds), and its share above the control's (the Softmax ViT's,
    same rule: claims.rates_exceed), the weakest of the two; where every control seed meets the rule the task
    shows no difficulty for the ResNet to be free of, and the claim is not run."""
    if any("eureka_epochs" not in a or "epochs" not in a for a in (arm, base)):
        return claims.not_run("the table holds no per-seed Eureka epochs or run length")

    def count(a: dict) -> tuple[int, int]:
        limit = IMMEDIATE * a["epochs"]
        return sum(1 for e in a["eureka_epochs"] if e is not None and e <= limit), a["n_seeds"]

    k, n = count(arm)
    k0, n0 = count(base)
    p, lo, hi = claims.rate(k, n)
    control = (f"{BASE} ViT: {k0} of {n0} seeds by epoch {IMMEDIATE * base['epochs']:g}; ResNet seeds with a "
               f"Eureka epoch at all: {arm['n_eureka']} of {n}")
    if k0 == n0:
        return claims.score(p, (lo, hi), n, control, claims.guard(
            "not run", f"every {BASE} ViT seed learns by the same epoch: the task shows no difficulty to be free of"))
    return claims.score(p, (lo, hi), n, control,
                        claims.weakest(claims.share_holds(k, n), claims.rates_exceed(k, n, k0, n0)))


def harder_score(main: dict, nopos: dict) -> dict:
    """The No-position task's Eureka-ratio below the main task's, on the Softmax arm (disjoint Wilson intervals:
    claims.rates_exceed with the roles swapped). One arm: the arms share seeds and data, so pooling them would count
    one seed's draw several times (on the digits stand-in the NormSoftmax arms train nearly one run)."""
    if BASE not in nopos or BASE not in main:
        return claims.not_run(f"arm {BASE!r} not in both experiment {NOPOS!r} and experiment 'digits'")
    k, n = nopos[BASE]["n_eureka"], nopos[BASE]["n_seeds"]
    k0, n0 = main[BASE]["n_eureka"], main[BASE]["n_seeds"]
    p, lo, hi = claims.rate(k, n)
    control = claims.fmt_rate(f"main task, {BASE}", k0, n0)
    if k0 == 0:  # no ratio can be lower: this regime cannot show the claim
        return claims.score(p, (lo, hi), n, control, claims.guard(
            "not run", f"no {BASE} seed has a Eureka-moment on the main task: no ratio can be lower"))
    return claims.score(p, (lo, hi), n, control, claims.rates_exceed(k0, n0, k, n))


def accuracy_score(arm: dict, base: dict) -> dict:
    """Table 1's 'Acc.' (the mean final test accuracy of the seeds with a Eureka-moment) of the arm above the
    control's (t intervals, claims.exceeds); both need MIN_EUREKA_SEEDS such seeds for an interval."""
    if "final_accs" not in arm or "eureka_epochs" not in arm:
        return claims.not_run("the eureka artifact holds no per-seed final accuracies")
    def after_eureka(a: dict) -> list[float]:
        return [acc for acc, e in zip(a["final_accs"], a["eureka_epochs"]) if e is not None and acc is not None]

    return mean_against_base(after_eureka(arm), after_eureka(base), f"{BASE} accuracy after the Eureka-moment",
                             f"{{n}} {BASE} seed(s) with a Eureka-moment: no accuracy after it with an interval "
                             "to compare with",
                             "{n} seed(s) of the arm have a Eureka-moment: no accuracy after it with an interval "
                             "(the arm's Eureka-ratio is its own claim)", arm_short="not run")


def mean_against_base(a: list[float], b: list[float], control_label: str, base_why: str, arm_why: str,
                      lower: bool = False, arm_short: str = "not reproduced") -> dict:
    """The mean of the arm's values ``a`` above the control's ``b`` (below, with ``lower``), t intervals
    (claims.exceeds). Each mean needs MIN_EUREKA_SEEDS values for an interval: a control with fewer cannot be
    compared with (not run, ``base_why``), an arm with fewer gets ``arm_short`` (``arm_why``): not reproduced
    where the shortfall is the claim's failure (no earlier Eureka-moment), not run where it leaves nothing to
    measure (no accuracy after a Eureka-moment); ``{n}`` in either is the count."""
    if len(b) < MIN_EUREKA_SEEDS:
        return claims.not_run(base_why.format(n=len(b)))
    m0, lo0, hi0 = claims.mean_interval(b)
    control = claims.fmt_interval(control_label, m0, lo0, hi0) + f" over {len(b)} seeds"
    m, lo, hi = claims.mean_interval(a)
    if len(a) < MIN_EUREKA_SEEDS:
        return claims.score(m, (lo, hi), len(a), control, claims.guard(arm_short, arm_why.format(n=len(a))))
    rule = claims.exceeds(-m, -hi, -m0, -lo0) if lower else claims.exceeds(m, lo, m0, hi0)
    return claims.score(m, (lo, hi), len(a), control, rule)


def plateau_score(base: dict | None) -> dict:
    """Of the Softmax seeds without a Eureka-moment, the share whose training accuracy stays below the threshold
    too (train and test on the plateau together, the paper's Sec. 2) rather than fitting the training set."""
    if base is None or "n_plateau" not in base:
        return claims.not_run(f"arm {BASE!r} is not in the table, or its artifact has no train-side counts")
    n = base["n_plateau"] + base["n_memorise"]
    if n == 0:
        return claims.not_run(f"saturated: every {BASE} seed has a Eureka-moment, no seed without one to classify")
    p, lo, hi = claims.rate(base["n_plateau"], n)
    return claims.score(p, (lo, hi), n, f"{base['n_memorise']} of {n} {BASE} seeds without a Eureka-moment fit "
                        "their training set (final train accuracy above the threshold)",
                        claims.share_holds(base["n_plateau"], n))


def lower_ratio_score(arm: dict, base: dict) -> dict:
    """The arm's Eureka-ratio below the control's (disjoint Wilson intervals); a control at zero is said."""
    p, lo, hi = claims.rate(arm["n_eureka"], arm["n_seeds"])
    if base["n_eureka"] == 0:  # no ratio can be lower: this regime cannot show the claim
        return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, 0, base["n_seeds"])
                            + " (no Softmax seed reaches the threshold: no ratio can be lower)",
                            claims.guard("not run", "the control's Eureka-ratio is 0: no ratio can be lower"))
    # the control's share above the arm's: the same Wilson rule as a rise, with the roles swapped
    return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, base["n_eureka"], base["n_seeds"]),
                        claims.rates_exceed(base["n_eureka"], base["n_seeds"], arm["n_eureka"], arm["n_seeds"]))


def ratio_score(arm: dict, base: dict) -> dict:
    """The arm's Eureka-ratio above the control's (disjoint Wilson intervals); a saturated control is said."""
    if base["n_eureka"] == base["n_seeds"]:  # no ratio can exceed it: this regime cannot show the claim
        p, lo, hi = claims.rate(arm["n_eureka"], arm["n_seeds"])
        return claims.score(p, (lo, hi), arm["n_seeds"], claims.fmt_rate(BASE, base["n_eureka"], base["n_seeds"])
                            + " (saturated: no ratio can exceed it)",
                            claims.guard("not run", "the control's Eureka-ratio is 1: no ratio can exceed it"))
    return claims.rate_exceeds(arm["n_eureka"], arm["n_seeds"], base["n_eureka"], base["n_seeds"], BASE)


def epoch_score(arm: dict, base: dict) -> dict:
    """The arm's mean Eureka epoch before the control's (t intervals, over the seeds that have one). A mean needs
    two seeds with a Eureka-moment for an interval: a control with fewer cannot be compared with (not run), an
    arm with fewer has not shown an earlier Eureka-moment (not reproduced)."""
    if "eureka_epochs" not in arm or "eureka_epochs" not in base:
        return claims.not_run("the eureka artifact holds no per-seed Eureka epochs")
    return mean_against_base(_eureka_epochs(arm), _eureka_epochs(base), f"{BASE} mean Eureka epoch",
                             f"{{n}} {BASE} seed(s) reach the threshold: no mean Eureka epoch with an interval "
                             "to compare with",
                             "{n} seed(s) of the arm have a Eureka-moment: no earlier mean with an interval",
                             lower=True)


def _eureka_epochs(arm: dict) -> list[float]:
    """The Eureka epochs of the arm's seeds that have one."""
    return [e for e in arm["eureka_epochs"] if e is not None]
