import dataclasses

import numpy as np
import pytest
import torch

from pipeline_lib.engine import train_seeds
from pipeline_lib.models import build_run_model
from pipeline_lib.plumbing.config import TrainingPlan, load_config
from pipeline_lib.plumbing.device import resolve_device
from pipeline_lib.tasks.sma import sparse_modular_addition


def _setup(smoke_raw, run="scratch_p4", epochs=25, batch_size="full", lr=1e-2):
    smoke_raw["runs"][run].update(epochs=epochs, batch_size=batch_size, optimizer={"lr": lr})
    cfg = load_config(smoke_raw)
    d = cfg.params("task", cfg.runs[run].dataset)
    data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    tensors = {k: torch.as_tensor(v) for k, v in dict(
        x_train=data.x_train, y_train=data.y_train, x_test=data.x_test, y_test=data.y_test,
        probe_x=data.x_test[:4]).items()}
    return cfg, cfg.runs[run], d, tensors


def _train(cfg, rc, d, tensors, seeds, poison=None):
    model = build_run_model(cfg.run_spec(rc.name), len(seeds))
    model.init_seeds(seeds)
    if poison is not None:
        with torch.no_grad():
            model.W_1[poison] = float("inf")
    rc = dataclasses.replace(rc, seeds=tuple(seeds))
    return model, train_seeds(model, tensors, TrainingPlan.of(rc), torch.device("cpu"))


@pytest.mark.parametrize("batch_size", ["full", 32])
def test_batched_seeds_equal_sequential_training(smoke_raw, batch_size):
    torch.set_num_threads(1)
    cfg, rc, d, tensors = _setup(smoke_raw, batch_size=batch_size)
    _, together = _train(cfg, rc, d, tensors, [0, 1, 2])
    assert np.isfinite(together.train_loss).all()
    # training actually moved: the loss changed by more than the tolerance we compare with
    assert np.abs(together.train_loss[:, -1] - together.train_loss[:, 0]).min() > 0.05
    for i, seed in enumerate([0, 1, 2]):
        _, alone = _train(cfg, rc, d, tensors, [seed])
        for name in ("train_loss", "test_loss", "train_acc", "test_acc", "attention"):
            diff = np.abs(getattr(together, name)[i] - getattr(alone, name)[0]).max()
            assert diff <= 1e-5, (name, seed, diff)
        for name, w in together.weights.items():
            assert np.abs(w[:, i] - alone.weights[name][:, 0]).max() <= 1e-5


def test_diverged_seed_is_frozen_and_flagged_others_continue(smoke_raw):
    torch.set_num_threads(1)
    cfg, rc, d, tensors = _setup(smoke_raw, epochs=10)
    model, rec = _train(cfg, rc, d, tensors, [0, 1, 2], poison=1)
    assert list(rec.diverged_epoch) == [-1, 0, -1]
    assert np.isnan(rec.train_loss[1]).all()
    assert np.isinf(model.W_1[1].detach().numpy()).all()  # frozen: the poisoned value is still there
    first, last = rec.weights["W_E"][0, 1], rec.weights["W_E"][-1, 1]
    np.testing.assert_array_equal(first, last)  # parameters of the frozen seed never move
    _, healthy = _train(cfg, rc, d, tensors, [0, 2])
    np.testing.assert_allclose(rec.train_loss[[0, 2]], healthy.train_loss, atol=1e-5)


def test_recording_schedule_and_epoch_coordinates(smoke_raw):
    cfg, rc, d, tensors = _setup(smoke_raw, epochs=40)
    _, rec = _train(cfg, rc, d, tensors, [0])
    assert list(rec.epochs) == list(range(41))
    assert rec.attention_epochs[0] == 0 and rec.attention_epochs[-1] == 40
    assert rec.snapshot_epochs[-1] == 40
    assert rec.attention.shape == (1, len(rec.attention_epochs), 4, d.T)
    np.testing.assert_allclose(rec.attention.sum(-1), 1.0, atol=1e-5)


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="device"):
            resolve_device("cuda")


class _Interrupt(Exception):
    pass


@pytest.mark.parametrize("batch_size", ["full", 32])
def test_interrupted_then_resumed_equals_uninterrupted_bitwise(smoke_raw, tmp_path, batch_size):
    from pipeline_lib.checkpointing import Checkpointing

    torch.set_num_threads(1)
    cfg, rc, d, tensors = _setup(smoke_raw, epochs=30, batch_size=batch_size)
    _, reference = _train(cfg, rc, d, tensors, [0, 1])
    ck = Checkpointing(tmp_path / "resume" / "ck.pt", every=10, key="k")

    def stop_at_25(epoch, _):
        if epoch == 25:
            raise _Interrupt

    model = build_run_model(cfg.run_spec(rc.name), 2)
    model.init_seeds([0, 1])
    rc2 = dataclasses.replace(rc, seeds=(0, 1))
    with pytest.raises(_Interrupt):
        train_seeds(model, tensors, TrainingPlan.of(rc2), torch.device("cpu"), callback=stop_at_25, checkpoint=ck)
    assert torch.load(ck.path, weights_only=False)["epoch"] == 20
    fresh = build_run_model(cfg.run_spec(rc.name), 2)  # a new process would start from scratch
    fresh.init_seeds([0, 1])
    seen = []
    resumed = train_seeds(fresh, tensors, TrainingPlan.of(rc2), torch.device("cpu"), callback=lambda e, _: seen.append(e),
                          checkpoint=ck)
    assert seen[0] == 20  # it really resumed instead of starting over
    for name in ("train_loss", "test_loss", "train_acc", "test_acc", "attention"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(reference, name), err_msg=name)
    for name in reference.weights:
        np.testing.assert_array_equal(resumed.weights[name], reference.weights[name], err_msg=name)


def test_checkpoint_with_another_key_is_ignored(smoke_raw, tmp_path):
    from pipeline_lib.checkpointing import Checkpointing

    cfg, rc, d, tensors = _setup(smoke_raw, epochs=12)
    model = build_run_model(cfg.run_spec(rc.name), 1)
    model.init_seeds([0])
    rc1 = dataclasses.replace(rc, seeds=(0,))
    train_seeds(model, tensors, TrainingPlan.of(rc1), torch.device("cpu"), checkpoint=Checkpointing(tmp_path / "ck.pt", 5, "old"))
    seen = []
    model.init_seeds([0])
    train_seeds(model, tensors, TrainingPlan.of(rc1), torch.device("cpu"), callback=lambda e, _: seen.append(e),
                checkpoint=Checkpointing(tmp_path / "ck.pt", 5, "new"))
    assert seen[0] == 0


@pytest.mark.parametrize("batch_size", ["full", 64])
def test_step_attention_is_recorded_after_every_step_and_changes_nothing_else(smoke_raw, batch_size):
    torch.set_num_threads(1)
    cfg, rc, d, tensors = _setup(smoke_raw, epochs=6, batch_size=batch_size)
    rc = dataclasses.replace(rc, record_attention=dataclasses.replace(rc.record_attention, dense_until=6))
    _, plain = _train(cfg, rc, d, tensors, [0, 1])
    _, stepped = _train(cfg, dataclasses.replace(rc, step_attention_epochs=3), d, tensors, [0, 1])
    assert plain.step_attention is None
    spe = 1 if batch_size == "full" else -(-d.n_train // batch_size)
    assert stepped.steps_per_epoch == spe
    assert stepped.step_attention.shape == (2, 3 * spe + 1, 4, d.T)
    for name in ("train_loss", "test_loss", "attention"):  # recording every step does not touch training
        np.testing.assert_array_equal(getattr(stepped, name), getattr(plain, name), err_msg=name)
    for e in range(4):  # the step ending epoch e is the epoch-e attention
        np.testing.assert_array_equal(stepped.step_attention[:, e * spe], plain.attention[:, e])
    # between epoch ends it records the states in between: every step moves the attention
    assert (np.abs(np.diff(stepped.step_attention, axis=1)).max(axis=(0, 2, 3)) > 0).all()


def test_chunked_evaluation_equals_one_pass(smoke_raw):
    """evaluate_set in chunks: the accuracy exactly and the loss up to the order of the sums equal one
    pass over the whole set, every example evaluated once."""
    from pipeline_lib.losses import evaluate_set, loss_fn

    cfg, rc, d, tensors = _setup(smoke_raw)
    model = build_run_model(cfg.run_spec(rc.name), 3)
    model.init_seeds([0, 1, 2])
    x = torch.cat([tensors["x_train"], tensors["x_test"]])
    y = torch.cat([tensors["y_train"], tensors["y_test"]])
    la = loss_fn(model)
    whole_loss, whole_acc = evaluate_set(model, la, x, y, chunk=len(x))
    calls = []
    model.register_forward_hook(lambda m, i, o: calls.append(i[0].shape[0]))
    for chunk in (7, 64):
        calls.clear()
        loss, acc = evaluate_set(model, la, x, y, chunk=chunk)
        assert calls == [min(chunk, len(x) - i) for i in range(0, len(x), chunk)]
        assert torch.equal(acc, whole_acc)
        torch.testing.assert_close(loss, whole_loss, rtol=1e-6, atol=0)


@pytest.mark.parametrize("batch_size", ["full", 32])
def test_per_slot_training_sets_equal_each_seed_alone_on_its_draw(smoke_raw, batch_size):
    """Each seed its own data draw (x_train (S, N, T)): the batched run equals training each seed alone
    on its own draw, and the draws matter (the seeds' runs differ from one shared set's)."""
    from pipeline_lib.tasks.sma import sparse_modular_addition_draws

    torch.set_num_threads(1)
    cfg, rc, d, tensors = _setup(smoke_raw, batch_size=batch_size)
    data = sparse_modular_addition_draws(d.p, d.T, d.k, d.n_train, d.n_test, draws=3, seed=0)
    x_tr, y_tr = (torch.as_tensor(v.reshape(3, d.n_train, *v.shape[1:])) for v in (data.x_train, data.y_train))
    per_slot = dict(tensors, x_train=x_tr, y_train=y_tr)
    _, together = _train(cfg, rc, d, per_slot, [0, 1, 2])
    _, shared = _train(cfg, rc, d, dict(per_slot, x_train=x_tr[0], y_train=y_tr[0]), [0, 1, 2])
    assert np.abs(together.train_loss[1:] - shared.train_loss[1:]).max() > 1e-3  # draws 1, 2 differ from draw 0
    assert np.abs(together.train_loss[0] - shared.train_loss[0]).max() <= 1e-5  # seed 0 trains on draw 0 in both
    for i in range(3):
        _, alone = _train(cfg, rc, d, dict(per_slot, x_train=x_tr[i], y_train=y_tr[i]), [i])
        for name in ("train_loss", "test_loss", "train_acc", "test_acc"):
            diff = np.abs(getattr(together, name)[i] - getattr(alone, name)[0]).max()
            assert diff <= 1e-5, (name, i, diff)


def test_a_run_on_a_dataset_with_draws_trains_each_seed_on_its_own(smoke_raw, tmp_path):
    """The dataset and train stages end to end: seed i of a run trains on draw i; an analysis that reads
    one training set refuses such a dataset by name; more seeds than draws is refused naming the key."""
    from pipeline_lib.plumbing.store import read_dataset
    from pipeline_lib.selection import dataset_split
    from pipeline_lib.stages.dataset import build_dataset
    from pipeline_lib.stages.train import train_draws, train_run

    smoke_raw["datasets"]["sma_draws"] = dict(smoke_raw["datasets"]["sma_p4_T12"], draws=2)
    smoke_raw["runs"]["on_draws"] = dict(smoke_raw["runs"]["scratch_p4"], dataset="sma_draws", seeds=2, epochs=3)
    cfg = load_config(smoke_raw)
    build_dataset(cfg, "sma_draws", str(tmp_path / "d.h5"))
    ds = read_dataset(tmp_path / "d.h5")
    with pytest.raises(ValueError, match="training draws, one per seed"):
        dataset_split(ds, "train")
    out = {k: str(tmp_path / f"{k}.h5") for k in ("trajectory", "weights")}
    rec = train_run(cfg, "on_draws", str(tmp_path / "d.h5"), out["trajectory"], out["weights"])
    n = int(smoke_raw["datasets"]["sma_p4_T12"]["n_train"])
    draw1 = ds.draw.values == 1
    assert int(draw1.sum()) == n
    # seed 1's epoch-0 training accuracy is that of its initial weights on draw 1, not on draw 0
    from pipeline_lib.losses import per_seed_loss_acc
    model = build_run_model(cfg.run_spec("on_draws"), 2)
    model.init_seeds([0, 1])
    with torch.no_grad():
        acc = [float(per_seed_loss_acc(model(torch.as_tensor(ds.x.values[ds.draw.values == d])),
                                       torch.as_tensor(ds.y.values[ds.draw.values == d]))[1][1]) for d in (0, 1)]
    assert rec.train_acc[1, 0] == pytest.approx(acc[1], abs=1e-6) and acc[0] != acc[1]
    # a run of more seeds than draws: the config check refuses it (tests/test_config.py); the stage too
    with pytest.raises(ValueError, match="'draws: 2'"):
        train_draws(ds, [0, 1, 2], [0, 1, 2])


def test_a_run_records_z_a_for_the_input_set_it_names(smoke_raw, tmp_path):
    """embed_inputs: first_k_patterns records z_A of every first-k pattern followed by zeros (the authors'
    Fig. 4 inputs) instead of the first test sequences; the recorded z_A is the model's at those inputs."""
    from pipeline_lib.plumbing.store import read_dataset
    from pipeline_lib.selection import snapshot_arrays
    from pipeline_lib.stages.dataset import build_dataset
    from pipeline_lib.stages.train import train_run
    from pipeline_lib.tasks.sma import first_k_patterns

    run = dict(smoke_raw["runs"]["pretrain_p2_d2"], epochs=2, n_embed=40, embed_inputs="first_k_patterns")
    smoke_raw["runs"]["patterns"] = run
    cfg = load_config(smoke_raw)
    build_dataset(cfg, run["dataset"], str(tmp_path / "d.h5"))
    out = {k: str(tmp_path / f"{k}.h5") for k in ("trajectory", "weights")}
    train_run(cfg, "patterns", str(tmp_path / "d.h5"), out["trajectory"], out["weights"])
    traj = read_dataset(out["trajectory"])
    d = smoke_raw["datasets"][run["dataset"]]
    x = first_k_patterns(d["p"], d["k"], d["T"])
    assert len(x) == d["p"] ** d["k"] < run["n_embed"] and np.array_equal(traj.embed_x.values, x)  # all of them
    assert (x[:, d["k"]:] == 0).all() and np.array_equal(traj.embed_y.values, x[:, :d["k"]].sum(1) % d["p"])
    model = build_run_model(cfg.run_spec("patterns"), 2)
    model.load_arrays(snapshot_arrays(read_dataset(out["weights"]), -1))
    with torch.no_grad():
        z = model.site(model.internals(torch.as_tensor(x)), "z_A").numpy()
    np.testing.assert_allclose(traj.z_A.isel(snapshot=-1).values, z, rtol=1e-5, atol=1e-6)
    assert not np.allclose(traj.z_A.isel(snapshot=-1).values, traj.z_A.isel(snapshot=0).values)  # it trained
