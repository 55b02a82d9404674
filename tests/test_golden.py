"""Golden runs: every artifact of the test config's smoke run against its stored digests
(``tests/golden/test_config.json``): exactly on the machine that wrote them, within each variable's measured
cross-machine spread everywhere; and a finished run that moves folder plans nothing."""
import json
import warnings

import pytest
from test_robustness import _copy_repo_and_run

from conftest import REPO, copy_run, snakemake
from pipeline_lib.plumbing import equivalence, golden

RECORD_NAME = equivalence.RECORD.name

pytestmark = pytest.mark.workflow

DIGESTS = REPO / "tests" / "golden" / "test_config.json"
REWRITE = ("`python -m pipeline_lib golden --write --measure` (reruns the test config, then once per kernel "
           "perturbation: about 25 minutes on 2 cores)")

HOW = {
    "moved": "numbers moved although the stage's code hash is the stored one (unchanged, or recorded as "
             "equivalent): the code computes differently on this machine, or an equivalence record is wrong",
    "changed": f"the stage's code changed and its numbers moved: if intended, rewrite the digests with {REWRITE}",
    "unmoved": "the stage's code hash changed but no number moved: record the refactor with `python -m "
               "pipeline_lib equivalent --since <the last commit> --why ...` (it then reruns nothing), or "
               "rewrite the digests",
    "missing": "an artifact of the stored digests was not written: rewrite the digests if intended",
    "new": "an artifact without stored digests: rewrite the digests",
}


class OtherMachine(UserWarning):
    """The digests were written on another machine: what the cross-machine comparison could not check."""


def _doc():
    return golden.load(DIGESTS)


def _problems(diff, kinds=tuple(HOW)):
    return [f"{kind} ({len(diff[kind])}): {HOW[kind]}\n  " + "\n  ".join(diff[kind]) for kind in kinds if diff[kind]]


def test_every_artifact_of_the_test_config_matches_its_golden_digests(smoke_run):
    doc = _doc()
    differs = golden.fingerprint_diff(doc["fingerprint"], golden.fingerprint())
    if differs:
        pytest.skip("the golden digests were written on another machine, so their exact comparison holds there "
                    "only (the cross-machine test checks this one within each variable's measured spread); "
                    "fingerprint differences: " + "; ".join(differs))
    work, _ = smoke_run
    problems = _problems(golden.compare(doc["artifacts"], golden.digest(work / "results")))
    assert not problems, "\n".join(problems)


def test_what_holds_across_machines_holds_here(smoke_run):
    """On every machine: each variable within the tolerance its measured spread allows (exactly where no
    kernel perturbation moved it); where the digests come from another machine, a warning names the
    differences and every variable that only its size could check."""
    doc = _doc()
    work, _ = smoke_run
    diff = golden.compare_across(doc["artifacts"], golden.digest(work / "results"), measured=bool(doc["perturbations"]))
    problems = _problems(diff, ("moved", "changed", "missing", "new"))
    assert not problems, "\n".join(problems)
    differs = golden.fingerprint_diff(doc["fingerprint"], golden.fingerprint())
    if differs:
        warnings.warn(OtherMachine(
            "golden digests from another machine (" + "; ".join(differs) + "): " + "; ".join(
                diff["exact"] + diff["within"]) + f"; by size only ({len(diff['size_only'])} artifacts, chaotic "
            "under the kernel perturbations): " + " | ".join(diff["size_only"])))


def test_the_digests_record_their_machine_and_spread():
    doc = _doc()
    here = golden.fingerprint()
    assert set(doc["fingerprint"]) == set(here) and doc["fingerprint"]["cpu"] and doc["fingerprint"]["versions"]["torch"]
    assert {name for name, _, _ in golden.PERTURBATIONS} == set(doc["perturbations"])
    spreads = [s for art in doc["artifacts"].values() for s in art["spread"].values()]
    assert spreads and all(s > 0 for s in spreads)
    # datasets are drawn by seeded generators in integer or exact arithmetic: no perturbation moves them
    assert not [rel for rel, art in doc["artifacts"].items() if rel.startswith("datasets/") and art["spread"]]


def test_the_comparison_names_the_stage_that_moved(smoke_run):
    work, _ = smoke_run
    ref = golden.digest(work / "results")
    rel = next(r for r in ref if r.startswith("runs/"))
    moved = json.loads(json.dumps(ref))
    var = next(iter(moved[rel]["vars"]))
    moved[rel]["vars"][var][1] += 1e-3 * (abs(moved[rel]["vars"][var][2]) + 1)
    diff = golden.compare(moved, ref)
    assert diff["moved"] == [f"{rel} (stage {ref[rel]['stage']}): {var}"] and ref[rel]["stage"].startswith("train ")
    moved[rel]["code"] = "0" * 16
    assert golden.compare(moved, ref)["changed"] and not golden.compare(moved, ref)["moved"]
    ref_same = json.loads(json.dumps(ref))
    ref_same[rel]["code"] = "0" * 16
    assert golden.compare(ref_same, ref)["unmoved"]


def test_the_cross_machine_comparison_holds_each_variable_to_its_spread():
    stats = [10, 0.5, 1.0, 2.0]  # size, mean, mean |x|, rms
    art = lambda vals, spread=None: {"r": {"stage": "train r", "code": "c", "vars": {"w": vals}, "spread": spread or {}}}  # noqa: E731
    nudged = lambda d: [10, 0.5 + d, 1.0, 2.0]  # noqa: E731  (a deviation of d / 2 of the rms)
    # never moved by a perturbation: held to the digest's own arithmetic
    assert not golden.compare_across(art(stats), art(nudged(1e-12)))["moved"]
    assert golden.compare_across(art(stats), art(nudged(1e-6)))["moved"] == ["r (stage train r): w (5.0e-07 > 1e-09)"]
    # moved by a spread s: within CROSS_FACTOR * s, not beyond; never tighter than CROSS_FLOOR of the rms
    tiny = 1e-10
    assert not golden.compare_across(art(stats, {"w": tiny}), art(nudged(2 * 1.4e-8)))["moved"]
    assert golden.compare_across(art(stats, {"w": tiny}), art(nudged(2 * golden.CROSS_FLOOR * 1.1)))["moved"]
    s = 1e-6
    assert not golden.compare_across(art(stats, {"w": s}), art(nudged(2 * golden.CROSS_FACTOR * s * 0.9)))["moved"]
    assert golden.compare_across(art(stats, {"w": s}), art(nudged(2 * golden.CROSS_FACTOR * s * 1.1)))["moved"]
    # a variable no perturbation moved, beside one that moved: the artifact's spread
    two = lambda w, b, spread: {"r": {"stage": "train r", "code": "c", "vars": {"w": w, "b": b}, "spread": spread}}  # noqa: E731
    assert not golden.compare_across(two(stats, stats, {"w": s}), two(stats, nudged(1e-5), {}))["moved"]
    assert golden.compare_across(two(stats, stats, {}), two(stats, nudged(1e-5), {}))["moved"]
    # chaotic: its size alone, and named as such; a code change beyond tolerance is 'changed'
    far = golden.compare_across(art(stats, {"w": 0.5}), art(nudged(1.0)))
    assert not far["moved"] and far["size_only"] == ["r (stage train r): w"]
    assert golden.compare_across(art(stats, {"w": 0.5}), art([11, 0.5, 1.0, 2.0]))["moved"]
    other = art(nudged(1e-3))
    other["r"]["code"] = "d"
    assert golden.compare_across(art(stats), other)["changed"]
    # digests written without their spread: every variable by its size alone
    assert golden.compare_across(art(stats), art(nudged(1.0)), measured=False)["size_only"]


def test_the_fingerprint_names_what_differs():
    here = golden.fingerprint()
    other = json.loads(json.dumps(here))
    other["torch_cpu_capability"] = "AVX2" if here["torch_cpu_capability"] != "AVX2" else "AVX512"
    other["versions"]["numpy"] = "0.0"
    assert golden.fingerprint_diff(here, here) == []
    assert [d.split(":")[0] for d in golden.fingerprint_diff(here, other)] == ["torch_cpu_capability", "versions.numpy"]


@pytest.mark.long
def test_a_numeric_engine_edit_fails_and_a_recorded_refactor_passes(tmp_path, smoke_run):
    """A one-character change of a number in the training engine moves the retrained run past the golden
    digests (the exact comparison on the writing machine, the spread-bounded one everywhere); a refactor
    of the engine that computes the same, recorded as equivalent, retrains to digests that match."""
    repo, work = _copy_repo_and_run(tmp_path, smoke_run)
    doc, run = _doc(), "runs/r_ht/weights.h5"  # the Heat Treatment run: the engine sets its temperature
    target = "results/" + run
    engine = repo / "pipeline_lib" / "engine.py"
    text = engine.read_text()
    assert text.count("model.beta = 1.0 / float(") == 1
    engine.write_text(text.replace("model.beta = 1.0 / float(", "model.beta = 2.0 / float("))
    res = snakemake(work, target, "--forcerun", "train", repo=repo)
    assert res.returncode == 0, res.stderr[-3000:]
    now = {run: golden.digest(work / "results")[run]}
    gold = {run: doc["artifacts"][run]}
    same_machine = not golden.fingerprint_diff(doc["fingerprint"], golden.fingerprint())
    if same_machine:
        assert [line.split(" ")[0] for line in golden.compare(gold, now)["changed"]] == [run]
    assert [line.split(" ")[0] for line in golden.compare_across(gold, now)["changed"]] == [run]
    # the refactor: a name for a number that nothing reads; recorded as equivalent, then retrained
    engine.write_text(text + "\n_UNIT_TEMPERATURE = 1.0  # a refactor: nothing computes differently\n")
    new = equivalence.job_hashes(repo, REPO, configs=(".test/config/config.yaml",))[".test/config/config.yaml train r_ht"]
    old = doc["artifacts"][run]["code"]
    assert new != old
    entries, _ = equivalence.changes(equivalence.module_table(REPO), equivalence.module_table(repo))
    assert list(entries) == ["pipeline_lib.engine"]
    equivalence.record(entries, "0" * 40, "test", "test", path=repo / "pipeline_lib" / "plumbing" / RECORD_NAME)
    res = snakemake(work, target, "--forcerun", "train", repo=repo)
    assert res.returncode == 0, res.stderr[-3000:]
    now = {run: golden.digest(work / "results")[run]}
    assert now[run]["code"] == old
    if same_machine:
        assert not any(golden.compare(gold, now).values())
    assert not any(golden.compare_across(gold, now)[k] for k in ("moved", "changed", "missing", "new"))


def test_a_finished_run_moved_to_another_folder_plans_nothing(smoke_run, tmp_path):
    work, _ = smoke_run
    moved = tmp_path / "elsewhere" / "run"
    copy_run(work, moved)  # modification times kept, as `cp -a` or `mv`
    plan = snakemake(moved, "-n")
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "Nothing to be done" in plan.stdout + plan.stderr, (plan.stdout + plan.stderr)[-3000:]
