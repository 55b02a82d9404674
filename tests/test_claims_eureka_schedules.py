"""The Eureka paper's schedule sensitivity (Sec. 5.3; figure eureka_schedules): Softmax's spread of Eureka-ratios
over the schedules against its permutation null and a seed control, the lower temperature's smaller spread beyond
seed noise, and each rule's rates on planted effects and nulls (the bounds every rule kind meets in
tests/test_claims.py); the figure built from eureka artifacts on disk: tests/test_figures_synthetic.py."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from conftest import REPO, load_yaml
from pipeline_lib import claims
from pipeline_lib.figures import eureka_schedules as sched
from pipeline_lib.scoring import eureka_schedules as sched_rules

SOFTMAX, COLD = sched.BASE, sched.LOWTEMP


def _entry(softmax, cold=None, control=(3, 10), n=10):
    """A task's stats: Eureka counts of each arm per schedule (the reference first), and the seed control."""
    arms = {SOFTMAX: {"n_eureka": list(softmax), "n_seeds": [n] * len(softmax)}}
    if cold is not None:
        arms[COLD] = {"n_eureka": list(cold), "n_seeds": [n] * len(cold)}
    entry = {"schedules": [f"s{i}" for i in range(len(softmax))], "arms": arms}
    if control is not None:
        entry["control"] = {"n_eureka": control[0], "n_seeds": control[1]}
    return entry


def _rates(score, cells_of, trials=100) -> dict:
    """Verdict shares of ``score`` over ``trials`` draws of 10 seeds per cell at the planted ratios."""
    verdicts = Counter()
    for i in range(trials):
        rng = np.random.default_rng(10_000 + i)
        verdicts[score(cells_of(rng))["verdict"]] += 1
    return {v: c / trials for v, c in verdicts.items()}


def _draw(rng, ratios):
    return [int(rng.binomial(10, p)) for p in ratios]


def test_sensitivity_is_the_spread_against_its_permutation_null():
    s = sched_rules.sensitive_score(_entry([3, 3, 10, 4]))
    assert s["verdict"] == "reproduced" and s["measured"] == pytest.approx(0.7)
    assert s["rule"]["kind"] == "exceeds" and s["rule"]["args"]["control_high"] < 0.7
    assert "permutation p" in s["control"] and "s2 10/10" in s["control"]
    # the same spread between ratios near 1/2, where seed noise alone spreads them as far: not shown
    assert sched_rules.sensitive_score(_entry([3, 5, 6, 4]))["verdict"] == "not reproduced"
    # four Eureka seeds of forty, all under one schedule: unlikely without a schedule effect
    assert sched_rules.sensitive_score(_entry([0, 0, 4, 0], control=(0, 10)))["verdict"] == "reproduced"
    assert claims.crossings(s["rule"]) == ("reproduced", "not reproduced")


def test_sensitivity_rates_on_a_planted_effect_and_on_nulls():
    def score(ratios):
        return lambda rng: sched_rules.sensitive_score(_entry(_draw(rng, ratios), control=(0, 10)), n_perm=500)

    planted = _rates(score([0.3, 0.3, 1.0, 0.0]), lambda rng: rng)
    assert planted.get("reproduced", 0) >= 0.8, planted
    for ratio in (0.1, 0.3, 0.5):
        null = _rates(score([ratio] * 4), lambda rng: rng)
        assert null.get("not reproduced", 0) >= 0.8 and null.get("reproduced", 0) <= 0.05, (ratio, null)


def test_sensitivity_is_void_where_two_seed_sets_of_one_schedule_differ_as_much():
    s = sched_rules.sensitive_score(_entry([1, 1, 10, 1], control=(10, 10)))
    assert s["verdict"] == "not reproduced" and s["rule"]["kind"] == "guard" and "seed sets" in s["rule"]["args"]["why"]
    assert sched_rules.sensitive_score(_entry([1, 1, 10, 1], control=(2, 10)))["verdict"] == "reproduced"


def test_sensitivity_not_run_without_two_schedules_or_a_control():
    assert sched_rules.sensitive_score(None)["verdict"] == "not run"
    assert sched_rules.sensitive_score(_entry([3]))["verdict"] == "not run"
    assert sched_rules.sensitive_score(_entry([3, 9], control=None))["verdict"] == "not run"


def test_expected_spread_of_binomial_shares_matches_simulation():
    rng = np.random.default_rng(0)
    for p, n, k in ((0.3, 10, 4), (0.5, 10, 2), (0.9, 20, 3)):
        x = rng.binomial(n, p, size=(100_000, k)) / n
        assert sched_rules._binomial_spread(p, n, k) == pytest.approx((x.max(1) - x.min(1)).mean(), abs=3e-3), (p, n, k)
    assert sched_rules._binomial_spread(0.0, 10, 4) == 0.0 and sched_rules._binomial_spread(1.0, 10, 4) == 0.0


def test_less_sensitive_is_the_gap_of_spreads_beyond_seed_noise():
    s = sched_rules.less_sensitive_score(_entry([0, 10, 0, 10], cold=[10, 10, 10, 10]))
    assert s["verdict"] == "reproduced" and s["measured"] > 0.5 and s["ci_low"] > 0
    # the other way round, and a flat Softmax beside a varying tau = 1/3: against the claim
    assert sched_rules.less_sensitive_score(_entry([10, 10, 10, 9], cold=[0, 10, 0, 10]))["verdict"] == "not reproduced"
    assert sched_rules.less_sensitive_score(_entry([0, 0, 0, 0], cold=[5, 2, 9, 1]))["verdict"] == "not reproduced"
    s = sched_rules.less_sensitive_score(_entry([3, 6, 4, 2], cold=[6, 7, 6, 6]))
    assert s["ci_low"] < 0 < s["ci_high"] and s["verdict"] in ("partial", "not reproduced")
    assert claims.crossings(s["rule"]) == ("reproduced", "not reproduced")
    assert sched_rules.less_sensitive_score(_entry([0, 5, 0, 0]))["verdict"] == "not run"  # no lower-temperature arm


def test_less_sensitive_rates_on_a_planted_effect_and_on_nulls():
    """Nulls: both arms flat over the schedules at different ratios (a raw spread would favour the arm nearer to
    0 or 1, e.g. Table 1's 7/10 against 10/10)."""
    def score(soft, cold):
        return lambda rng: sched_rules.less_sensitive_score(_entry(_draw(rng, soft), cold=_draw(rng, cold)), n_draws=300)

    # Softmax from 0 to 1 over the schedules against a flat 0.9 (a weaker planted effect, 0.3 / 0.3 / 1 / 0 against
    # 0.8, scores reproduced 80% of the time: ten seeds per cell resolve a large difference in sensitivity only)
    planted = _rates(score([0.1, 0.1, 1.0, 0.0], [0.9] * 4), lambda rng: rng)
    assert planted.get("reproduced", 0) >= 0.8, planted
    for soft, cold in ((0.5, 0.95), (0.3, 0.6), (0.5, 0.5)):
        null = _rates(score([soft] * 4, [cold] * 4), lambda rng: rng)
        assert null.get("not reproduced", 0) >= 0.8 and null.get("reproduced", 0) <= 0.05, (soft, cold, null)


def test_spread_gap_interval_keeps_the_uncertainty_of_saturated_cells_and_is_reproducible():
    a, b = [(3, 10), (6, 10), (4, 10)], [(6, 10), (7, 10), (6, 10)]
    gap, lo, hi = sched_rules.spread_gap(a, b)
    assert lo < gap < hi and sched_rules.spread_gap(a, b) == (gap, lo, hi)
    gap, lo, hi = sched_rules.spread_gap([(0, 10), (0, 10)], [(10, 10), (10, 10)])
    assert gap == 0.0 and lo < -0.05 and hi > 0.05  # no spread measured, yet 10 seeds leave an interval


def test_the_schedule_config_changes_the_schedule_alone():
    """Within each task every run equals the reference-schedule run of its arm but for the optimizer's schedule
    keys, the two arms the claims compare differ in the temperature alone, every other arm from Softmax in its
    attention alone, and the control in its seeds alone."""
    cfg = load_yaml(REPO / "config" / "eureka_schedules.yaml")
    runs, eureka = cfg["runs"], cfg["analyses"]["eureka"]
    shape = {"warmup_epochs", "min_lr", "cooldown_epochs"}
    for task, spec in cfg["figures"]["eureka_schedules"]["tasks"].items():
        ref = eureka[spec["schedules"][0]]["arms"]
        for exp in spec["schedules"]:
            arms = eureka[exp]["arms"]
            assert {SOFTMAX, COLD} <= set(arms), exp
            soft, cold = runs[arms[SOFTMAX]], runs[arms[COLD]]
            for other in arms.values():
                assert {k for k in soft if soft[k] != runs[other][k]} <= {"attention"}, (exp, other)
            assert soft["attention"]["tau"] == "sqrt_d" and cold["attention"]["tau"] == pytest.approx(1 / 3), exp
            assert soft["attention"]["variant"] == cold["attention"]["variant"] == "softmax", exp
            assert cold["attention"].get("schedule", "none") == soft["attention"]["schedule"] == "none", exp
            for arm, run in arms.items():
                a, b = runs[run], runs[ref[arm]]
                assert {k for k in a if a[k] != b[k]} <= {"optimizer"}, (task, run)
                assert {k for k in a["optimizer"] if a["optimizer"][k] != b["optimizer"][k]} <= shape, (task, run)
        ctrl = runs[eureka[spec["control"]]["arms"][SOFTMAX]]
        base = runs[ref[SOFTMAX]]
        assert {k for k in ctrl if ctrl[k] != base[k]} == {"seeds"}
        assert not set(ctrl["seeds"]) & set(range(base["seeds"]))


@pytest.mark.parametrize("task", sched.TASKS)
def test_each_tasks_claims_through_score_claims_planted_and_null(task):
    """Each task's two claims through ``score_claims``: a Softmax ratio that swings over the schedules where
    the lower temperature's holds (both reproduced); a flat Softmax beside a lower temperature that swings (neither)."""
    swing, flat = [0, 0, 10, 0, 10, 0], [5, 5, 5, 5, 5, 5]
    planted = sched_rules.score_claims({"tasks": {task: _entry(swing, [10] * 6, control=(5, 10))}}, None)
    null = sched_rules.score_claims({"tasks": {task: _entry(flat, swing, control=(5, 10))}}, None)
    for claim in (f"eureka.schedules.{task}_softmax_ratio_sensitive", f"eureka.schedules.{task}_lowtemp_less_sensitive"):
        assert (planted[claim]["verdict"], null[claim]["verdict"]) == ("reproduced", "not reproduced"), claim
