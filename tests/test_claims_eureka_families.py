"""Every Eureka claim of a family (the same sentence scored per arm and per task) moved across its rule both ways
through its figure's ``score_claims``: a planted effect gives the claimed side for every arm and task at once, a
null (the effect removed, the arms still their own runs) "not reproduced" for every one. The single-arm tests in
test_claims_eureka.py pin each rule's conventions; these make sure no arm or task of a family is left one-sided."""
import re

import numpy as np
from test_claims_eureka import EXPERIMENTS, LEVEL, _arm, _default_stats, _probe, _traj

from pipeline_lib import declarations
from pipeline_lib.figures import eureka_accuracy as acc
from pipeline_lib.figures import eureka_arms as arms
from pipeline_lib.figures import eureka_attention_distribution as dist
from pipeline_lib.figures import eureka_probes as probes
from pipeline_lib.figures import eureka_qkv_gradients as qkv
from pipeline_lib.scoring import eureka_accuracy as acc_rules
from pipeline_lib.scoring import eureka_attention_distribution as dist_rules
from pipeline_lib.scoring import eureka_probes as probes_rules
from pipeline_lib.scoring import eureka_qkv_gradients as qkv_rules
from pipeline_lib.scoring import eureka_table as table_rules


def _family(module: str, pattern: str) -> list[str]:
    """The declared claims of ``module`` whose id matches ``pattern`` (at least two: a family)."""
    ids = [cid for cid in declarations.figure_claims(module) if re.search(pattern, cid)]
    assert len(ids) >= 2, (module, pattern, ids)
    return ids


def _verdicts(scores: dict, ids: list[str]) -> dict:
    return {cid: scores[cid]["verdict"] for cid in ids}


def _both_ways(planted: dict, null: dict, ids: list[str]) -> None:
    assert _verdicts(planted, ids) == dict.fromkeys(ids, "reproduced")
    assert _verdicts(null, ids) == dict.fromkeys(ids, "not reproduced")


def _accuracy(eurekas_of, epochs: int = 101, train_shift: int = 0) -> dict:
    """``acc_rules.score_claims`` of both tasks, each arm's seeds' Eureka epochs ``eurekas_of(arm, i)``; the training
    loss leaping ``train_shift`` epochs before the test loss."""
    rows = {}
    for exp, labels in EXPERIMENTS.items():
        rows[exp] = {}
        for i, lbl in enumerate(labels):
            ds = _traj(eurekas_of(lbl, i), epochs=epochs)
            ds["train_loss"] = (("seed", "epoch"), np.roll(ds["test_loss"].values, -train_shift, axis=1))
            rows[exp][lbl] = ds
    stats = acc.eureka_accuracy_stats(rows, dict.fromkeys(rows, LEVEL), dict.fromkeys(rows, 0.7))
    return acc_rules.score_claims(stats, None)


def test_every_speed_claim_on_both_tasks_goes_both_ways():
    """"95% of the baseline in 20% of the steps", every intervention of both tasks: Softmax's seeds at epoch 60,
    the arm's at 8 (a ratio 0.13) against the arm's at 60 (1.0); one seed apart per arm, so no two arms are one run."""
    ids = _family("eureka_accuracy", r"_95pct_in_20pct_of_steps$")
    fast = _accuracy(lambda lbl, i: [60] * 10 if lbl == arms.BASE else [8] * 9 + [8 + i])
    slow = _accuracy(lambda lbl, i: [60] * 10 if lbl == arms.BASE else [60] * 9 + [60 + i])
    _both_ways(fast, slow, ids)


def test_every_plateau_and_leap_claim_on_both_tasks_goes_both_ways():
    """Plateau-then-jump and the losses leaping together, on both tasks: 8 of 10 Softmax seeds sit 230-265 epochs
    on the plateau and jump in 2, both losses with them; the null sits under 200 epochs and its training loss leaps
    20 epochs before the test loss."""
    ids = _family("eureka_accuracy", r"_(plateau_then_jump|losses_leap_together)$")
    jumps = _accuracy(lambda lbl, i: [240 + 5 * j for j in range(8)] + [None, None], epochs=401)
    early = _accuracy(lambda lbl, i: [150 + 5 * j for j in range(10)], epochs=401, train_shift=20)
    _both_ways(jumps, early, ids)


def _dist_arm(high: float, spread: float, tiny: float = 0.7):
    """One arm's trajectory with ``high`` (+ a per-seed ``spread``) of the attention above 0.5 after epoch 0 and
    ``tiny`` of it below 0.05."""
    ds = _traj([50] * 5, high=high)
    hist = ds["attention_hist"].values
    hist[:, 1:, :, 10:] = (high + spread * np.arange(5) / 10)[:, None, None, None] / 10
    hist[:, 1:, :, 0] = tiny
    hist[:, 1:, :, 1:10] = (1 - tiny - hist[:, 1:, :, 10:].sum(-1, keepdims=True)) / 9
    return ds


def test_every_attention_distribution_claim_on_both_tasks_goes_both_ways():
    """Softmax's weights mostly below 0.05 (0.7 against a null of 0.3) and each intervention's share above 0.5
    over training higher than Softmax's (0.25 against 0.05; the null: Softmax's 0.05, each arm with its own
    spread)."""
    ids = _family("eureka_attention_distribution", r"_(softmax_mostly_tiny|more_high_weights)$")

    def scores(high_of, tiny: float) -> dict:
        rows = {exp: {lbl: _dist_arm(0.05, 0.01, tiny) if lbl == arms.BASE else _dist_arm(high_of(i), 0.01 + 0.002 * i)
                      for i, lbl in enumerate(labels)} for exp, labels in EXPERIMENTS.items()}
        return dist_rules.score_claims(dist.distribution_stats(rows, 3), None)

    _both_ways(scores(lambda i: 0.25 + 0.01 * i, 0.7), scores(lambda i: 0.05, 0.3), ids)


def test_heat_treatment_centralized_then_uniform_through_score_claims():
    """HT's share above 0.5 high at the first heated epoch and falling after, above Softmax's at the start, against
    a null whose share only rises."""
    def arm(by_epoch):
        return {str(e): {"above_0.5_per_seed": list(v + np.linspace(-0.002, 0.002, 5)), "below_0.05_per_seed": [0.6] * 5}
                for e, v in by_epoch.items()}

    softmax = arm({0: 0.0, 4: 0.0, 24: 0.01, 120: 0.02, 600: 0.04})
    cid = "eureka.attention_distribution.reasoning_ht_centralized_then_uniform"

    def verdict(ht: dict) -> str:
        return dist_rules.score_claims({"reasoning": {"Softmax": softmax, "HT": arm(ht)}}, None)[cid]["verdict"]

    assert verdict({0: 0.0, 4: 0.30, 24: 0.20, 120: 0.10, 600: 0.05}) == "reproduced"
    assert verdict({0: 0.0, 4: 0.03, 24: 0.04, 120: 0.05, 600: 0.05}) == "not reproduced"


def test_every_gradient_claim_on_both_tasks_goes_both_ways():
    """Softmax's W_Q and W_K gradients 0.5-1 orders under W_V's (0.2 against a null of 1.0), and each intervention
    raising their share (reasoning) or narrowing the gap (digits): 0.6 + a little per arm against Softmax's 0.1,
    the null at Softmax's 0.1 with its own spread per arm."""
    ids = _family("eureka_qkv_gradients", r"_(qk_gradients_small|raises_qk_share|narrows_qk_gap)$")

    def arm(ratio: float, spread: float):
        ds = _traj([50] * 5, q_over_v=ratio)
        ds["grad_W_Q"] = ds.grad_W_Q * (1 + spread * np.arange(5))[:, None, None, None]
        ds["grad_W_K"] = ds["grad_W_Q"]
        return ds

    def scores(softmax: float, other_of) -> dict:
        rows = {exp: {lbl: arm(softmax, 0.01) if lbl == arms.BASE else arm(other_of(i), 0.01 + 0.002 * i)
                      for i, lbl in enumerate(labels)} for exp, labels in EXPERIMENTS.items()}
        return qkv_rules.score_claims(qkv.gradient_stats(rows, dict.fromkeys(rows, 0.7)), None)

    small = [cid for cid in ids if cid.endswith("_qk_gradients_small")]
    planted, null = scores(0.2, lambda i: 0.6 + 0.01 * i), scores(1.0, lambda i: 1.0)
    _both_ways(planted, null, small)
    _both_ways(scores(0.1, lambda i: 0.6 + 0.01 * i), scores(0.1, lambda i: 0.1), sorted(set(ids) - set(small)))


def test_every_probe_claim_on_both_tasks_goes_both_ways():
    """The step-1 probe above the majority rate for each intervention (0.91 against a null at 0.5), and Fig. 2's
    contrasts within Softmax and HT: the seeds with a Eureka-moment decode 0.97 against 0.55 without (the null:
    0.57 in both groups)."""
    ids = _family("eureka_probes", r"_step1_(decodable|not_decodable_without_eureka|decodable_with_eureka)$")
    eureka = [40.0, 55.0, None, None, None, None]

    def scores(with_, without, decoded) -> dict:
        def per_arm(lbl, i):
            if lbl in (arms.BASE, arms.INTERVENTIONS["ht"]):
                return _probe([with_ + 0.01 * j for j in range(2)] + [without + 0.01 * j for j in range(4)])
            return _probe([decoded + 0.001 * i + 0.02 * j for j in range(4)])  # mean decoded + 0.03

        stats = probes.probe_stats({exp: {lbl: per_arm(lbl, i) for i, lbl in enumerate(labels)}
                                    for exp, labels in EXPERIMENTS.items()})
        for exp in stats:
            stats[exp]["eureka_epoch_per_seed"] = {lbl: eureka if lbl in (arms.BASE, arms.INTERVENTIONS["ht"])
                                                   else [None] * 4 for lbl in EXPERIMENTS[exp]}
        return probes_rules.score_claims(stats, None)

    _both_ways(scores(0.97, 0.55, 0.88), scores(0.57, 0.57, 0.47), ids)


def _table(epochs_of, k_of=lambda exp, lbl: 10, memorise: int = 0) -> dict:
    """``table_rules.score_claims`` of every table experiment: each arm ``k_of`` of 10 seeds learned, at epochs
    ``epochs_of(exp, arm, i)``, each arm's final accuracies its own (no two arms one run); ``memorise`` of
    Softmax's seeds memorised rather than plateaued."""
    base = _default_stats("eureka_table")["arms"]
    out = {}
    for exp, arms_ in base.items():
        out[exp] = {}
        for i, (lbl, a) in enumerate(arms_.items()):
            k = k_of(exp, lbl)
            epochs = epochs_of(exp, lbl, i)[:k]
            out[exp][lbl] = {**a, **_arm(k, 10, epochs, memorise if lbl == arms.BASE else 0),
                             "final_accs": [0.5 + 0.01 * i + 0.4 * (j < k) for j in range(10)]}
    return table_rules.score_claims({"rows": [], "arms": out}, None)


def test_every_earlier_eureka_claim_goes_both_ways():
    """Each intervention's mean Eureka epoch before Softmax's, every experiment of the table: Softmax's ten seeds
    at 300-345, the arm's at 100-145 (the null: at Softmax's)."""
    ids = _family("eureka_table", r"_earlier_eureka$")
    soft = [300.0 + 5 * j for j in range(10)]
    early = _table(lambda exp, lbl, i: soft if lbl == arms.BASE else [100.0 + 5 * j + i for j in range(10)])
    same = _table(lambda exp, lbl, i: soft)
    _both_ways(early, same, ids)


def test_table1_single_claims_through_score_claims():
    """The No-position task harder for Softmax (0/10 there against 9/10 on the main task; the null 9/10 on both),
    the ResNet past the threshold by epoch 3 where Softmax's seeds learn from epoch 30 (the null: at epoch 40 of 100),
    and the reasoning Softmax seeds without a Eureka-moment on the plateau (8 of 8; the null: 4 of 8 memorise)."""
    def k_of(nopos_softmax: int):
        return lambda exp, lbl: (nopos_softmax if exp == arms.NOPOS and lbl == arms.BASE else
                                 9 if exp == "digits" and lbl == arms.BASE else 2 if lbl == arms.BASE else 10)

    def epochs_of(resnet: float):
        return lambda exp, lbl, i: [resnet] * 10 if exp == arms.RESNET[0] else [30.0 + 5 * j + i for j in range(10)]

    planted = _table(epochs_of(3.0), k_of(0))
    null = _table(epochs_of(40.0), k_of(9), memorise=4)
    ids = ["eureka.table.digits_nopos_harder", "eureka.table.digits_resnet_learns_immediately",
           "eureka.table.reasoning_non_eureka_softmax_seeds_plateau"]
    _both_ways(planted, null, ids)
