import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import xarray as xr
import xarray.testing

from pipeline_lib.plumbing.config import slice_hash
from pipeline_lib.plumbing.store import (
    CHUNK_BYTES,
    ArtifactError,
    chunk_shape,
    file_hash,
    provenance,
    read_dataset,
    write_dataset,
)


def _ds():
    rng = np.random.default_rng(0)
    return xr.Dataset(
        {"train_loss": (("seed", "epoch"), rng.random((3, 5)).astype(np.float32)),
         "diverged": (("seed",), np.array([False, True, False]))},
        coords={"seed": [0, 1, 2], "epoch": [0, 10, 20, 30, 40]},
        attrs={"run": "demo", "threads": 1},
    )


def test_round_trip_is_identical(tmp_path):
    ds = _ds()
    write_dataset(ds, tmp_path / "a.h5")
    back = read_dataset(tmp_path / "a.h5")
    xarray.testing.assert_identical(back, ds)
    assert back.diverged.dtype == bool


def test_chunks_keep_the_leading_axes_and_fit_the_target():
    assert chunk_shape((3, 5), 4) == (3, 5)  # fits: one chunk
    assert chunk_shape((2, 160, 240, 240), 4) == (2, 160, 240, 2)  # last axis halved first
    assert chunk_shape((42, 10, 128, 32), 4) == (42, 10, 128, 4)
    assert chunk_shape((5000, 64, 64), 4) == (5000, 32, 1)  # the last axis down to 1, then the one before
    for shape in [(7,), (3, 1 << 20), (1 << 21,), (33, 5, 512, 29), (9, 1, 1, 1 << 19)]:
        c = chunk_shape(shape, 8)
        assert np.prod(c) * 8 <= CHUNK_BYTES and all(1 <= a <= b for a, b in zip(c, shape))
    assert chunk_shape((0, 4), 4) is None and chunk_shape((), 4) is None


def test_replicas_in_one_chunk_store_repeated_values_once(tmp_path):
    """A sweep's slots share their seed's initialisation (8 seeds x 10 grid points here; the second
    snapshot moves 0.5% of it): with the trailing axes cut, neighbouring slots are 1152 B apart after
    the shuffle filter and the repeats compress; h5py's own chunk guess spreads them over small chunks.
    Same data either way; byte strings (an extra character axis in netCDF) take the library's chunks."""
    import h5py

    rng = np.random.default_rng(0)
    init = rng.standard_normal((8, 48, 48)).astype(np.float32)
    w = np.stack([np.tile(init, (10, 1, 1))] * 2)  # (snapshot, slot, 48, 48), 1.5 MB
    moved = rng.random(w[1].shape) < 0.005
    w[1][moved] += 0.1
    ds = xr.Dataset({"Z": (("snapshot", "slot", "a", "b"), w)})
    write_dataset(ds, tmp_path / "z.h5")
    with h5py.File(tmp_path / "default.h5", "w") as fh:  # the library's default chunks, same filters
        fh.create_dataset("Z", data=w, chunks=True, compression="gzip", compression_opts=4, shuffle=True)
        default = fh["Z"].id.get_storage_size()
    with h5py.File(tmp_path / "z.h5") as fh:
        assert fh["Z"].chunks == chunk_shape(w.shape, 4)
        ours = fh["Z"].id.get_storage_size()
    assert ours < 0.3 * default
    assert read_dataset(tmp_path / "z.h5").Z.values.tobytes() == w.tobytes()
    names = xr.Dataset({"name": (("seed",), np.array([b"ab", b"cde"]))})
    write_dataset(names, tmp_path / "s.h5")
    assert list(read_dataset(tmp_path / "s.h5").name.values) == [b"ab", b"cde"]


def test_provenance_attrs_present_and_correct(tmp_path):
    src = tmp_path / "input.h5"
    write_dataset(_ds(), src)
    slice_ = {"run": {"epochs": 3}, "run_name": "demo"}
    write_dataset(_ds(), tmp_path / "b.h5", provenance(slice_, [src], device="cpu", code="abc"))
    attrs = read_dataset(tmp_path / "b.h5").attrs
    for key in ("config_json", "config_hash", "inputs_json", "pipeline_lib_version", "git_commit",
                "torch_version", "device", "created_at", "code_hash"):
        assert key in attrs, key
    assert json.loads(attrs["config_json"]) == slice_
    assert attrs["config_hash"] == slice_hash(slice_)
    assert json.loads(attrs["inputs_json"]) == [{"path": str(src), "sha256": file_hash(src)}]
    import torch
    assert attrs["torch_version"] == str(torch.__version__) and attrs["device"] == "cpu"


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    def boom(self, *a, **k):
        raise RuntimeError("disk full")
    monkeypatch.setattr(xr.Dataset, "to_netcdf", boom)
    with pytest.raises(RuntimeError):
        write_dataset(_ds(), tmp_path / "c.h5")
    assert list(tmp_path.iterdir()) == []


def test_killed_writer_leaves_no_file_at_output_path(tmp_path):
    """SIGKILL a process in the middle of a (slow) write: nothing appears at the output path."""
    out = tmp_path / "big.h5"
    script = textwrap.dedent(f"""
        import numpy as np, xarray as xr, sys
        from pipeline_lib.plumbing.store import write_dataset
        ds = xr.Dataset({{"w": (("a", "b"), np.random.default_rng(0).random((6000, 6000)))}})
        print("writing", flush=True)
        write_dataset(ds, {str(out)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    import time
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()


def test_corrupt_input_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "d.h5"
    write_dataset(_ds(), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])  # truncated
    with pytest.raises(ArtifactError, match=r"d\.h5.*(truncated|corrupt).*snakemake --forcerun train"):
        read_dataset(path, rule="train")
    with pytest.raises(ArtifactError, match="does not exist"):
        read_dataset(tmp_path / "missing.h5")


def test_same_finds_equal_folders_and_names_what_differs(tmp_path):
    """``python -m pipeline_lib same``: bit-equal artifacts (NaN where NaN) pass; one value moved by one
    ulp, or an artifact missing from the second folder, is named."""
    from pipeline_lib.build.golden import identical

    x = np.array([[0.1, np.nan], [1e-8, 3.0]], dtype=np.float32)
    for folder in ("a", "b", "c"):
        write_dataset(xr.Dataset({"w": (("seed", "k"), x), "n": ("seed", np.arange(2))}),
                      tmp_path / folder / "runs" / "r" / "weights.h5")
    write_dataset(xr.Dataset({"w": (("seed",), x[0])}), tmp_path / "a" / "runs" / "r" / "trajectory.h5")
    write_dataset(xr.Dataset({"w": (("seed",), x[0])}), tmp_path / "b" / "runs" / "r" / "trajectory.h5")
    moved = x.copy()
    moved[1, 1] = np.nextafter(moved[1, 1], np.float32(4))
    write_dataset(xr.Dataset({"w": (("seed", "k"), moved), "n": ("seed", np.arange(2))}),
                  tmp_path / "c" / "runs" / "r" / "weights.h5")
    same = identical(tmp_path / "a", tmp_path / "b")
    assert same == {"differ": [], "missing": [], "same": ["runs/r/trajectory.h5", "runs/r/weights.h5"]}
    diff = identical(tmp_path / "a", tmp_path / "c", only="runs")
    assert diff["differ"] == ["runs/r/weights.h5: w"] and diff["missing"] == ["runs/r/trajectory.h5"]
    cli = subprocess.run([sys.executable, "-m", "pipeline_lib", "same", str(tmp_path / "a"), str(tmp_path / "c")],
                         capture_output=True, text=True)
    assert cli.returncode == 1 and "differ: runs/r/weights.h5: w" in cli.stdout


def test_provenance_names_the_version_of_every_library_that_computes_a_number():
    import importlib.metadata
    import json

    from pipeline_lib.plumbing.store import COMPUTING_LIBRARIES, provenance

    versions = json.loads(provenance({"a": 1})["library_versions"])
    assert set(versions) == {"python", *COMPUTING_LIBRARIES}
    for name in ("numpy", "scipy", "scikit-learn", "xarray"):
        assert versions[name] == importlib.metadata.version(name)
