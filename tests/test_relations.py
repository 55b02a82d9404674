"""The talk's Theorems 3 and 4 (the reversal curse, the necessity of chain-of-thought): the relation sequences, the
Scan&Snap model whose last token attends to itself, the label's probability over snapshots (analysis next_token),
the figure's statistics and the rules that score them, each moved across its rule both ways."""
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import xarray as xr

from pipeline_lib.analysis import next_token
from pipeline_lib.figures import relation_theorems
from pipeline_lib.models.scan_snap import ScanSnapModel
from pipeline_lib.plumbing.paths import Paths
from pipeline_lib.plumbing.store import write_dataset
from pipeline_lib.scoring import relation_theorems as rules
from pipeline_lib.tasks import relations


def _rows(ds, split=None):
    sel = np.ones(ds.sizes["sample"], bool) if split is None else ds.split.values == split
    return {(int(a), int(b), int(c)) for (a, b), c in zip(ds.x.values[sel], ds.y.values[sel])}


@pytest.mark.parametrize("kind", ["reversal", "chain"])
def test_the_held_out_sequences_are_never_trained_on(kind):
    p = relations.Params(kind=kind, n_items=12, n_test_items=5, seed=3)
    ds = relations.generate(p)
    train, test = _rows(ds, "train"), _rows(ds, "test")
    per_item = 2 if kind == "reversal" else 3
    assert len(train) == per_item * 12 - 5 and len(test) == 5 and not train & test
    assert ds.attrs["task_M"] == per_item * 12 + 2 and int(ds.x.max()) + 1 == ds.attrs["task_M"]
    held = set(ds.item.values[ds.held_out.values])
    assert len(held) == 5 and set(ds.item.values[ds.split.values == "test"]) == held
    assert set(ds.statement.values[ds.split.values == "test"]) == {"reverse" if kind == "reversal" else "direct"}
    n = 12
    for i in held:  # what each theorem's held-out item keeps in training
        if kind == "reversal":
            assert (i, 2 * n, n + i) in train and (n + i, 2 * n + 1, i) in test
        else:
            assert {(i, 3 * n, n + i), (n + i, 3 * n, 2 * n + i)} <= train and (i, 3 * n + 1, 2 * n + i) in test
    assert relations.generate(p).equals(ds)  # the draw of the held-out items is the dataset's seed


def test_the_last_token_enters_the_prediction_only_when_it_attends_to_itself():
    x = torch.tensor([[0, 2], [0, 3]])  # one context token, two query tokens
    for attend, differ in ((False, False), (True, True)):
        m = ScanSnapModel(1, 4, "uniform", attend_query=attend)
        m.init_seeds([0])
        logits = m(x)
        assert torch.allclose(logits[0, 0], logits[0, 1]) != differ
        assert m.internals(x).attention.shape == (1, 2, 2 if attend else 1)


def _train(ds, steps_per_epoch_seed, epochs, eta_y=0.5, eta_z=0.05, record=(0, 1, 3, 10, 20)):
    """Plain batch-1 SGD of the talk's model (zero start) on the training split; weight snapshots at ``record``."""
    M = int(ds.attrs["task_M"])
    model = ScanSnapModel(2, M, "zero", attend_query=True)
    opt = torch.optim.SGD([{"params": [model.Y], "lr": eta_y}, {"params": [model.Z], "lr": eta_z}])
    train = ds.split.values == "train"
    x, y = torch.as_tensor(ds.x.values[train]), torch.as_tensor(ds.y.values[train])
    g = torch.Generator().manual_seed(steps_per_epoch_seed)
    snaps = []
    for epoch in range(epochs + 1):
        if epoch in record:
            snaps.append({"Z": model.Z.detach().numpy().copy(), "Y": model.Y.detach().numpy().copy()})
        if epoch == epochs:
            break
        for i in torch.randperm(len(y), generator=g):
            loss = torch.nn.functional.cross_entropy(model(x[i:i + 1])[:, 0], y[i:i + 1].expand(2))
            opt.zero_grad()
            (loss * 2).backward()  # the mean over two seeds: each seed its own gradient
            opt.step()
    w = xr.Dataset({k: (("snapshot", "seed", "a", "b"), np.stack([s[k] for s in snaps])) for k in ("Z", "Y")},
                   coords={"snapshot": list(record[:len(snaps)]), "seed": [0, 1]})
    return model, w


@pytest.mark.parametrize("kind", ["reversal", "chain"])
def test_trained_sequences_rise_and_held_out_ones_stay_below_chance(kind):
    """A real batch-1 SGD run of the model (M = 42 or 62, 20 epochs): the label's probability from the analysis
    rises on the trained sequences (past one half, every recorded step) and stays under 1/M on the held-out ones,
    whose trained twins rise above it."""
    ds = relations.generate(relations.Params(kind=kind, n_items=20, n_test_items=8))
    model, w = _train(ds, 0, 20)
    x = torch.as_tensor(ds.x.values)
    p = next_token.label_probability(model, w, x, ds.y.values)  # (seed, snapshot, sample)
    M = ds.attrs["task_M"]
    assert p.shape == (2, 5, ds.sizes["sample"]) and np.allclose(p[:, 0], 1 / M)  # the zero start: uniform
    held, test = ds.held_out.values, ds.split.values == "test"
    upper = "reverse" if kind == "reversal" else "direct"
    twins = (ds.statement.values == upper) & ~held
    lower = ~test if kind == "reversal" else (np.isin(ds.statement.values, ["step1", "step2"]) & held)
    assert p[:, -1, lower].min() > 0.5 and (np.diff(1 - p[:, 1:, lower].min(-1), axis=1) < 0).all()
    assert p[:, 1:, test].max() * M < 1 and p[:, -1, twins].min() * M > 1


def _analysis(kind, p_low_gap, p_high, control, steps=(0, 1, 2, 5, 10, 20, 50, 100, 200), n=50):
    """A next_token analysis of ``n`` items (``n // 2`` held out), two seeds: the lower bound's sequences at
    1 - ``p_low_gap``(t), the held-out test ones at ``p_high``, the trained twins of the test kind at ``control``
    where they are not in the lower bound (the chain's direct sequences of the other items)."""
    ds = relations.generate(relations.Params(kind=kind, n_items=n, n_test_items=n // 2))
    t = np.asarray(steps, float)
    lower, held_only, upper = relation_theorems.BOUNDS[kind]
    st, held = ds.statement.values, ds.held_out.values
    p = np.full((2, len(t), ds.sizes["sample"]), 0.5)
    low = relation_theorems.lower_bound_sequences(ds, kind)
    p[:, :, low] = 1 - p_low_gap(t)[None, :, None]
    p[:, :, (st == upper) & held] = p_high
    p[:, :, (st == upper) & ~held & ~low] = control  # the reversal's trained reverses are in the lower bound
    coords = {k: v for k, v in ds.coords.items() if v.dims == ("sample",)}
    return xr.Dataset({"p_label": (("seed", "step", "sample"), p)}, coords={"seed": [0, 1], "step": list(steps), **coords})


def _cfg(kinds=("reversal", "chain"), n=50, lr=0.05, ratio=10.0, batch_size=1, momentum=0.0, init="zero",
         warmup_epochs=0, label_smoothing=0.0, sweep=None):
    opt = SimpleNamespace(name="sgd", lr=lr, momentum=momentum, weight_decay=0.0, schedule="constant",
                          lr_ratio={"Y": ratio}, warmup_epochs=warmup_epochs)
    runs = {k: SimpleNamespace(optimizer=opt, model="m", dataset=k, batch_size=batch_size, sweep=sweep,
                               init_from=None, label_smoothing=label_smoothing) for k in kinds}
    M = {"reversal": 2 * n + 2, "chain": 3 * n + 2}
    return SimpleNamespace(runs=runs, models={"m": SimpleNamespace(params={"init": init})},
                           datasets={k: SimpleNamespace(plugin="relations", params={"kind": k}) for k in kinds},
                           run_spec=lambda r: SimpleNamespace(shape={"tokens": M[r]}))


def _stats(tmp_path, gap, high, control, n=50, **cfg):
    paths = Paths(str(tmp_path))
    for kind in ("reversal", "chain"):
        write_dataset(_analysis(kind, gap, high, control, n=n), paths.analysis("next_token", kind))
    params = relation_theorems.Params(reversal="reversal", chain="chain")
    _, stats = relation_theorems.build(_cfg(n=n, **cfg), params, paths, {})
    return json.loads(json.dumps(stats)), params


def test_the_figure_reads_the_planted_decay_and_the_held_out_probability(tmp_path):
    """1 - p falling as t^-0.7 after t0 gives c = 0.7 on both theorems; M x the held-out p is read as planted
    (M = 102 and 152: the theorems assume M >> 100)."""
    stats, _ = _stats(tmp_path, lambda t: 0.5 * np.maximum(t, 1) ** -0.7, 0.01, 0.5)
    for kind, n_train, M in (("reversal", 75, 102), ("chain", 125, 152)):
        s = stats[kind]
        assert s["N"] == n_train and s["M"] == M and s["t0"] == pytest.approx(n_train * math.log(M) / 0.5)
        assert s["decay_exponent_per_seed"] == pytest.approx([0.7, 0.7])
        assert s["end_decay_exponent_per_seed"] == pytest.approx([0.7, 0.7]) and s["end_steps"] == 3
        assert s["p_high_times_M_per_seed"] == pytest.approx([0.01 * M] * 2)
        twin = 0.5 if kind == "chain" else 1 - 0.5 * 200 ** -0.7  # the reversal's twins: trained, in the lower bound
        assert s["control_times_M_per_seed"] == pytest.approx([twin * M] * 2) and s["theorem_setting"]
    assert stats["reversal"]["lower_bound_sequences"] == 75 and stats["chain"]["lower_bound_sequences"] == 50
    ans = {k: _analysis(k, lambda t: 0.5 * np.maximum(t, 1) ** -0.7, 0.01, 0.5) for k in ("reversal", "chain")}
    fig = relation_theorems.plot_relation_theorems(_cfg(), ans, stats)
    assert [ax.get_title().split(",")[0] for ax in fig.axes] == ["Theorem 3", "Theorem 4"]
    assert all(ax.get_xscale() == ax.get_yscale() == "log" and len(ax.lines) == 2 * 3 + 2 for ax in fig.axes)


@pytest.mark.parametrize("gap, high, verdicts", [
    (lambda t: np.maximum(t, 1) ** -1.0, 0.005, ("reproduced", "reproduced")),  # the theorems hold: M p < 1
    (lambda t: np.full(t.shape, 0.3), 0.2, ("not reproduced", "not reproduced")),  # no decay, above 1/M
    (lambda t: np.maximum(t, 1) ** -1.0, 0.2, ("reproduced", "not reproduced")),  # learned, but above 1/M
    (lambda t: 0.9 + 0.05 * np.maximum(t, 1) ** -0.5, 0.005, ("not reproduced", "reproduced")),  # p levels at 0.1
    (lambda t: np.where(t <= 50, 1.0 / np.maximum(t, 1), 1e-4 * t + 0.015), 0.005,
     ("not reproduced", "reproduced")),  # 1 - p rises again over the last steps
])
def test_rules_move_across_both_ways(tmp_path, gap, high, verdicts):
    stats, params = _stats(tmp_path, gap, high, 0.5)
    scores = rules.score_claims(stats, params)
    assert len(scores) == 4
    for kind, (low_id, high_id, *_) in rules.IDS.items():
        assert (scores[rules.PREFIX + low_id]["verdict"], scores[rules.PREFIX + high_id]["verdict"]) == verdicts
        assert "per seed" in scores[rules.PREFIX + high_id]["control"]


@pytest.mark.parametrize("setting, broken", [({"batch_size": 8}, "batch size 8"), ({"momentum": 0.9}, "momentum 0.9"),
                                             ({"lr": 0.2}, "eta_Y = 2"), ({"ratio": 2.0}, "eta_Y / eta_Z = 2"),
                                             ({"init": "uniform"}, "init"), ({"n": 20}, "tokens (the theorems assume M >> 100)"),
                                             ({"lr": 0.0005}, "1/M^0.99"), ({"warmup_epochs": 2}, "warm-up"),
                                             ({"label_smoothing": 0.1}, "label smoothing 0.1"),
                                             ({"batch_size": "full"}, "batch size full"),
                                             ({"sweep": {"lr": [0.05, 0.1]}}, "swept")])
def test_outside_the_assumptions_is_not_run(tmp_path, setting, broken):
    stats, params = _stats(tmp_path, lambda t: np.maximum(t, 1) ** -1.0, 0.005, 0.5, **setting)
    scores = rules.score_claims(stats, params)
    assert {s["verdict"] for s in scores.values()} == {"not run"}
    assert all(broken in s["control"] for s in scores.values()), scores


def test_too_few_steps_after_t0_is_not_run(tmp_path):
    stats, params = _stats(tmp_path, lambda t: np.maximum(t, 1) ** -1.0, 0.01, 0.5, lr=0.0015)  # t0 past the last t
    assert stats["reversal"]["theorem_setting"] and stats["chain"]["steps_after_t0"] == 0
    scores = rules.score_claims(stats, params)
    assert {s["verdict"] for s in scores.values()} == {"not run"}
    assert all("train it longer" in s["control"] for s in scores.values())


def _seed_stats(c, c_end, p_last, high):
    """Figure statistics for both theorems with the given per-seed values (a run inside the assumptions)."""
    one = {"theorem_setting": True, "outside_theorem": [], "steps_after_t0": 20, "end_steps": 7, "t0": 1592.0,
           "M": 202, "N": 150, "eta_Y": 0.5, "last_step": 75000.0, "run": "r", "decay_exponent_per_seed": c,
           "end_decay_exponent_per_seed": c_end, "p_low_last_per_seed": p_last, "p_high_times_M_per_seed": high,
           "control_times_M_per_seed": [200.0] * len(high)}
    return {"reversal": dict(one), "chain": dict(one)}


def test_every_seed_must_meet_the_bounds():
    """The bounds hold for every run, so one seed that misses them keeps the verdict from reproduced (a seed whose
    exponent is missing counts as missing them), and a majority that misses them is not reproduced."""
    params = relation_theorems.Params(reversal="r", chain="r")

    def verdicts(**kw):
        base = {"c": [1.3] * 10, "c_end": [1.0] * 10, "p_last": [0.996] * 10, "high": [0.8] * 10} | kw
        scores = rules.score_claims(_seed_stats(**base), params)
        return [scores[rules.PREFIX + i]["verdict"] for i in rules.IDS["reversal"][:2]]

    assert verdicts() == ["reproduced", "reproduced"]
    assert verdicts(c=[1.3] * 9 + [-0.5], high=[0.8] * 9 + [3.0]) == ["partial", "partial"]  # 9 of 10
    assert verdicts(c_end=[1.0] * 9 + [None])[0] == "partial"
    assert verdicts(p_last=[0.4] * 6 + [0.996] * 4, high=[1.2] * 6 + [0.8] * 4) == ["not reproduced"] * 2


def test_a_run_of_the_other_kind_is_named(tmp_path):
    paths = Paths(str(tmp_path))
    for key in ("reversal", "chain"):  # both keys name the chain run
        write_dataset(_analysis("chain", lambda t: 1 / np.maximum(t, 1), 0.005, 0.5), paths.analysis("next_token", key))
    with pytest.raises(ValueError, match="figures.relation_theorems.reversal: .* another kind"):
        relation_theorems.build(_cfg(), relation_theorems.Params(reversal="reversal", chain="chain"), paths, {})


def test_next_token_names_a_run_whose_model_has_its_own_loss(tmp_path):
    """A model that trains on its own loss (the quadratic MLP's MSE) has no next-token probabilities: the analysis
    names the config key instead of writing softmaxed regression outputs."""
    from pipeline_lib.models.quadratic_mlp import QuadraticMLP
    from pipeline_lib.tasks import modular_addition

    paths = Paths(str(tmp_path))
    write_dataset(modular_addition.generate(modular_addition.Params(d=5)), paths.dataset("ma"))
    write_dataset(xr.Dataset({"W_a": (("snapshot", "seed", "q", "d"), np.zeros((1, 1, 3, 5)))},
                             coords={"snapshot": [0], "seed": [0]}), paths.weights("r"))
    spec = SimpleNamespace(dataset="ma", model_module=None, model_params=None, seeds=[0], shape={}, attention=None)
    cfg = SimpleNamespace(run_spec=lambda name: spec)
    from unittest import mock
    with mock.patch.object(next_token, "build_run_model", lambda spec, n: QuadraticMLP(n, 5, 3)), \
            pytest.raises(ValueError, match="analyses.next_token.runs: run 'r'.*own loss"):
        next_token.compute(cfg, "r", next_token.Params(runs=("r",)), paths)
