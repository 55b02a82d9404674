"""Golden digests: numbers cannot move under an unchanged code param. Every artifact of the test config's smoke run
against this machine's digests (``tests/golden/<fingerprint id>.json``); on a machine without its own, the portable
artifacts (the datasets) against every machine's. And the real ``lock`` on a
finished run: a refactor is verified and then reruns nothing."""
import itertools
import json
import warnings

import pytest
from test_robustness import _copy_repo_and_run

from conftest import REPO, copy_run, snakemake
from pipeline_lib.build import golden, verify

pytestmark = pytest.mark.workflow


class NotCompared(UserWarning):
    """Artifacts the golden comparison could not check here, and why."""


@pytest.fixture(scope="module")
def smoke_digest(smoke_run):
    """The smoke run's digests, read once (every HDF5 artifact: seconds)."""
    return golden.digest(smoke_run[0] / "results")


def test_numbers_cannot_move_under_an_unchanged_code_param(smoke_digest):
    now = smoke_digest
    mine = golden.golden_path()
    files = golden.goldens()
    if not files:
        pytest.skip(f"no golden digests in {golden.GOLDEN_DIR}: write them with `python -m pipeline_lib golden --write`")
    if mine in files:  # this machine's own digests: every artifact, exactly
        diff = golden.compare(files[mine]["artifacts"], now)
        assert not diff["moved"], "numbers moved under an unchanged code param:\n  " + "\n  ".join(diff["moved"])
        assert len(diff["same"]) > 100
        skipped = diff["stale"]
        why = "their code changed since the digests were written (refresh: `python -m pipeline_lib golden --write`)"
    else:  # another machine's: only what is the same bits everywhere
        ours = golden.portable(now)
        compared = 0
        for path, doc in files.items():
            diff = golden.compare(doc["artifacts"], now, only=ours)
            assert not diff["moved"], f"portable artifacts moved against {path.name}:\n  " + "\n  ".join(diff["moved"])
            compared = max(compared, len(diff["same"]))
        assert compared >= len(ours) > 5  # every portable artifact (the datasets) against some machine's
        skipped = sorted(set(now) - ours)
        why = (f"this machine ({golden.fingerprint_id()}) has no digests of its own, and these are computed in "
               "floating point, whose last bits differ between CPUs, BLAS builds and thread counts")
    if skipped:
        warnings.warn(NotCompared(f"{len(skipped)} artifacts not compared: {why}: " + ", ".join(skipped[:8])))


def test_the_comparison_tells_moved_numbers_from_changed_code(smoke_digest):
    ref = smoke_digest
    rel = next(r for r in ref if r.startswith("runs/"))
    moved = json.loads(json.dumps(ref))
    var = next(iter(moved[rel]["vars"]))
    moved[rel]["vars"][var] = "0" * 16
    diff = golden.compare(moved, ref)
    assert [line.split(" ")[0] for line in diff["moved"]] == [rel] and var in diff["moved"][0]
    assert ref[rel]["stage"].startswith("train ") and len(diff["same"]) == len(ref) - 1
    moved[rel]["code"] = "0" * 16  # the job's code changed: stale, not compared
    diff = golden.compare(moved, ref)
    assert not diff["moved"] and [line.split(" ")[0] for line in diff["stale"]] == [rel]
    # what is portable: the datasets alone, never a run's artifact, a reader of one or a job computed from no input
    port = golden.portable(ref)
    assert port == {r for r in ref if r.startswith("datasets/")} and len(port) > 5
    assert "analysis/sln/small.h5" not in port and "figures/cogo_algebra.json" not in port


def test_every_machines_digests_agree_on_the_portable_artifacts():
    """What is compared on a machine without digests of its own must hold on every machine that wrote some: the
    kept files of different CPUs agree on each dataset they hold at one code param."""
    files = [doc["artifacts"] for doc in golden.goldens().values()]
    if len(files) < 2:
        pytest.skip("fewer than two machines' golden digests kept")
    agreed = 0  # the most datasets two machines hold at one code param (what the check rests on)
    for mine, theirs in itertools.combinations(files, 2):
        diff = golden.compare(mine, theirs, only=golden.portable(mine) & golden.portable(theirs))
        assert not diff["moved"], "machines' digests differ at one code param:\n  " + "\n  ".join(diff["moved"])
        agreed = max(agreed, len(diff["same"]))
    assert agreed > 5


@pytest.mark.long
def test_lock_verifies_a_refactor_on_a_finished_run_then_it_reruns_nothing(tmp_path, smoke_run):
    """The real `lock`, with the smoke run as HEAD's run (the checkout's code is locked): a figure module's refactor
    reruns that figure, compares identical, is recorded, and then reruns nothing. (That a change of numbers is
    refused: tests/test_lock.py, on planted results.) Slow: two dry runs and a real rerun of the figure are what is
    tested."""
    repo, work = _copy_repo_and_run(tmp_path, smoke_run)
    copy_run(REPO / ".test" / "config", repo / ".test" / "config")
    module = repo / "pipeline_lib" / "figures" / "fig7_param_tsne.py"
    text = module.read_text()
    assert text.count("rows(") == 4
    module.write_text(text.replace("rows(", "norms(").replace("rows = lambda", "norms = lambda"))
    plan = lambda: snakemake(work, "-n", repo=repo)  # noqa: E731
    from test_workflow import planned_jobs

    assert planned_jobs(plan()) == {"fig7_param_tsne": 1, "claims": 1, "all": 1}
    said = verify.lock(repo, scratch=tmp_path / "lock", base=work, progress=lambda _: None)
    assert any(s.startswith("verified: ") for s in said) and any("fig7_param_tsne" in s for s in said), said
    assert planned_jobs(plan()) == {}  # (put back to its code before, it reruns: tests/test_lock.py)


def test_a_finished_run_moved_to_another_folder_plans_nothing(smoke_run, tmp_path):
    work, _ = smoke_run
    moved = tmp_path / "elsewhere" / "run"
    copy_run(work, moved)  # modification times kept, as `cp -a` or `mv`
    plan = snakemake(moved, "-n")
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "Nothing to be done" in plan.stdout + plan.stderr, (plan.stdout + plan.stderr)[-3000:]
