"""Golden runs: every artifact of the test config's smoke run against its stored digests
(``tests/golden/test_config.json``), and a finished run that moves folder plans nothing."""
import json

import pytest

from conftest import REPO, copy_run, snakemake
from pipeline_lib.plumbing import golden

pytestmark = pytest.mark.workflow

DIGESTS = REPO / "tests" / "golden" / "test_config.json"

HOW = {
    "moved": "numbers moved although the stage's code hash is the stored one (unchanged, or recorded as "
             "equivalent): the code computes differently on this machine, or an equivalence record is wrong",
    "changed": "the stage's code changed and its numbers moved: if intended, rewrite the digests with "
               "`python -m pipeline_lib golden --write <results>` after `snakemake --directory .test`",
    "unmoved": "the stage's code hash changed but no number moved: record the refactor with `python -m "
               "pipeline_lib equivalent --since <the last commit> --why ...` (it then reruns nothing), or "
               "rewrite the digests",
    "missing": "an artifact of the stored digests was not written: rewrite the digests if intended",
    "new": "an artifact without stored digests: rewrite the digests",
}


def test_every_artifact_of_the_test_config_matches_its_golden_digests(smoke_run):
    work, _ = smoke_run
    diff = golden.compare(json.loads(DIGESTS.read_text()), golden.digest(work / "results"))
    problems = [f"{kind} ({len(lines)}): {HOW[kind]}\n  " + "\n  ".join(lines) for kind, lines in diff.items() if lines]
    assert not problems, "\n".join(problems)


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


def test_a_finished_run_moved_to_another_folder_plans_nothing(smoke_run, tmp_path):
    work, _ = smoke_run
    moved = tmp_path / "elsewhere" / "run"
    copy_run(work, moved)  # modification times kept, as `cp -a` or `mv`
    plan = snakemake(moved, "-n")
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "Nothing to be done" in plan.stdout + plan.stderr, (plan.stdout + plan.stderr)[-3000:]
