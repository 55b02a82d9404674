"""The Eureka paper's schedule sensitivity (Sec. 5.3; figure eureka_schedules): the Softmax ratio's difference
between schedules against a seed control, and the lower temperature's smaller spread, on planted counts (the
figure built from eureka artifacts on disk: tests/test_figures_synthetic.py)."""
from __future__ import annotations

import pytest

from conftest import REPO, load_yaml
from pipeline_lib import claims
from pipeline_lib.figures import eureka_schedules as sched

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


def test_sensitivity_needs_disjoint_wilson_intervals_in_either_direction():
    assert sched.sensitive_score(_entry([3, 3, 10, 4]))["verdict"] == "reproduced"  # 10/10 vs 3/10: disjoint
    low = sched.sensitive_score(_entry([8, 8, 0, 7], control=(8, 10)))
    assert low["verdict"] == "reproduced" and low["measured"] == 0.0  # a schedule that lowers the ratio counts
    assert "furthest schedule s2" in low["control"]
    assert sched.sensitive_score(_entry([3, 6, 4, 2]))["verdict"] == "partial"  # 6/10 vs 3/10: one SE, overlapping
    assert sched.sensitive_score(_entry([3, 3, 4, 3]))["verdict"] == "not reproduced"


def test_sensitivity_is_void_where_two_seed_sets_of_one_schedule_differ_as_much():
    s = sched.sensitive_score(_entry([3, 6, 4, 2], control=(6, 10)))  # the control reaches "partial" too
    assert s["verdict"] == "not reproduced" and s["rule"]["kind"] == "guard" and "seed sets" in s["rule"]["args"]["why"]
    # a seed control at a lower tier leaves the schedules' verdict
    assert sched.sensitive_score(_entry([3, 3, 10, 4], control=(6, 10)))["verdict"] == "reproduced"


def test_sensitivity_not_run_without_two_schedules_or_a_control():
    assert sched.sensitive_score(None)["verdict"] == "not run"
    assert sched.sensitive_score(_entry([3]))["verdict"] == "not run"
    assert sched.sensitive_score(_entry([3, 9], control=None))["verdict"] == "not run"


def test_less_sensitive_is_the_spread_gap_with_a_posterior_interval():
    s = sched.less_sensitive_score(_entry([0, 10, 0, 10], cold=[10, 10, 10, 10]))
    assert s["measured"] == 1.0 and 0.5 < s["ci_low"] < 1.0 and s["verdict"] == "reproduced"
    # the same spreads the other way round: not reproduced
    assert sched.less_sensitive_score(_entry([10, 10, 10, 9], cold=[0, 10, 0, 10]))["verdict"] == "not reproduced"
    # a moderate gap: its interval reaches 0
    s = sched.less_sensitive_score(_entry([3, 6, 4, 2], cold=[6, 7, 6, 6]))
    assert s["measured"] == pytest.approx(0.3) and s["ci_low"] < 0 < s["ci_high"]
    assert s["verdict"] in ("partial", "not reproduced")
    assert claims.crossings(s["rule"]) == ("reproduced", "not reproduced")


def test_less_sensitive_not_run_when_softmax_is_the_same_under_every_schedule():
    s = sched.less_sensitive_score(_entry([0, 0, 0, 0], cold=[5, 2, 6, 9]))
    assert s["verdict"] == "not run" and s["rule"]["kind"] == "guard"
    assert sched.less_sensitive_score(_entry([0, 5, 0, 0]))["verdict"] == "not run"  # no lower-temperature arm


def test_spread_interval_keeps_the_uncertainty_of_saturated_cells_and_is_reproducible():
    a, b = [(3, 10), (6, 10), (4, 10)], [(6, 10), (7, 10), (6, 10)]
    gap, lo, hi = sched.spread_gap(a, b)
    assert lo < gap < hi and gap == pytest.approx(0.3 - 0.1)
    assert sched.spread_gap(a, b) == (gap, lo, hi)
    # 0/10 and 10/10 cells: no spread measured, yet 10 seeds leave an interval around it
    gap, lo, hi = sched.spread_gap([(0, 10), (0, 10)], [(10, 10), (10, 10)])
    assert gap == 0.0 and lo < -0.05 and hi > 0.05
    # more seeds, a narrower interval
    wide = sched.spread_gap([(3, 10), (6, 10)], [(5, 10), (5, 10)])
    narrow = sched.spread_gap([(30, 100), (60, 100)], [(50, 100), (50, 100)])
    assert narrow[2] - narrow[1] < wide[2] - wide[1]


def test_the_schedule_config_changes_the_schedule_alone():
    """Within each task every run equals the reference-schedule run but for its optimizer's schedule keys
    (and, between the arms, the temperature); the control only in its seeds."""
    cfg = load_yaml(REPO / "config" / "eureka_schedules.yaml")
    runs, eureka = cfg["runs"], cfg["analyses"]["eureka"]
    shape = {"warmup_epochs", "min_lr", "cooldown_epochs"}
    for task, spec in cfg["figures"]["eureka_schedules"]["tasks"].items():
        ref = eureka[spec["schedules"][0]]["arms"]
        for exp in spec["schedules"][1:]:
            for arm, run in eureka[exp]["arms"].items():
                a, b = runs[run], runs[ref[arm]]
                assert {k for k in a if a[k] != b[k]} == {"optimizer"}, (task, run)
                assert {k for k in a["optimizer"] if a["optimizer"][k] != b["optimizer"][k]} <= shape, (task, run)
                assert a["optimizer"]["lr"] == b["optimizer"]["lr"], (task, run)
        ctrl = runs[eureka[spec["control"]]["arms"][SOFTMAX]]
        base = runs[ref[SOFTMAX]]
        assert {k for k in ctrl if ctrl[k] != base[k]} == {"seeds"}
        assert not set(ctrl["seeds"]) & set(range(base["seeds"]))
