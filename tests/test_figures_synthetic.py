"""Figures built from synthetic analysis artifacts with planted values: the figure module's ``build`` reads them
through the same paths as in a run, draws, and its stats report the planted numbers."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

from pipeline_lib.figures import joma_invariants, joma_logits, sln_optimality  # noqa: E402
from pipeline_lib.plumbing.config import load_config  # noqa: E402
from pipeline_lib.plumbing.paths import Paths  # noqa: E402
from pipeline_lib.plumbing.store import write_dataset  # noqa: E402
from pipeline_lib.scoring import joma_invariants as joma_invariants_rules  # noqa: E402


@pytest.fixture
def paths(tmp_path):
    return Paths(str(tmp_path / "results"))


@pytest.fixture
def cfg(smoke_raw):
    """The test config, for figures that read a run's optimizer or dataset."""
    return load_config(smoke_raw)


def _build(module, params, paths, cfg=None, outputs=None):
    fig, stats = module.build(cfg, params, paths, outputs or {})
    try:
        assert fig.axes and stats["summary"]
    finally:
        plt.close(fig)
    return stats


def test_sln_optimality_reports_the_planted_rates(paths):
    sizes = np.arange(5, 13)  # 5..9 are the talk's "under 10 nodes"
    queries = np.full(len(sizes), 100)
    n_opt = np.stack([np.full(len(sizes), 100), np.arange(len(sizes)) + 80])  # scaled: all; unscaled: 80..87
    an = xr.Dataset({"optimal": (("variant", "n_nodes"), n_opt / queries),
                     "reached": (("variant", "n_nodes"), np.ones_like(n_opt, dtype=float)),
                     "n_optimal": (("variant", "n_nodes"), n_opt), "n_queries": ("n_nodes", queries)},
                    coords={"variant": ["scaled", "unscaled"], "n_nodes": sizes},
                    attrs={"edge_prob": 0.5, "graphs_per_size": 10})
    write_dataset(an, paths.analysis("sln", "gnp"))
    stats = _build(sln_optimality, sln_optimality.Params(sln="gnp"), paths)
    scaled, unscaled = stats["variants"]["scaled"], stats["variants"]["unscaled"]
    assert scaled["overall"] == 1.0 and scaled["min_over_sizes"] == 1.0
    assert unscaled["overall"] == pytest.approx((80 + 87) / 2 / 100) and unscaled["min_over_sizes"] == 0.8
    assert unscaled["n_queries_under_10"] == 500 and unscaled["n_optimal_under_10"] == 80 + 81 + 82 + 83 + 84
    assert unscaled["per_size"][12] == 0.87


def test_joma_logits_reports_the_planted_correlations(paths):
    rng = np.random.default_rng(0)
    S, T, M = 3, 5, 16
    z = rng.normal(size=(S, T, M))
    zhat = z.copy()
    zhat[:, 2] = -z[:, 2]  # at step 2, zhat is anti-correlated with z: NC = -1
    nc = np.ones((S, T))
    nc[:, 2] = -1.0
    an = xr.Dataset({"z": (("seed", "step", "token"), z), "zhat": (("seed", "step", "token"), zhat),
                     "nc": (("seed", "step"), nc), "nc_term1": (("seed", "step"), 0.5 * nc),
                     "nc_term2": (("seed", "step"), 0.25 * nc),
                     "v_stable_rank": (("seed", "step"), np.tile([6.0, 3, 2, 1.5, 1.2], (S, 1))),
                     "vdot_stable_rank": (("seed", "step"), np.tile([np.nan, 1, 1, 1, 1.1], (S, 1))),
                     "v_max_rank": ((), 16),
                     # row 0 grows by 10 over the run (by 1 in the first step), every other row by 1 (0.5)
                     "v_row_norm": (("seed", "step", "token"), np.broadcast_to(
                         np.where(np.arange(M) == 0, np.array([0, 1, 4, 7, 10.0])[:, None],
                                  np.array([0, 0.5, 0.6, 0.8, 1.0])[:, None]), (S, T, M)).copy())},
                    coords={"seed": [0, 1, 2], "step": np.arange(T) * 10})
    write_dataset(an, paths.analysis("joma", "run_a"))
    stats = _build(joma_logits, joma_logits.Params(cases=(("gaussian", "run_a"),)), paths)
    s = stats["gaussian"]
    assert s["min_nc_after_step0"]["per_seed"] == [-1.0, -1.0, -1.0]
    assert s["final_nc"] == [1.0] * 3 and s["final_nc_term1"] == [0.5] * 3 and s["final_nc_term2"] == [0.25] * 3
    # the frozen reference: z at the last step against z at step 0 (independent draws: far from 1)
    assert all(abs(v) < 0.9 for v in s["final_nc_frozen"])
    assert s["max_rank"] == 16 and s["v_rank_initial_per_seed"] == [6.0] * 3 and s["v_rank_final_per_seed"] == [1.2] * 3
    assert s["v_rank_median_per_seed"] == [1.75] * 3 and s["vdot_rank_median_per_seed"] == [1.0] * 3  # steps 1..end
    assert s["v_row_growth_ratio_per_seed"] == [10.0] * 3 and s["v_row_growth_ratio_first_step_per_seed"] == [2.0] * 3


def test_edge_spectrum_reports_the_planted_correlations(paths):
    from pipeline_lib.analysis.edge_correlation import SOURCES
    from pipeline_lib.figures import edge_spectrum

    S, G, K = 2, 4, 2
    level = {"trained": 0.95, "untrained": 0.5, "gaussian": 0.2, "endpoint_sum": 0.6}  # max |corr| with every u_k
    corr = np.stack([np.full((S, G, K), level[s]) for s in SOURCES])
    corr[0, 0, 0, 0] = np.nan  # a graph without a finite value in one seed: skipped, not counted
    an = xr.Dataset({"max_corr": (("source", "seed", "graph", "component"), corr),
                     "principal_cos": (("source", "seed", "graph", "component"), corr / 2),
                     "n_nodes": ("graph", np.full(G, 6)), "n_edges": ("graph", np.full(G, 8))},
                    coords={"source": list(SOURCES), "seed": [0, 1], "graph": np.arange(G),
                            "component": np.arange(1, K + 1)})
    write_dataset(an, paths.analysis("edge_correlation", "sp"))
    stats = _build(edge_spectrum, edge_spectrum.Params(runs=("sp",), threshold=0.9), paths)
    src = stats["sources"]
    assert list(SOURCES).index("trained") == 0
    assert src["trained"]["u1"] == {"n": S * G - 1, "median": pytest.approx(0.95), "frac_above": 1.0}
    assert src["untrained"]["u1"]["frac_above"] == 0.0 and src["gaussian"]["u1"]["median"] == pytest.approx(0.2)
    assert src["trained"]["principal_cos"]["median"] == pytest.approx(0.475)
    assert src["trained"]["per_graph"]["u1"] == [0.95] * G  # the NaN seed is skipped in graph 0's mean
    assert src["endpoint_sum"]["u1"]["median"] == pytest.approx(0.6)


def test_shortest_path_accuracy_reports_the_planted_accuracies(paths):
    from pipeline_lib.figures import shortest_path_accuracy

    S, K, N = 3, 4, 10
    path_acc = np.tile(np.linspace(0.1, 0.9, K), (S, 1)) + np.array([[0.0], [0.05], [0.1]])  # (seed, snapshot)
    exact = np.zeros((S, N))
    exact[:, :7] = 1.0  # 7 of 10 test sequences match the dataset's path in every seed
    lengths, sizes = np.array([1, 2, 3]), np.array([5, 6])
    an = xr.Dataset({"path_acc": (("seed", "snapshot"), path_acc), "exact": (("seed", "sample"), exact),
                     "train_path_acc": ("seed", np.full(S, 0.99)),
                     "acc_by_length": (("seed", "length"), np.tile([1.0, 0.8, 0.5], (S, 1))),
                     "n_by_length": ("length", [4, 4, 2]),
                     "acc_by_size": (("seed", "n_nodes"), np.tile([0.9, 0.7], (S, 1))),
                     "n_by_size": ("n_nodes", [5, 5])},
                    coords={"seed": np.arange(S), "snapshot": [0, 10, 20, 30], "sample": np.arange(N),
                            "length": lengths, "n_nodes": sizes})
    traj = xr.Dataset({"test_acc": (("seed", "epoch"), np.tile(np.linspace(0.2, 0.6, 31), (S, 1)))},
                      coords={"seed": np.arange(S), "epoch": np.arange(31)})
    write_dataset(an, paths.analysis("path_accuracy", "sp"))
    write_dataset(traj, paths.trajectory("sp"))
    stats = _build(shortest_path_accuracy, shortest_path_accuracy.Params(runs=("sp",)), paths)
    s = stats["runs"]["sp"]
    assert s["path_acc_final"] == pytest.approx([0.9, 0.95, 1.0]) and s["path_acc_final_median"] == pytest.approx(0.95)
    assert s["exact_match_final_median"] == pytest.approx(0.7) and s["train_path_acc_median"] == pytest.approx(0.99)
    assert s["teacher_forced_test_acc_median"] == pytest.approx(0.6) and s["final_epoch"] == 30 and s["n_test"] == N
    assert s["by_length"] == {1: 1.0, 2: 0.8, 3: 0.5} and s["by_size"] == pytest.approx({5: 0.9, 6: 0.7})


def test_attention_entropy_reports_the_planted_entropies(paths):
    from pipeline_lib.figures import attention_entropy

    snapshots = np.array([0, 1, 10, 100, 1000])
    falling = np.tile([1.0, 0.8, 0.4, 0.2, 0.3], (2, 1))  # minimum at epoch 100, a rebound after it
    flat = np.full((2, 5), 0.7)
    for run, ent in (("falls", falling), ("flat", flat)):
        write_dataset(xr.Dataset({"mean_entropy": (("seed", "snapshot"), ent)},
                                 coords={"seed": [0, 1], "snapshot": snapshots}),
                      paths.analysis("attention_sparsity", run))
    stats = _build(attention_entropy, attention_entropy.Params(runs=("falls", "flat"), ncols=2), paths)
    assert stats["falls"] == {"initial_median": 1.0, "final_median": 0.3, "min_median": 0.2, "epoch_of_min": 100,
                              "final_per_seed": [0.3, 0.3], "initial_per_seed": [1.0, 1.0], "decreased": True}
    assert stats["flat"]["decreased"] is False and "1/2 runs" in stats["summary"]


def test_run_curves_joins_a_curriculum_and_reports_the_planted_final_accuracies(paths, cfg):
    from pipeline_lib.figures import run_curves

    start = cfg.start_epoch("curriculum_p2_p4")
    for run, epochs, acc in (("pretrain_p2", np.arange(0, start + 1), 0.9),
                             ("curriculum_p2_p4", np.arange(start, start + 11), 0.6)):
        seeds = list(cfg.runs[run].seeds)
        ones = np.ones((len(seeds), len(epochs)))
        write_dataset(xr.Dataset({"train_loss": (("seed", "epoch"), ones), "test_loss": (("seed", "epoch"), 2 * ones),
                                  "train_acc": (("seed", "epoch"), acc * ones),
                                  "test_acc": (("seed", "epoch"), acc * ones)},
                                 coords={"seed": seeds, "epoch": epochs}), paths.trajectory(run))
    stats = _build(run_curves, run_curves.Params(runs=("pretrain_p2", "curriculum_p2_p4"), per_row=1), paths, cfg)
    assert stats["runs"]["pretrain_p2"]["final_test_acc_median"] == pytest.approx(0.9)
    assert stats["runs"]["curriculum_p2_p4"] == {"seeds": len(cfg.runs["curriculum_p2_p4"].seeds), "epochs": start + 10,
                                                 "switches": [start], "final_test_acc_median": pytest.approx(0.6),
                                                 "final_test_loss_median": pytest.approx(2.0)}


def test_cogo_dynamics_reports_the_planted_structure_and_loss_epochs(paths):
    from pipeline_lib.figures import cogo_dynamics

    snaps, F = np.array([0, 10, 100, 1000]), 4
    # q_k per (seed, snapshot, freq): seed 0 has every frequency of order 0/4/6 from epoch 100 on, seed 1 from 10 on
    q = np.full((3, 4, F), 4)
    q[0, :2, 0] = 3
    q[1, 0, :] = 2
    order = np.full((3, 4, F), 4.0)
    err = np.full((3, 4, F), 1e-3)
    solved = np.array([1, 1, 0])  # seed 2 did not reach accuracy 1: left out
    an = xr.Dataset({"q_k": (("seed", "snapshot", "freq"), q), "order": (("seed", "snapshot", "freq"), order),
                     "fact_error": (("seed", "snapshot", "freq"), err), "solved": ("seed", solved)},
                    coords={"seed": [0, 1, 2], "snapshot": snaps, "freq": np.arange(F)})
    epochs = np.arange(0, 1001, 10)
    loss = np.tile(np.where(epochs < 50, 1.0, 0.05), (3, 1))  # falls below a tenth of epoch 0's at epoch 50
    traj = xr.Dataset({"train_loss": (("seed", "epoch"), loss), "test_loss": (("seed", "epoch"), loss)},
                      coords={"seed": [0, 1, 2], "epoch": epochs})
    write_dataset(an, paths.analysis("fourier", "cogo"))
    write_dataset(traj, paths.trajectory("cogo"))
    stats = _build(cogo_dynamics, cogo_dynamics.Params(run="cogo"), paths)
    assert stats["solved_seeds"] == 2
    assert stats["per_seed"]["seed"] == [0, 1]
    assert stats["per_seed"]["structure_epoch"] == [100, 10] and stats["per_seed"]["missing_epoch"] == [10, 0]
    assert stats["per_seed"]["loss_fall_epoch"] == [50, 50] and stats["per_seed"]["share_46_epoch0"] == [0.75, 0.0]
    assert stats["share_46"] == {0: 0.375, 10: 0.875, 100: 1.0, 1000: 1.0} and stats["first_epoch_all_46"] == 100
    assert stats["mean_error"][1000] == pytest.approx(1e-3)


def test_cogo_fourier_reports_the_planted_orders(paths, cfg):
    from pipeline_lib.figures import cogo_fourier
    run = next(r for r, rc in cfg.runs.items() if rc.optimizer.name == "adam" and cfg.runs[r].dataset.startswith("mod"))
    S, F, N = 3, 5, 8
    order = np.full((S, 2, F), 2.0)
    order[:, -1] = [4, 4, 6, 3, np.nan]  # final snapshot: 3 of the 4 finite frequencies of order 4 or 6
    rng = np.random.default_rng(0)
    an = xr.Dataset({"solved": ("seed", [1, 1, 0]), "order": (("seed", "snapshot", "freq"), order),
                     "node_freq": (("seed", "node"), np.tile([0, 1, -1, 2, 3, -1, 4, 0], (S, 1))),
                     **{f"{m}_mag": (("seed", "freq", "node"), rng.random((S, F, N))) for m in "ABC"}},
                    coords={"seed": [0, 1, 2], "snapshot": [0, 100], "freq": np.arange(F), "node": np.arange(N)},
                    attrs={"d": 7})
    write_dataset(an, paths.analysis("fourier", run))
    stats = _build(cogo_fourier, cogo_fourier.Params(runs=(run,)), paths, cfg)
    s = stats["runs"][run]
    assert s["solved_seeds"] == 2 and s["seeds"] == 3 and s["d"] == 7
    assert s["order_counts"] == {3: 2, 4: 4, 6: 2} and s["frac_order_4_or_6"] == 0.75
    assert s["init_frac_order_4_or_6"] == 0.0 and s["per_seed"]["frac_order_4_or_6"] == [0.75, 0.75]
    assert stats["heatmap"] == {"run": run, "seed": 0, "active_nodes": 6, "solved": True}
    assert s["optimizer"] == "adam" and s["lr"] == cfg.runs[run].optimizer.lr


def test_eureka_table_writes_the_planted_rows(paths, tmp_path, cfg):
    from pipeline_lib.figures import eureka_table

    arms = ["Softmax", "NormSoftmax"]
    an = xr.Dataset({"attention": ("arm", ["softmax", "normsoftmax"]), "n_eureka": ("arm", [3, 9]),
                     "n_seeds": ("arm", [10, 10]), "eureka_ratio": ("arm", [0.3, 0.9]),
                     "ratio_ci_low": ("arm", [0.11, 0.6]), "ratio_ci_high": ("arm", [0.6, 0.98]),
                     "acc_after_eureka": ("arm", [0.99, np.nan]), "mean_final_test_acc": ("arm", [0.5, 0.95]),
                     "mean_eureka_epoch": ("arm", [250.0, 120.4]), "lr": ("arm", [2e-3, 2e-3]),
                     "n_plateau": ("arm", [6, 1]), "n_memorise": ("arm", [1, 0]),
                     "eureka_epoch": (("arm", "seed"), [[10.0, np.nan], [np.nan, 20.0]])},
                    coords={"arm": arms, "seed": [0, 1]})
    write_dataset(an, paths.analysis("eureka", "reasoning"))
    outputs = {ext: str(tmp_path / f"table{ext}") for ext in (".csv", ".md")}
    stats = _build(eureka_table, eureka_table.Params(experiments=("reasoning",)), paths, cfg, outputs=outputs)
    assert stats["rows"][1] == {"experiment": "reasoning", "variant": "NormSoftmax", "attention": "normsoftmax",
                                "lr": "0.002", "Eureka-ratio": "9/10 = 0.90", "95% CI": "[0.60, 0.98]",
                                "acc. (Eureka seeds)": "-", "final acc. (all seeds)": "0.950", "mean Eureka epoch": "120",
                                "no Eureka: plateau / memorise": "1 / 0"}
    model = cfg.run_spec("r_softmax").model_params  # the test config's arm: its width per head
    d_head = model.d // model.n_heads
    assert stats["arms"]["reasoning"]["Softmax"] == {"n_seeds": 10, "n_eureka": 3, "eureka_epochs": [10.0, None],
                                                     "n_plateau": 6, "n_memorise": 1, "lr": 2e-3, "n_heads": model.n_heads, "d_head": d_head,
                                                     "sqrt_d_head": pytest.approx(d_head ** 0.5, abs=1e-4)}
    csv_lines = (tmp_path / "table.csv").read_text().splitlines()
    assert len(csv_lines) == 3 and csv_lines[1].startswith("reasoning,Softmax,softmax,0.002,3/10 = 0.30")
    assert "| reasoning | NormSoftmax |" in (tmp_path / "table.md").read_text()


def _write_eureka_counts(paths, name: str, arms: dict) -> None:
    """An analyses.eureka artifact: per arm (label -> Eureka count of 10 seeds) the counts, epochs and rate."""
    labels = list(arms)
    ep = np.full((len(labels), 10), np.nan, dtype=np.float32)
    for i, k in enumerate(arms.values()):
        ep[i, :k] = 40.0
    k = np.isfinite(ep).sum(1)
    per_arm = {"n_eureka": k, "n_seeds": [10] * len(labels), "eureka_ratio": k / 10, "ratio_ci_low": k * 0.0,
               "ratio_ci_high": k * 0.0 + 1, "acc_after_eureka": [0.9] * len(labels),
               "mean_final_test_acc": [0.8] * len(labels), "mean_eureka_epoch": [40.0] * len(labels),
               "n_plateau": 10 - k, "n_memorise": k * 0, "lr": [5e-4] * len(labels), "last_epoch": [60] * len(labels),
               "attention": ["softmax"] * len(labels)}
    write_dataset(xr.Dataset({**{v: (("arm",), np.asarray(a)) for v, a in per_arm.items()},
                              "eureka_epoch": (("arm", "seed"), ep)}, coords={"arm": labels, "seed": range(10)}),
                  paths.analysis("eureka", name))


def test_eureka_schedules_reads_the_eureka_artifacts_and_scores_the_declared_claims(paths, tmp_path):
    from pipeline_lib import claims, declarations
    from pipeline_lib.figures import eureka_schedules
    from pipeline_lib.scoring import eureka_schedules as sched_rules

    sched = eureka_schedules

    SOFTMAX, COLD = sched.BASE, sched.LOWTEMP
    for name, (k, k_cold) in {"digits_cosine": (0, 5), "digits_constant": (9, 6), "digits_half": (1, 5)}.items():
        _write_eureka_counts(paths, name, {SOFTMAX: k, COLD: k_cold})
    _write_eureka_counts(paths, "digits_control", {SOFTMAX: 1})
    params = sched.Params(tasks=(("digits", {"schedules": ["digits_cosine", "digits_constant", "digits_half"],
                                             "control": "digits_control"}),))
    outputs = {ext: str(tmp_path / f"eureka_schedules{ext}") for ext in sched.EXTRA_OUTPUTS}
    stats = _build(eureka_schedules, params, paths, outputs=outputs)
    task = stats["tasks"]["digits"]
    assert task["arms"][SOFTMAX]["n_eureka"] == [0, 9, 1] and task["control"] == {"n_eureka": 1, "n_seeds": 10}
    assert task["epochs"] == 60 and task["lr"] == 5e-4
    assert (tmp_path / "eureka_schedules.md").read_text().count("digits_") == 7  # a row per arm and entry
    declared = declarations.figure_claims("eureka_schedules")
    scores = claims.check_scores("eureka_schedules", declared, sched_rules.score_claims(stats, params))
    assert scores["eureka.schedules.digits_softmax_ratio_sensitive"]["verdict"] == "reproduced"  # 9/10 vs 0/10
    assert scores["eureka.schedules.digits_lowtemp_less_sensitive"]["verdict"] == "reproduced"  # spread 0.9 vs 0.1
    assert scores["eureka.schedules.reasoning_softmax_ratio_sensitive"]["verdict"] == "not run"  # task not drawn
    for cid in declared:  # every statistic a declaration names exists where the claim is scored
        if scores[cid]["verdict"] != "not run":
            assert all(claims.read_stat(stats, p) for p in declarations.declared_claims()[cid]["reads"]), cid


def test_scan_snap_lr_sweep_reports_the_planted_grid(paths, cfg):
    from pipeline_lib.figures import scan_snap_lr_sweep
    run = "scan_snap_sweep"
    lr = np.array([0.1, 0.1, 1.0, 1.0] * 2)  # slots: (lr_Z, ratio) cells x 2 seeds
    ratio = np.repeat([1.0, 2.0], 4)
    final = 1.0 - 0.3 * (lr == 1.0) + 0.1 * (ratio == 2.0) + np.tile([0.0, 0.02], 4)  # sparser at the larger lr
    ent = np.stack([np.full(8, 1.5), final], axis=1)  # (slot, step)
    an = xr.Dataset({"distinct_entropy": (("seed", "step"), ent), "distinct_entropy_init": 1.5},
                    coords={"seed": np.arange(8), "step": [0, 6], "lr": ("seed", lr), "lr_ratio_Y": ("seed", ratio)})
    write_dataset(an, paths.analysis("scan_snap", run))
    stats = _build(scan_snap_lr_sweep, scan_snap_lr_sweep.Params(runs=(run,)), paths, cfg)
    s = stats[run]
    cells = {(c["lr_Z"], c["ratio"]): c for c in s["cells"]}
    assert cells[(1.0, 2.0)]["mean"] == pytest.approx(0.81) and cells[(1.0, 2.0)]["n"] == 2
    assert cells[(0.1, 1.0)]["std"] == pytest.approx(np.std([1.0, 1.02], ddof=1))
    assert s["larger_lr_sparser_every_ratio"] is True and s["mean_entropy_gain_largest_vs_smallest_ratio"] == \
        pytest.approx(0.1) and s["initial_entropy"] == 1.5
    assert s["reference_setting"] is False and all(c["reference"] is None for c in s["cells"])  # not the released run


def test_scan_snap_gain_reads_the_planted_gains_and_the_runs_setting(paths, cfg):
    """Theorem 3's statistics on a planted attention: two tokens' squared gains grow by factors 2 and 4 against the
    dominant one (log 2 and log 4: spread 1/3 of their mean), their first powers by other factors; the test config's
    Scan&Snap run (momentum 0.9, eta_Y = 2 eta_Z) is named as outside the theorem's assumptions."""
    from pipeline_lib.figures import scan_snap_gain
    run = "scan_snap"
    r0 = np.array([3.0, 1.0])  # r_{l0/l'}(0) = (c_l0 / c_l')^2 - 1 for the two others
    ratio = np.sqrt(1 + np.stack([r0, r0 * [2.0, 4.0]]))  # (step, other): c_l0 / c_l' at steps 0 and 1
    c = np.concatenate([1 / ratio, np.ones((2, 1))], axis=1)  # the dominant token last, c_l0 = 1
    c = np.broadcast_to((c / c.sum(-1, keepdims=True))[None, :, None, :], (2, 2, 1, 3))  # (seed, step, class, rank)
    write_dataset(xr.Dataset({"distinct_c": (("seed", "step", "class", "rank"), c)},
                             coords={"seed": [0, 1], "step": [0, 1]}), paths.analysis("scan_snap", run))
    stats = _build(scan_snap_gain, scan_snap_gain.Params(run=run), paths, cfg)
    logs = np.log([2.0, 4.0])
    assert stats["spread_per_seed"] == pytest.approx([logs.std() / logs.mean()] * 2)
    assert stats["log_chi_per_seed"] == pytest.approx([logs.mean()] * 2) and stats["others"] == 2
    first = np.log((ratio[1] - 1) / (ratio[0] - 1))
    assert stats["spread_first_power_per_seed"] == pytest.approx([first.std() / first.mean()] * 2)
    assert stats["lowest_multiple_per_seed"] == pytest.approx([2.0, 2.0])
    assert not stats["theorem_setting"] and len(stats["outside_theorem"]) == 2  # momentum and eta_Y / eta_Z


def test_scan_snap_transition_reports_the_planted_half_steps(paths, cfg):
    from pipeline_lib.figures import scan_snap_transition
    run = "scan_snap_sweep"
    lr = np.repeat([0.5, 1.0, 1.0, 2.0], 2)  # slots: (lr_Z, ratio) cells x 2 seeds; cells 2 and 3 share eta_Y = 2
    ratio = np.repeat([1.0, 1.0, 2.0, 1.0], 2)
    t = np.arange(41)
    tau = np.repeat([16.0, 8.0, 4.0, 3.0], 2)  # half of the change to step 40: 9.8, 5.6, 2.8, 2.1 steps
    mass = 0.6 - 0.3 * (1 - np.exp(-t[None, :] / tau[:, None]))
    an = xr.Dataset({"common_mass": (("seed", "step", "class"), np.repeat(mass[:, :, None], 2, axis=2))},
                    coords={"seed": np.arange(8), "step": t, "lr": ("seed", lr), "lr_ratio_Y": ("seed", ratio),
                            "run_seed": ("seed", np.tile([0, 1], 4))})
    write_dataset(an, paths.analysis("scan_snap", run))
    stats = _build(scan_snap_transition, scan_snap_transition.Params(runs=(run,)), paths, cfg)
    cells = {(c["lr_Z"], c["ratio"]): c for c in stats[run]["cells"]}
    assert [cells[k]["median"] for k in ((0.5, 1.0), (1.0, 1.0), (1.0, 2.0), (2.0, 1.0))] == [10.0, 6.0, 3.0, 3.0]
    assert all(c["settled"] for c in cells.values()) and stats[run]["num_last"] == 1
    (pair,) = stats["pairs"]  # eta_Y = 2: lr_Z 2 (ratio 1) against lr_Z 1 (ratio 2), the same step: no gap
    assert pair["lr_Z"] == [2.0, 1.0] and pair["earlier_by"] == 0.0 and pair["holds"] is False
    assert stats["slope"]["value"] < 0 and stats["slope"]["series"] == 1  # only lr_Z = 1 has two settled cells


def _fourier_artifact(seeds, d, q, table, q_k, solved):
    """A fourier artifact with per-seed table columns and, at the last snapshot, the given q_k per frequency."""
    from pipeline_lib.analysis.fourier import TABLE

    S, F = len(seeds), q_k.shape[-1]
    return xr.Dataset({**{f"table_{c}": ("seed", np.asarray(table[c], dtype=float)) for c in TABLE},
                       "solved": ("seed", solved),
                       "q_k": (("seed", "snapshot", "freq"), np.stack([q_k, q_k], axis=1)),
                       "order": (("seed", "snapshot", "freq"), np.stack([q_k, q_k], axis=1).astype(float)),
                       "factorable": (("seed", "snapshot", "freq"), np.ones((S, 2, F), dtype=int)),
                       "sol_type": (("seed", "snapshot", "freq"), np.zeros((S, 2, F), dtype=int))},
                      coords={"seed": seeds, "snapshot": [0, 100], "freq": np.arange(F)}, attrs={"d": d, "q": q})


def test_cogo_table_reports_the_planted_columns_and_pools_a_split_group(paths, tmp_path, cfg):
    from pipeline_lib.analysis.fourier import TABLE
    from pipeline_lib.figures import cogo_table
    a, b = "cogo_d11", "cogo_d11_split1"  # one run on its own, and with the other as a split group
    table_a = {c: [10.0, 20.0] for c in TABLE}
    table_b = {c: [30.0] for c in TABLE}
    q_k = np.array([[4, 6, 0, 2], [4, 4, 6, 6]])  # seed 0: one frequency of order 2 (not 0/4/6)
    write_dataset(_fourier_artifact([0, 1], 11, 512, table_a, q_k, [1, 1]), paths.analysis("fourier", a))
    write_dataset(_fourier_artifact([2], 11, 512, table_b, q_k[1:], [1]), paths.analysis("fourier", b))
    outputs = {ext: str(tmp_path / f"t{ext}") for ext in (".csv", ".md")}
    params = cogo_table.Params(runs=(a,), split_groups=(("split", (a, b)),))
    stats = _build(cogo_table, params, paths, cfg, outputs)
    one, pooled = stats["runs"][a], stats["runs"]["split"]
    assert one["columns"]["pct_not_46"] == {"mean": 15.0, "sem": pytest.approx(5.0)} and one["solved"] == 2
    assert one["per_seed"]["count_not_46"] == [1, 0] and one["split_per_seed"] is False
    assert pooled["seeds"] == 3 and pooled["columns"]["err_4"]["mean"] == pytest.approx(20.0)
    assert pooled["per_seed"]["seed"] == [0, 1, 2] and pooled["members"] == [a, b]
    assert len((tmp_path / "t.csv").read_text().splitlines()) == 3  # header, the run, the split group (no talk row at d=11)


def test_cogo_table_prints_the_talks_row_once_per_d_after_our_rows(paths, tmp_path, cfg, monkeypatch):
    from pipeline_lib.analysis.fourier import TABLE
    from pipeline_lib.figures import cogo_table
    monkeypatch.setitem(cogo_table.REFERENCE, 11, ["0"] * len(TABLE))  # as if the talk had a row at d = 11
    a, b = "cogo_d11", "cogo_d11_split1"
    q_k = np.array([[4, 6, 0, 2], [4, 4, 6, 6]])
    write_dataset(_fourier_artifact([0, 1], 11, 512, {c: [10.0, 20.0] for c in TABLE}, q_k, [1, 1]),
                  paths.analysis("fourier", a))
    write_dataset(_fourier_artifact([2], 11, 512, {c: [30.0] for c in TABLE}, q_k[1:], [1]), paths.analysis("fourier", b))
    outputs = {ext: str(tmp_path / f"t{ext}") for ext in (".csv", ".md")}
    _build(cogo_table, cogo_table.Params(runs=(a,), split_groups=(("split", (a, b)),)), paths, cfg, outputs)
    sources = [line.split(",")[0] for line in (tmp_path / "t.csv").read_text().splitlines()[1:]]
    assert sources == [f"ours ({a})", "ours (split)", "talk"]


def test_galore_lowrank_reports_the_planted_ranks_state_and_accuracies(paths, cfg):
    from pipeline_lib.figures import galore_lowrank
    pair = {"adam": "cogo_d7", "galore": "galore_d7", "matched": "cogo_d7_matched"}
    seeds = list(cfg.runs["cogo_d7"].seeds)
    S, E = len(seeds), 4
    for arm, run in pair.items():
        acc = {"adam": 1.0, "galore": 0.25, "matched": 0.5}[arm]
        write_dataset(xr.Dataset({"test_acc": (("seed", "epoch"), np.full((S, E), acc)),
                                  "train_acc": (("seed", "epoch"), np.full((S, E), acc))},
                                 coords={"seed": seeds, "epoch": np.arange(E) * 50}), paths.trajectory(run))
        if arm == "matched":
            continue
        rank = np.tile(np.array([[8.0, 4.0], [2.0, 1.0], [2.0, 1.0], [3.0, 1.0]]), (S, 1, 1))  # (seed, epoch, param)
        write_dataset(xr.Dataset({"stable_rank": (("seed", "epoch", "param"), rank), "max_rank": ("param", [8, 7])},
                                 coords={"seed": seeds, "epoch": np.arange(E) * 50, "param": ["W_A", "W_C"]},
                                 attrs={"optimizer_state_elements": 400 * S if arm == "adam" else 100 * S,
                                        "optimizer_state_bytes": 1600 * S if arm == "adam" else 400 * S}),
                      paths.analysis("gradient_rank", run))
    params = galore_lowrank.Params(comparisons=(("modular_addition", pair),))
    stats = _build(galore_lowrank, params, paths, cfg)
    s = stats["modular_addition"]
    assert s["adam"]["stable_rank_first"] == {"W_A": 8.0, "W_C": 4.0}
    assert s["adam"]["stable_rank_median_over_training"] == {"W_A": 2.0, "W_C": 1.0}
    assert s["adam"]["max_rank"] == {"W_A": 8, "W_C": 7} and s["adam"]["state_bytes_per_seed"] == 1600
    assert s["state_bytes_ratio_galore_over_adam"] == 0.25
    assert s["galore"]["final_test_acc"] == [0.25] * S and s["matched"]["final_test_acc"] == [0.5] * S


def test_joma_invariants_reads_each_slot_up_to_its_flow_steps(paths):
    step = np.arange(6) * 4
    moved = np.tile([0.0, 1, 2, 3, 4, 4], (2, 1))
    gap = np.array([[0, 0.01, 0.01, 0.02, 0.03, 9.0], [0, 0.5, 0.5, 0.5, 0.5, 0.5]])
    for run, rho, flow in (("a", 1.0, [16, 20]), ("b", 4.0, [8, 8])):
        an = xr.Dataset({"invariant_gap": (("seed", "step"), gap), "control_gap": (("seed", "step"), 10 * moved),
                         "gap_rho1": (("seed", "step"), 3 * moved), "lhs_moved": (("seed", "step"), moved),
                         "control_moved": (("seed", "step"), 2 * moved),
                         "flow_steps": (("seed",), np.array(flow)), "rho": (("seed",), np.full(2, rho))},
                        coords={"seed": [0, 1], "step": step})
        write_dataset(an, paths.analysis("joma", run))
    params = joma_invariants.Params(cases=(("exp", ("a", "b")),))
    s = _build(joma_invariants, params, paths)["exp"]
    assert s["rho"] == [1.0, 1.0, 4.0, 4.0] and s["flow_steps"] == [16, 20, 8, 8]
    # slot 0 of run a: steps 0..16, gap 0.03 over movement 4; slot 1 of run a: 0.5 / 4; run b's: steps 0..8
    assert np.allclose(s["violation"], [0.0075, 0.125, 0.01 / 2, 0.25])
    # the control's gap over its own side's movement (its units), not the invariant's
    assert np.allclose(s["control_violation"], 5) and np.allclose(s["violation_ignoring_rho"], 3)
    v = {k: c["verdict"] for k, c in joma_invariants_rules.score_claims(
        {"exp": s, "summary": ""}, params).items()}
    assert v["tian.joma_invariants.exp_invariant"] == "not reproduced"  # slot 1 of run a: 0.125 > 0.05
    assert v["tian.joma_invariants.linear_invariant"] == "not run"


def test_every_figure_has_a_synthetic_data_test():
    """Each figure module is drawn from synthetic data by some test: its ``plot_<name>`` (tests/test_figures.py
    and others) or its ``build`` here. Derived from the registry, so a new figure without one fails."""
    import re

    from conftest import REPO
    from pipeline_lib.plumbing import registry

    here = (REPO / "tests" / "test_figures_synthetic.py").read_text()
    others = "\n".join(p.read_text() for p in (REPO / "tests").glob("test_*.py"))
    missing = [name for name in registry.plugins("figure")
               if not re.search(rf"\bplot_{name}\(", others)
               and not re.search(rf"(_build\(|\bbuild\(.*\n?.*){name}\b|\b{name}\.build\(", here)]
    assert not missing, missing


def test_scan_snap_attention_reports_the_planted_mass_and_losses(paths, cfg):
    from pipeline_lib.figures import scan_snap_attention
    run = "scan_snap"
    steps = np.arange(0, 101, 10)
    S, K, M = 2, 2, 6
    mass = np.clip(0.6 - 0.02 * steps, 0.4, None)  # falls 0.6 -> 0.4 over steps 0..10 of 10
    top = 0.05 + 0.001 * steps
    an = xr.Dataset({"common_mass": (("seed", "step", "class"), np.broadcast_to(mass[None, :, None], (S, 11, K)).copy()),
                     "top_distinct": (("seed", "step", "class"), np.broadcast_to(top[None, :, None], (S, 11, K)).copy()),
                     "distinct_entropy": (("seed", "step"), np.tile(np.linspace(1.0, 0.5, 11), (S, 1))),
                     "c": (("seed", "step", "class", "token"), np.random.default_rng(0).random((S, 11, K, M))),
                     # three distinct tokens: the most frequent grows most (rank 2), the two others swap in class 1
                     "distinct_c": (("seed", "step", "class", "rank"),
                                    np.exp(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0]])[None, None] *
                                           (steps / 100.0)[None, :, None, None]).repeat(S, 0) / 3)},
                    coords={"seed": [0, 1], "step": steps, "class": [0, 1], "token": np.arange(M), "rank": np.arange(3)})
    epochs = np.arange(0, 101)
    traj = xr.Dataset({"train_loss": (("seed", "epoch"), np.tile(np.exp(-epochs / 50.0), (S, 1)))},
                      coords={"seed": [0, 1], "epoch": epochs})
    write_dataset(an, paths.analysis("scan_snap", run))
    write_dataset(traj, paths.trajectory(run))
    stats = _build(scan_snap_attention, scan_snap_attention.Params(run=run), paths, cfg)
    assert stats["common_mass"]["initial"] == pytest.approx(0.6) and stats["common_mass"]["final_median"] == \
        pytest.approx(0.4)
    assert stats["top_distinct"]["final_per_seed"] == pytest.approx([0.15, 0.15]) and stats["seeds"] == S
    assert stats["distinct_entropy"] == {"initial": 1.0, "final_median": 0.5}
    assert all(stats["loss"][t]["median"] == pytest.approx(np.exp(-int(t) / 50.0)) for t in stats["loss"])
    assert stats["common_mass_10_90_percent_steps"]["median"] == [10.0, 10.0]  # the whole fall by the first record
    assert stats["distinct_growth_order"]["per_seed"] == pytest.approx([0.75] * S)  # rho 1 and 0.5 (one swap of 3)


def _llc(paths, cfg, run, epochs, values):
    seeds = list(cfg.runs[run].seeds)
    v = np.broadcast_to(np.asarray(values, dtype=float), (len(seeds), len(epochs)))
    write_dataset(xr.Dataset({"llc": (("seed", "snapshot"), v), "llc_std": (("seed", "snapshot"), 0 * v)},
                             coords={"seed": seeds, "epoch": ("snapshot", np.asarray(epochs))}), paths.analysis("llc", run))


def test_llc_trajectories_joins_a_curriculum_and_tests_planted_moves_against_random_epochs(paths, cfg):
    """A planted jump of the LLC at the Eureka epoch (by 3) and across the curriculum's switch (by 4) reproduces both
    claims; a series that alternates between 0 and 3 at every epoch, the switch and the Eureka epoch included (it
    changes as much everywhere as at the event), reproduces neither."""
    from pipeline_lib.figures import llc_trajectories
    from pipeline_lib.scoring import llc_trajectories as llc_trajectories_rules

    start = cfg.start_epoch("curriculum_p2_p4")
    snaps = np.arange(0, 21)  # every epoch a snapshot: the event's interval is one epoch
    _llc(paths, cfg, "pretrain_p2", np.arange(0, start + 1), 1.0 + 0.01 * np.arange(start + 1))
    child = np.arange(start, start + 21)
    _llc(paths, cfg, "curriculum_p2_p4", child, np.where(child >= start, 5.0, 1.0) + 0.01 * child)
    # r_softmax: a flat LLC that jumps by 3 at epoch 10, where test accuracy first exceeds 0.5
    _llc(paths, cfg, "r_softmax", snaps, np.where(snaps >= 10, 4.0, 1.0) + 0.01 * snaps)
    seeds = list(cfg.runs["r_softmax"].seeds)
    acc = np.tile(np.where(snaps >= 10, 0.9, 0.2), (len(seeds), 1))
    write_dataset(xr.Dataset({"test_acc": (("seed", "epoch"), acc)}, coords={"seed": seeds, "epoch": snaps}),
                  paths.trajectory("r_softmax"))
    params = llc_trajectories.Params(runs=("pretrain_p2", "curriculum_p2_p4", "r_softmax"), eureka_runs=("r_softmax",))
    stats = _build(llc_trajectories, params, paths, cfg)
    assert set(stats["runs"]) == {"curriculum_p2_p4", "r_softmax"}  # the parent drawn in its child's panel
    cur = stats["runs"]["curriculum_p2_p4"]
    assert cur["switches"] == [start] and cur["epochs"][0] == 0 and cur["epochs"].count(start) == 1
    assert stats["runs"]["r_softmax"]["eureka_epochs"] == [10.0] * len(seeds)
    assert stats["eureka"]["at"] == pytest.approx([3.01] * len(seeds))
    assert stats["eureka"]["random"] == pytest.approx([0.01] * len(seeds))
    # across the switch: the parent's last snapshot (its task) to the child's first trained one; the hand-over left out
    n_cur = len(cfg.runs["curriculum_p2_p4"].seeds)
    assert stats["switch"]["at"] == pytest.approx([4.01] * n_cur)
    assert stats["switch"]["random"] == pytest.approx([0.01] * n_cur)
    scores = llc_trajectories_rules.score_claims(stats, params)
    assert scores["llc.moves_at_eureka"]["verdict"] == "reproduced"
    assert scores["llc.moves_at_curriculum_switch"]["verdict"] == "reproduced"
    # the null: a series that changes as much everywhere as at the event does not "move at" it
    _llc(paths, cfg, "r_softmax", snaps, np.where(snaps % 2 == 0, 0.0, 3.0))
    _llc(paths, cfg, "pretrain_p2", np.arange(0, start + 1), np.where(np.arange(start + 1) % 2 == 0, 0.0, 3.0))
    _llc(paths, cfg, "curriculum_p2_p4", child, np.where(child % 2 == 0, 0.0, 3.0))  # the switch as any interval
    stats = _build(llc_trajectories, params, paths, cfg)
    scores = llc_trajectories_rules.score_claims(stats, params)
    assert scores["llc.moves_at_eureka"]["verdict"] == scores["llc.moves_at_curriculum_switch"]["verdict"] == \
        "not reproduced"


def test_rate_difference_is_newcombes_hybrid_score_interval():
    from pipeline_lib.stats import rate_difference

    d, lo, hi = rate_difference(56, 70, 48, 80)  # Newcombe (1998), Table II, example (a)
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (0.2, 0.0524, 0.3339)
    d, lo, hi = rate_difference(10, 10, 0, 10)
    assert d == 1.0 and 0.5 < lo < 1.0 and hi == 1.0


def test_eureka_norm_cap_reports_the_planted_shares(paths, cfg):
    from pipeline_lib.figures import eureka_norm_cap

    arms = dict(cfg.analyses["eureka"]["reasoning"].arms)
    snapshots = np.array([0, 1, 10, 100])
    planted = {"Softmax": [0.0, 0.2, 0.6, 0.9], "HT": [0.0, 0.0, 0.0, 0.0], "NormSoftmax": [0.0, 0.1, 0.1, 0.4]}
    for label, run in arms.items():
        seeds = list(cfg.runs[run].seeds)
        share = np.array([planted[label]] * len(seeds))
        share[0] += 0.1 * (label != "HT")  # one seed apart, so that a median and a mean differ from seed 0's
        write_dataset(xr.Dataset({"binds_mean": (("seed", "snapshot"), share)},
                                 coords={"seed": seeds, "snapshot": snapshots}), paths.analysis("norm_cap", run))
    stats = _build(eureka_norm_cap, eureka_norm_cap.Params(experiments=("reasoning",)), paths, cfg)["reasoning"]
    n = len(cfg.runs[arms["Softmax"]].seeds)
    assert stats["Softmax"]["final_per_seed"] == pytest.approx([1.0] + [0.9] * (n - 1))
    assert stats["Softmax"]["final_median"] == pytest.approx(0.9 if n > 2 else 0.95)
    assert stats["NormSoftmax"]["mean_per_seed"][1] == pytest.approx(0.15)
    assert stats["HT"]["final_median"] == 0.0 and stats["HT"]["variant"] == cfg.runs[arms["HT"]].attention.variant
    assert stats["Softmax"]["epochs"] == [0, 1, 10, 100]


def test_eureka_calibration_picks_the_ratio_closest_to_the_paper_s(paths):
    from pipeline_lib.figures import eureka_calibration

    planted = {"n1000": 1, "n2000": 6, "n4000": 8, "n8000": 10}  # Softmax seeds of 10 with a Eureka-moment
    for name, k in planted.items():
        write_dataset(xr.Dataset({"n_eureka": ("arm", [k, 0]), "n_seeds": ("arm", [10, 10]),
                                  "last_epoch": ("arm", [300, 300])}, coords={"arm": ["Softmax", "HT"], "seed": np.arange(10)}),
                      paths.analysis("eureka", name))
    values = tuple({"value": int(n[1:]), "experiment": n} for n in planted)
    block = {"knob": "n_train", "target": 0.7, "source": "Table 1", "default": 4000, "values": values}
    stats = _build(eureka_calibration, eureka_calibration.Params(tasks=(("digits", block),)), paths)
    # 6/10 and 8/10 are both 0.1 from 0.7: the tie goes to 4000, the default (2000 is as far from 0.7, farther from 4000)
    assert stats["digits"]["picked"] == 4000 and stats["digits"]["picked_ratio"] == 0.8
    assert [r["n_eureka"] for r in stats["digits"]["rows"]] == [1, 6, 8, 10]
    assert stats["digits"]["rows"][0]["ci_low"] == pytest.approx(0.0179, abs=1e-3)  # Wilson 1/10
    assert "picked n_train=4000" in stats["summary"]


def test_calibration_pick_rule_ties_and_distance():
    from pipeline_lib.figures.eureka_calibration import pick

    rows = [{"value": v, "ratio": r} for v, r in ((16, 0.4), (32, 1.0), (64, 0.8))]
    assert pick(rows, 0.6, 32)["value"] == 16  # 0.4 and 0.8 tie at 0.2; |log(16/32)| = |log(64/32)|: the smaller
    assert pick(rows, 0.75, 32)["value"] == 64  # closest ratio wins over the default
    assert pick(rows, 1.0, 64)["value"] == 32


def test_attention_atlas_reports_the_planted_attention(paths):
    from test_views import _atlas

    from pipeline_lib.figures import attention_atlas

    write_dataset(_atlas(), paths.trajectory("r"))
    stats = _build(attention_atlas, attention_atlas.Params(runs=("r",), threshold=0.9, n_epochs=3), paths,
                   outputs={".html": paths.root + "/atlas.html"})
    assert stats["r"]["recorded_epochs"] == [0, 1, 2, 5, 10, 20] and stats["r"]["transition_epoch"] == [5, 10]
    assert stats["r"]["max_weight_first"] == pytest.approx(0.25) and stats["r"]["max_weight_last"] == pytest.approx(1.0)
    assert stats["r"]["probes"] == 3 and stats["r"]["positions"] == 4 and "0.25 -> 1.00" in stats["summary"]
    assert 0 < stats["view_bytes"] <= 1_500_000
    assert "heads" not in stats["r"]  # a model without heads (no transformer kind): the recorded attention only, its weights unread


def test_cogo_algebra_reports_the_identities_and_the_claims_read_them_both_ways(monkeypatch):
    from pipeline_lib import claims
    from pipeline_lib import cogo_algebra as ca
    from pipeline_lib.figures import cogo_algebra
    from pipeline_lib.scoring import cogo_algebra as rules
    params = cogo_algebra.Params(d=(5, 7), q=3, networks=2, seed=1)
    stats = _build(cogo_algebra, params, None)
    assert stats["loss_zero_mean_max"] < 1e-12 and stats["loss_with_mean_min"] > 1e-4
    assert max(stats["add_max"], stats["mul_max"], stats["one_max"]) < 1e-12 and stats["token_kronecker_min"] > 0.1
    scores = rules.score_claims(stats, params)
    assert {s["verdict"] for s in scores.values()} == {"reproduced"}
    for s in scores.values():
        assert claims.crossings(s["rule"]) == ("reproduced", "not reproduced")
    assert stats["composed"]["f6_loss_max"] < 1e-12 < 0.01 < min(stats["composed"]["syn_alone_loss_min"],
                                                                 stats["composed"]["nu_alone_loss_min"])
    inside_r_star = {**stats, "composed": {**stats["composed"], "syn_out_min": 0.0}}  # z_syn in R_* after all
    assert rules.score_claims(inside_r_star, params)["tian.cogo_algebra.composed_partial_solutions"]["verdict"] == \
        "not reproduced"
    stale = rules.score_claims({k: v for k, v in stats.items() if k != "composed"}, params)
    assert stale["tian.cogo_algebra.f6_global_optimizer"]["verdict"] == "not run"
    # a formula that misses, and a product that is not multiplicative: every claim fails
    monkeypatch.setattr(ca, "loss_from_r", lambda net: ca.model_loss(net) * 1.001)
    monkeypatch.setattr(ca, "mul", ca.token_kronecker)
    bad = _build(cogo_algebra, params, None)
    scores = rules.score_claims(bad, params)
    assert {s["verdict"] for s in scores.values()} == {"not reproduced"}


def test_eureka_qk_std_is_sqrt_dk_for_unit_variance_and_not_for_variance_2():
    """Sec. 3's sqrt(d_k): std(q . k) / sqrt(d_k) over the figure's Gaussian pairs is 1 within its Monte-Carlo
    tolerance for entries of variance 1 (reproduced); the same check on its control, entries of variance 2 (ratio 2),
    is not reproduced: the tolerance sees a wrong variance."""
    from pipeline_lib.figures import eureka_softmax_temperature as fig
    from pipeline_lib.scoring import eureka_softmax_temperature as rules
    params = fig.Params(rows=300, pairs=4000, d_k=(8, 32), seed=2)
    stats = _build(fig, params, None)
    assert all(abs(r - 1) < 0.05 for r in stats["qk_std"].values())
    assert all(abs(r - 2) < 0.1 for r in stats["qk_std_variance_2"].values())  # sqrt(2 x 2): the control's ratio
    assert rules.qk_std_tolerance(8, 4000) == pytest.approx(4 * np.sqrt((2 + 6 / 8) / 16000))
    cid = "eureka.softmax_temperature.qk_std_is_sqrt_dk"
    assert rules.score_claims(stats, params)[cid]["verdict"] == "reproduced"
    wrong = {**stats, "qk_std": stats["qk_std_variance_2"]}  # the statistic of entries of variance 2
    assert rules.score_claims(wrong, params)[cid]["verdict"] == "not reproduced"


def test_eureka_softmax_temperature_checks_sec3_and_the_claims_read_them_both_ways(monkeypatch):
    import torch

    from pipeline_lib import claims
    from pipeline_lib.figures import eureka_softmax_temperature
    from pipeline_lib.scoring import eureka_softmax_temperature as rules
    fig = eureka_softmax_temperature
    params = fig.Params(rows=300, pairs=4000, d_k=(8, 32), seed=2)
    stats = _build(eureka_softmax_temperature, params, None)
    assert stats["entropy_rises"] == 300 and not stats["constant_rises"]
    assert stats["uniform_lifted"] == 300 and 0 < stats["collapsed"] <= 300
    assert stats["norm_amplifies_low"] == 300 and stats["norm_amplifies_high"] == 0
    assert fig.jacobian_norm(np.zeros((1, 4)), 2.0)[0] == pytest.approx(np.linalg.norm(np.eye(4) / 4 - 1 / 16) / 2)
    scores = rules.score_claims(stats, params)
    for cid in ("low_tau_low_entropy", "normsoftmax_amplifies_low_std"):
        assert scores[f"eureka.softmax_temperature.{cid}"]["verdict"] == "reproduced"
        assert claims.crossings(scores[f"eureka.softmax_temperature.{cid}"]["rule"]) == ("reproduced", "not reproduced")
    grads = "eureka.softmax_temperature.tau_against_vanishing_gradients"
    assert rules.score_claims({**stats, "collapsed_lifted": stats["collapsed"]}, params)[grads]["verdict"] == "reproduced"
    assert rules.score_claims({**stats, "uniform_lifted": 140}, params)[grads]["verdict"] == "not reproduced"
    # Sec. 3's vanishing gradients: the collapsed rows' Jacobian entries near 0 (within their analytic bound
    # p_max (1 - p_max)), and W_Q and W_K's gradients falling as s^2 under rank collapse, not under small W_Q
    assert stats["collapsed_top"] <= 0.99 * 0.01 / fig.JACOBIAN_TOP + 1e-12 and stats["uniform_top"] > 0.2
    assert fig.jacobian_top(np.full((1, 4), 0.25))[0] == pytest.approx((0.25 - 0.25 ** 2) / fig.JACOBIAN_TOP)
    assert 1.9 < min(stats["qk_rank_q_slopes"] + stats["qk_rank_k_slopes"])
    assert max(np.abs(stats["qk_apart_q_slopes"])) < 0.2 and 0.8 < min(stats["qk_apart_k_slopes"])  # W_K carries s
    assert stats["qk_rank_uniform_gap"] < 0.01 and stats["qk_apart_uniform_gap"] < 0.01  # both nearly uniform
    for cid in ("collapse_zeroes_jacobian", "uniform_vanishes_qk_gradients"):
        assert scores[f"eureka.softmax_temperature.{cid}"]["verdict"] == "reproduced", cid
    assert claims.crossings(scores["eureka.softmax_temperature.collapse_zeroes_jacobian"]["rule"]) == \
        ("reproduced", "not reproduced")
    qk = "eureka.softmax_temperature.uniform_vanishes_qk_gradients"
    assert claims.crossings(scores[qk]["rule"]) == ("reproduced", "not reproduced")
    blind = {**stats, "qk_apart_q_slopes": stats["qk_rank_q_slopes"]}  # a control that vanishes too: cannot tell
    assert rules.score_claims(blind, params)[qk]["verdict"] == "not run"
    one = {**stats, "qk_rank_k_slopes": [0.0] * len(stats["qk_rank_k_slopes"])}  # W_Q's vanishes, W_K's stays
    assert rules.score_claims(one, params)[qk]["verdict"] == "not reproduced"
    none = {**stats, "collapsed_top": float("nan")}  # no row collapsed
    assert rules.score_claims(none, params)["eureka.softmax_temperature.collapse_zeroes_jacobian"]["verdict"] == \
        "not run"
    flat = {**stats, "uniform_top": 0.01}  # uniform rows under the bar: the Jacobian check cannot tell
    assert rules.score_claims(flat, params)["eureka.softmax_temperature.collapse_zeroes_jacobian"]["verdict"] == \
        "not run"
    old = {k: v for k, v in stats.items() if k not in ("collapse_level", "qk_rank_q_slopes")}
    assert {rules.score_claims(old, params)[f"eureka.softmax_temperature.{c}"]["verdict"]
            for c in ("collapse_zeroes_jacobian", "uniform_vanishes_qk_gradients")} == {"not run"}
    # an entropy that falls with tau, a NormSoftmax that is the Softmax, gradients that do not vanish: each claim fails
    monkeypatch.setattr(fig, "entropy", lambda p: (p * np.log(np.clip(p, 1e-300, None))).sum(-1))
    monkeypatch.setattr(fig, "attention_weights", lambda x, variant, tau: torch.softmax(x / tau, -1))
    monkeypatch.setattr(fig, "jacobian_norm", lambda x, tau: np.full(len(x), 1.0 / tau))
    monkeypatch.setattr(fig, "jacobian_top", lambda p: np.full(len(p), 0.3))  # entries that stay large
    # gradients that stay under rank collapse (the control's W_Q share for both, on both arms; W_K's shares the
    # rank arm's fall so that the control stays a control)
    real = fig.qk_gradient_shares

    def staying(seed, collapse):
        shares, spread = real(seed, False)
        return np.stack([shares[:, :, 0], shares[:, :, 0] if collapse else shares[:, :, 1]], -1), spread

    monkeypatch.setattr(fig, "qk_gradient_shares", staying)
    bad = rules.score_claims(_build(fig, params, None), params)
    for cid in ("low_tau_low_entropy", "normsoftmax_amplifies_low_std", "tau_against_vanishing_gradients",
                "collapse_zeroes_jacobian", "uniform_vanishes_qk_gradients"):
        assert bad[f"eureka.softmax_temperature.{cid}"]["verdict"] == "not reproduced", cid


def test_eureka_separability_follows_cover_and_its_claim_reads_it_both_ways(monkeypatch):
    from pipeline_lib import claims
    from pipeline_lib.figures import eureka_separability
    from pipeline_lib.scoring import eureka_separability as rules
    fig = eureka_separability
    assert fig.cover_probability(4, 1) == 0.5 and fig.cover_probability(12, 11) == 1.0  # 8 of 16; d >= n - 1
    assert fig.cover_probability(12, 2) == pytest.approx(67 / 2048)
    xor = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert not fig.separable(xor, np.array([1.0, 1.0, -1.0, -1.0]))
    assert fig.separable(xor, np.array([1.0, -1.0, 1.0, -1.0]))  # split by the second coordinate
    params = fig.Params(n=12, dims=(2, 6, 12), draws=40, control_rank=2, seed=1)
    stats = _build(eureka_separability, params, None)
    assert stats["separable"][-1] == 40 and stats["separable"][0] < 10 and max(stats["control_separable"]) < 10
    cid = "eureka.separability.likely_in_high_dimension"
    score = rules.score_claims(stats, params)[cid]
    assert score["verdict"] == "reproduced" and claims.crossings(score["rule"]) == ("reproduced", "not reproduced")
    blind = {**stats, "control_share": [1.0] * 3}  # a control that becomes separable too: cannot tell
    assert rules.score_claims(blind, params)[cid]["verdict"] == "not run"
    off = {**stats, "share": [0.5, 0.5, 1.0]}  # an instrument that misses Cover's probability at d = 2 and 6
    assert rules.score_claims(off, params)[cid]["verdict"] == "not run"
    # the programme against Cover's exact probability where it is neither 0 nor 1 (n = 10, d = 4: 0.5)
    draws = fig.measure(fig.Params(n=10, dims=(4,), draws=400, seed=3))["separable"][0] / 400
    assert fig.cover_probability(10, 4) == 0.5 and abs(draws - 0.5) < 4 * np.sqrt(0.25 / 400)
    low = fig.Params(n=40, dims=(2, 4, 6), draws=40, seed=1)  # dimensions that stay far below n: never likely
    assert rules.score_claims(_build(fig, low, None), low)[cid]["verdict"] == "not reproduced"
    monkeypatch.setattr(fig, "separable", lambda x, y: False)  # an instrument blind to separation: not trusted
    assert rules.score_claims(_build(fig, params, None), params)[cid]["verdict"] == "not run"


def _reasoning_attention(eureka, before, after, epochs=101, layout="tokens (a, b, c, d)"):
    """A reasoning run's trajectory: test accuracy jumping at each seed's Eureka epoch (None: never), and the CLS
    attention 0.2 on CLS, the rest split between targets (share ``before`` until the jump, ``after`` from it; 0.5
    at epoch 0) and indicators."""
    n = len(eureka)
    acc = np.full((n, epochs), 0.55)
    share = np.full((n, epochs), before, dtype=float)
    for s, e in enumerate(eureka):
        if e is not None:
            acc[s, e:], share[s, e:] = 0.95, after
    share[:, 0] = 0.5
    att = np.zeros((n, epochs, 3, 5))
    att[..., 0] = 0.2
    att[..., 1:3] = (0.8 * (1 - share) / 2)[:, :, None, None]
    att[..., 3:5] = (0.8 * share / 2)[:, :, None, None]
    return xr.Dataset({"attention": (("seed", "epoch", "probe", "position"), att),
                       "attention_recorded": (("epoch",), np.ones(epochs, bool)),
                       "test_acc": (("seed", "epoch"), acc)},
                      coords={"seed": np.arange(n), "epoch": np.arange(epochs)}, attrs={"task_x_layout": layout})


def test_eureka_attention_targets_reads_the_windows_and_the_claims_read_them_both_ways(monkeypatch):
    from types import SimpleNamespace

    from pipeline_lib import claims
    from pipeline_lib.figures import eureka_attention_targets
    from pipeline_lib.scoring import eureka_attention_targets as rules
    fig = eureka_attention_targets
    cfg = SimpleNamespace(analyses={"eureka": {"reasoning": SimpleNamespace(threshold=0.7)}})
    params = fig.Params(experiment="reasoning")

    def scored(arms):
        monkeypatch.setattr(fig, "entry_arms", lambda *a, **k: arms)
        stats = _build(eureka_attention_targets, params, None, cfg)
        return stats, rules.score_claims(stats, params)

    # planted: targets hold 0.95 until the Eureka-moment, 0.6 after it; seeds without one stay at 0.95
    planted = {"Softmax": _reasoning_attention([40, None, None], 0.95, 0.6),
               "HT": _reasoning_attention([30, 50, None], 0.95, 0.6)}
    stats, scores = scored(planted)
    soft = stats["arms"]["Softmax"]
    assert soft["before"][0] == pytest.approx(0.95) and soft["after"][0] == pytest.approx(0.6)  # [20, 40), [70, 101)
    assert soft["start"] == pytest.approx([0.5] * 3) and soft["eureka_epoch"] == [40, None, None]
    assert soft["control"]["before"][1] == pytest.approx(0.95) and soft["control"]["before"][0] is None
    ids = [f"eureka.attention_targets.{c}" for c in ("reasoning_wrong_tokens_before_eureka",
                                                     "reasoning_no_eureka_attends_targets_only",
                                                     "reasoning_eureka_attends_indicators")]
    assert [scores[c]["verdict"] for c in ids] == ["reproduced"] * 3
    assert claims.crossings(scores[ids[0]]["rule"]) == ("reproduced", "not reproduced")
    # null: even attention throughout, and a drift without Eureka-moments as large as the Eureka seeds' change
    even = {"Softmax": _reasoning_attention([40, None, None], 0.5, 0.5),
            "HT": _reasoning_attention([30, 50, None], 0.5, 0.5)}
    assert {scored(even)[1][c]["verdict"] for c in ids} == {"not reproduced"}
    drift = {k: v.copy() for k, v in planted.items()}
    for ds in drift.values():  # every seed, with or without a Eureka-moment, moves to the indicators at epoch 40
        ds["attention"][:, 40:, :, 3:5] = 0.8 * 0.6 / 2
        ds["attention"][:, 40:, :, 1:3] = 0.8 * 0.4 / 2
    assert scored(drift)[1][ids[2]]["verdict"] == "not reproduced"
    with pytest.raises(ValueError, match="reasoning task"):
        scored({"Softmax": _reasoning_attention([40], 0.9, 0.6, layout="16x16 image")})
    with pytest.raises(ValueError, match="figures.eureka_attention_targets.arm"):
        scored({"HT": planted["HT"]})


def test_joma_odes_integrates_the_printed_dynamics_and_the_claims_read_them_both_ways(monkeypatch):
    from scipy.special import erfinv

    from pipeline_lib import claims
    from pipeline_lib.figures import joma_odes
    from pipeline_lib.scoring import joma_odes as rules
    params = joma_odes.Params(delta=(1.0, 0.5), v_salient=6.0, mu=(0.5, 1.0, 1.5, 2.0, 2.5), delta_end=1e-6)
    stats = _build(joma_odes, params, None)
    lin, non = stats["linear"], stats["nonlinear"]
    assert lin["t_blowup"] == pytest.approx(np.sqrt(np.pi / 2))  # int_0^inf exp(-v^2/2) dv / max Delta
    assert lin["end"][1] == pytest.approx(np.sqrt(2) * erfinv(0.5), abs=1e-8) and lin["end"][0] == pytest.approx(6.0)
    assert lin["sqrt2_invariant_spread"] < 1e-8 < 0.1 < lin["printed_invariant_spread"]
    with pytest.raises(RuntimeError, match="did not reach v = 8"):  # closer to the blow-up than float64 resolves
        joma_odes.linear(np.array([1.0, 0.5]), 8.0)
    assert non["predicted"][3] == pytest.approx(np.exp((4 - 0.25) / 2))
    # the attention softmax(v^2/2): the linear path's entropy only falls, to the salient token alone; the nonlinear
    # path's falls, then rises to that of softmax(mu^2/2) at the end
    assert lin["salient_share_end"] > 0.999 and lin["entropy_max_rise"] < 1e-12 and lin["entropy_rebound"] == 0
    at_mu = np.exp(np.array(params.mu) ** 2 / 2) / np.exp(np.array(params.mu) ** 2 / 2).sum()
    assert non["entropy_end"] == pytest.approx(-(at_mu * np.log(at_mu)).sum(), abs=1e-5)
    assert non["entropy_start"] == pytest.approx(np.log(5)) and non["entropy_min"] < non["entropy_end"]
    assert joma_odes.rebound(np.array([2.0, 1.0, 1.5])) == pytest.approx(0.5)
    assert joma_odes.rebound(np.array([1.0, 1.0])) == 0  # never falls: nothing recovered
    assert non["deviation_end"] < non["deviation_half"] and non["deviation_end"] < 0.1
    scores = rules.score_claims(stats, params)
    printed = "tian.joma_odes.linear_invariant_as_printed"
    assert scores.pop(printed)["verdict"] == "not reproduced"  # erf(v/2)/Delta is not conserved by the printed ODE
    assert {s["verdict"] for s in scores.values()} == {"reproduced"}
    for s in scores.values():
        assert claims.crossings(s["rule"])[1] == "not reproduced"
    # the sqrt(2) form in the printed invariant's place: it holds, so the rule can pass
    fixed = {**stats, "linear": {**lin, "printed_invariant_spread": lin["sqrt2_invariant_spread"]}}
    assert rules.score_claims(fixed, params)[printed]["verdict"] == "reproduced"
    # a component that keeps growing, and rates that do not approach the printed ratio: both claims fail
    bad = {"linear": {**lin, "others_max_gap": 0.5, "salient_share_end": 0.6, "entropy_max_rise": 0.01},
           "nonlinear": {**non, "deviation_end": 0.3, "deviation_half": 0.2, "entropy_rebound": 0.02}}
    assert {s["verdict"] for s in rules.score_claims(bad, params).values()} == {"not reproduced"}
    # each clause of "takes all, sparser" alone: a share under 0.99, or one rise of the entropy, fails it
    takes_all = "tian.joma_odes.linear_salient_takes_all"
    for broken in ({"salient_share_end": 0.98}, {"entropy_max_rise": 1e-6}):
        one = {**stats, "linear": {**lin, **broken}}
        assert rules.score_claims(one, params)[takes_all]["verdict"] == "not reproduced", broken
    # a tie for the largest Delta: the two share the attention, so neither takes all
    tied = joma_odes.Params(delta=(1.0, 1.0, 0.5))
    assert rules.score_claims(_build(joma_odes, tied, None), tied)[takes_all]["verdict"] == "not reproduced"
    # a fall within rounding noise is no "sparser", however large its relative rebound
    noise = {**stats, "nonlinear": {**non, "entropy_min": non["entropy_start"] - 1e-12, "entropy_rebound": 0.9}}
    assert rules.score_claims(noise, params)["tian.joma_odes.nonlinear_sparser_then_denser"]["verdict"] == \
        "not reproduced"
    # equal mu: every component settles alike, the attention stays uniform, so it never grows sparser
    flat = joma_odes.Params(mu=(1.5, 1.5, 1.5))
    dense = rules.score_claims(_build(joma_odes, flat, None), flat)["tian.joma_odes.nonlinear_sparser_then_denser"]
    assert dense["verdict"] == "not reproduced"


def test_constructions_score_the_task_and_the_rectifier_both_ways(tmp_path):
    """Fig. 1's rectifier, Sec. II.b's spurious positions and Sec. III's counts: built from datasets the task
    generates (reproduced), then from labels that read every token, a training set of another size and a net of
    other weights (not reproduced)."""
    from pipeline_lib import declarations
    from pipeline_lib.figures import circuits_constructions
    from pipeline_lib.scoring import circuits_constructions as cc_rules
    from pipeline_lib.tasks import sma

    paths = Paths(str(tmp_path))
    fig2_task = sma.generate(sma.Params(p=4, T=8, k=5, n_train=2048, n_test=1024))
    write_dataset(fig2_task, paths.dataset("t8"))
    write_dataset(sma.generate(sma.Params(p=4, T=12, k=5, n_train=2048, n_test=256, draws=2)), paths.dataset("t12"))
    fig, stats = circuits_constructions.build(None, circuits_constructions.Params(spurious="t8", haystack="t12"), paths, {})
    plt.close(fig)
    scores = cc_rules.score_claims(stats, None)
    assert set(scores) == set(declarations.figure_claims("circuits_constructions"))
    assert {k: v["verdict"] for k, v in scores.items()} == dict.fromkeys(scores, "reproduced")
    assert stats["spurious"]["spurious_positions"] == [5, 6, 7] and stats["haystack"]["n_train"] == 2048
    assert 0 < stats["haystack"]["patterns_in_train"] <= 1024 and stats["rectifier"]["affine_max_error"] > 1

    every_token = fig2_task.assign(y=fig2_task.x.sum("position") % 4)  # a label that reads all eight tokens
    write_dataset(every_token, paths.dataset("t8_all"))
    write_dataset(sma.generate(sma.Params(p=4, T=6, k=5, n_train=2048, n_test=256)), paths.dataset("t6"))  # 2^12
    write_dataset(sma.generate(sma.Params(p=4, T=12, k=5, n_train=1000, n_test=256)), paths.dataset("t12_small"))
    fig, null = circuits_constructions.build(None, circuits_constructions.Params(spurious="t8_all", haystack="t6"), paths, {})
    plt.close(fig)
    assert null["spurious"]["spurious_positions"] == [] and null["haystack"]["log2_space"] == 12
    null["rectifier"]["max_error"] = 1.0  # no net of the alphabet computes it
    scores = cc_rules.score_claims(null, None)
    assert {k: v["verdict"] for k, v in scores.items()} == dict.fromkeys(scores, "not reproduced")
    fig, other = circuits_constructions.build(None, circuits_constructions.Params(spurious="t8", haystack="t12_small"), paths, {})
    plt.close(fig)
    other["rectifier"]["affine_max_error"] = 0.05  # an affine map would do as well: the two layers are not needed
    scores = cc_rules.score_claims(other, None)
    assert scores["circuits.constructions.rectifier_two_layer_relu"]["verdict"] == "not reproduced"
    assert scores["circuits.constructions.needle_in_haystack_counts"]["verdict"] == "not reproduced"  # 1,000 = 2^9.97
    x = np.linspace(-3, 3, 61)
    assert circuits_constructions.rectifier(x, 0.7)["exact_nets"] == [[[1.0, -1.0], [1.0, 1.0]], [[-1.0, 1.0], [1.0, 1.0]]]
    assert circuits_constructions.label_changes(np.array([[0, 1], [0, 2], [0, 2], [1, 1]]), np.array([0, 1, 1, 0]), 1) == (2, 2)
    with pytest.raises(Exception, match="figures.circuits_constructions.spurious"):
        write_dataset(xr.Dataset({"x": (("sample", "position"), np.zeros((2, 3), int))}), paths.dataset("other"))
        circuits_constructions.spurious(paths, "other")


def _copies_trajectory(seeds: int, moves: np.ndarray, end: np.ndarray, train_acc: np.ndarray) -> xr.Dataset:
    """A run on [x, x] (T = 8, k = 5): attention after each step from the per-step changes ``moves`` (seed, step,
    probe, 16) added to uniform attention, uniform attention at its first recorded epoch and ``end`` (seed, 16) at
    its last; every probe the tokens 0..7 twice."""
    steps = moves.shape[1]
    step_att = 1 / 16 + np.concatenate([np.zeros((seeds, 1, *moves.shape[2:])), np.cumsum(moves, 1)], 1)
    att = np.stack([np.full((seeds, 16), 1 / 16), end], 1)[:, :, None, :].repeat(moves.shape[2], 2)
    return xr.Dataset(
        {"step_attention": (("seed", "step", "probe", "position"), step_att),
         "attention": (("seed", "epoch", "probe", "position"), att),
         "probe_x": (("probe", "position"), np.tile(np.arange(16) % 8 % 4, (moves.shape[2], 1))),
         "train_acc": (("seed", "epoch"), np.stack([np.full(seeds, 0.25), train_acc], 1)),
         "test_acc": (("seed", "epoch"), np.stack([np.full(seeds, 0.25), train_acc], 1))},
        coords={"seed": np.arange(seeds), "epoch": [0, 1000], "attention_recorded": ("epoch", [True, True]),
                "step": np.arange(steps + 1), "step_epoch": ("step", np.arange(steps + 1) / 64)},
        attrs={"task_task": "sparse_modular_addition_copies", "task_copies": 2, "task_T": 8, "task_k": 5, "task_p": 4})


def _write_copies_run(paths, run: str, moves: np.ndarray, end: np.ndarray, train_acc: np.ndarray) -> dict:
    """:func:`_copies_trajectory` and its single_step analysis, whose changes are ``moves`` (seed, snapshot,
    input, 16) on the inputs 0..7 twice (mod 4); the figure's statistics."""
    from pipeline_lib.figures import circuits_duplicates

    seeds, snapshots, inputs = moves.shape[:3]
    write_dataset(_copies_trajectory(seeds, moves, end, train_acc), paths.trajectory(run))
    write_dataset(xr.Dataset({"attention_change": (("seed", "snapshot", "input", "position"), moves),
                              "x": (("input", "position"), np.tile(np.arange(16) % 8 % 4, (inputs, 1)))},
                             coords={"seed": np.arange(seeds), "snapshot": np.arange(snapshots)}),
                  paths.analysis("single_step", run))
    return _build(circuits_duplicates, circuits_duplicates.Params(run=run), paths)


def _copy_moves(rng, together: float) -> np.ndarray:
    """Per-step attention changes (10 seeds, 64 steps, 4 inputs, 16 positions) whose second copy repeats the first
    (at half the size) in a share ``together`` of the steps and moves on its own in the others."""
    first = rng.normal(size=(10, 64, 4, 8)) * 1e-3
    own = rng.normal(size=first.shape) * 1e-3
    same = rng.random(size=(10, 64, 4, 1)) < together
    return np.concatenate([first, np.where(same, first * 0.5, own)], -1)


def _end(first_k: float, other_first_k: float) -> np.ndarray:
    """The last epoch's attention (10 seeds, 16 positions): ``first_k`` and ``other_first_k`` on the two copies'
    first 5 positions, the rest spread over the other 6."""
    rest = (1 - first_k - other_first_k) / 6
    return np.tile(np.r_[np.full(5, first_k / 5), np.full(3, rest), np.full(5, other_first_k / 5), np.full(3, rest)],
                   (10, 1))


def test_duplicates_score_twins_moving_together_and_apart(tmp_path):
    """Sec. II.a's thought experiment on planted runs, each claim crossing its rule on its own: copies whose
    attention always moves together (reproduced), independently or together in 0.8 of the steps (not reproduced);
    copies that end attended evenly after both grew (reproduced), one alone, a weaker copy with 0.2, or even but
    below the start (not reproduced); no seed that learned (not run)."""
    from pipeline_lib import declarations
    from pipeline_lib.figures import circuits_duplicates
    from pipeline_lib.scoring import circuits_duplicates as cd_rules

    rng = np.random.default_rng(0)
    paths = Paths(str(tmp_path))
    even, alone = _end(0.5, 0.4), _end(0.95, 0.01)
    stats = _write_copies_run(paths, "dup", _copy_moves(rng, 1.0), even, np.ones(10))
    scores = cd_rules.score_claims(stats, None)
    assert set(scores) == set(declarations.figure_claims("circuits_duplicates"))
    assert {k: v["verdict"] for k, v in scores.items()} == dict.fromkeys(scores, "reproduced")
    assert stats["single_step"]["copies_both_rise_per_seed"] == [1.0] * 10
    assert stats["training_steps"]["twins_both_rise_per_seed"] == [1.0] * 10
    assert 0.2 < np.mean(stats["single_step"]["other_token_pairs_both_rise_per_seed"]) < 0.5  # about 1/3
    assert stats["end"]["weaker_copy_share_per_seed"][0] == pytest.approx(0.4 / 0.9)

    def verdicts(run: str, together: float, end: np.ndarray) -> tuple[str, str]:
        out = cd_rules.score_claims(_write_copies_run(paths, run, _copy_moves(rng, together), end, np.ones(10)), None)
        return (out["circuits.thought.update_reinforces_both_copies"]["verdict"],
                out["circuits.thought.duplicates_at_end"]["verdict"])

    assert verdicts("apart_alone", 0.0, alone) == ("not reproduced", "not reproduced")
    assert verdicts("apart_even", 0.0, even) == ("not reproduced", "reproduced")  # each claim on its own statistic
    assert verdicts("together_alone", 1.0, alone) == ("reproduced", "not reproduced")
    assert verdicts("near_bars", 0.6, _end(0.8, 0.2)) == ("not reproduced", "not reproduced")  # 0.2 < 0.25
    assert verdicts("not_grown", 1.0, _end(0.3, 0.3))[1] == "not reproduced"  # even, but below the start's 5/16

    stats = _write_copies_run(paths, "unlearned", _copy_moves(rng, 1.0), even, np.full(10, 0.5))
    assert cd_rules.score_claims(stats, None)["circuits.thought.duplicates_at_end"]["verdict"] == "not run"
    write_dataset(_copies_trajectory(10, _copy_moves(rng, 1.0), even, np.ones(10)).assign_attrs(task_copies=3),
                  paths.trajectory("x3"))
    with pytest.raises(Exception, match="figures.circuits_duplicates.run"):
        circuits_duplicates.build(None, circuits_duplicates.Params(run="x3"), paths, {})


def test_batch_steps_score_specific_steps_both_ways(tmp_path):
    """Sec. II.a's 'specific memorization circuits' on planted batch steps: those raising the attention beyond k
    less aligned with the held-out gradient (reproduced), equally or more aligned (not reproduced), and a run
    whose steps all raise it (not run); the shuffled control sits near 0."""
    from pipeline_lib import declarations
    from pipeline_lib.figures import circuits_batch_steps
    from pipeline_lib.scoring import circuits_batch_steps as cb_rules

    rng = np.random.default_rng(1)
    paths = Paths(str(tmp_path))
    traj = xr.Dataset(attrs={"task_k": 5, "task_T": 8})

    def write(run: str, change: np.ndarray, cosine: np.ndarray) -> dict:
        write_dataset(traj, paths.trajectory(run))
        held_out = np.zeros((change.shape[0], change.shape[1], 8))
        write_dataset(xr.Dataset({"attention_change": (("seed", "snapshot", "batch", "position"), change),
                                  "test_cosine": (("seed", "snapshot", "batch"), cosine),
                                  "test_attention_change": (("seed", "snapshot", "position"), held_out)},
                                 coords={"snapshot": [0, 1, 2]}, attrs={"batch_size": 32}),
                      paths.analysis("batch_steps", run))
        return _build(circuits_batch_steps, circuits_batch_steps.Params(run=run), paths)

    change = rng.normal(size=(6, 3, 64, 8))
    raising = change[..., 5:].sum(-1) > 0
    stats = write("specific", change, np.where(raising, 0.1, 0.4) + rng.normal(scale=0.05, size=raising.shape))
    scores = cb_rules.score_claims(stats, None)
    assert set(scores) == set(declarations.figure_claims("circuits_batch_steps"))
    assert scores["circuits.fig2.spurious_steps_memorize_batches"]["verdict"] == "reproduced"
    assert np.mean(stats["gap_per_seed"]) == pytest.approx(0.3, abs=0.03)
    assert abs(np.mean(stats["gap_shuffled_per_seed"])) < 0.1
    unrelated = 0.2 + rng.normal(scale=0.05, size=raising.shape)  # the cosine does not depend on the kind of step
    for run, cosine in (("unrelated", unrelated), ("reversed", np.where(raising, 0.4, 0.1))):
        null = cb_rules.score_claims(write(run, change, cosine), None)
        assert null["circuits.fig2.spurious_steps_memorize_batches"]["verdict"] == "not reproduced", run
    all_up = np.abs(change)
    none = cb_rules.score_claims(write("all_up", all_up, np.full(raising.shape, 0.2)), None)
    assert none["circuits.fig2.spurious_steps_memorize_batches"]["verdict"] == "not run"
