"""A passed check of a module model is remembered (pipeline_lib/plumbing/remembered.py): the next read of the same
config imports no torch, and an edit of the user's module checks it again and reports what is now wrong; the
config's schema is assembled once per version of its sources."""
import json
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, SMOKE
from pipeline_lib.plumbing import remembered

MODULE = '''
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.out = nn.Linear(4, classes)

    def forward(self, x):
        return self.out(self.emb(x).mean(1))
'''

READ = """
import json, sys, yaml
from pipeline_lib.plumbing.config import load_config
from pipeline_lib.plumbing.errors import ConfigError
try:
    load_config(yaml.safe_load(open("c.yaml")))
    said = ""
except ConfigError as exc:
    said = str(exc)
print(json.dumps({"torch": "torch" in sys.modules, "said": said}))
"""


def _config(tmp_path) -> None:
    raw = yaml.safe_load(SMOKE.read_text())
    raw["models"] = {"mine": {"kind": "module", "module": "my_checked_net:Net"}}
    raw["runs"] = {"mine_run": {"dataset": "sma_p4_T12", "model": "mine", "epochs": 1, "seeds": 1}}
    raw["analyses"], raw["figures"] = {}, {}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))


def _read(tmp_path, cache) -> dict:
    res = subprocess.run([sys.executable, "-c", READ], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO),
                              remembered.ENV: str(cache)})
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_a_passed_module_check_is_not_repeated_until_the_module_changes(tmp_path):
    _config(tmp_path)
    (tmp_path / "my_checked_net.py").write_text(MODULE)
    cache = tmp_path / "cache"
    first, again = _read(tmp_path, cache), _read(tmp_path, cache)
    assert first == {"torch": True, "said": ""}  # checked: the class built and run on two examples
    assert again == {"torch": False, "said": ""}  # remembered
    (tmp_path / "helper_beside.py").write_text("SCALE = 2\n")  # a helper beside the module: what a run reruns for
    assert _read(tmp_path, cache) == {"torch": True, "said": ""}
    (tmp_path / "my_checked_net.py").write_text(MODULE.replace("classes=5", "classes=2"))
    edited = _read(tmp_path, cache)
    assert edited["torch"] and "config key 'models.mine.module'" in edited["said"] and "returns 2 logits" in edited["said"]
    assert _read(tmp_path, cache)["torch"]  # a failed check is never remembered


def test_off_or_an_unwritable_folder_checks_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv(remembered.ENV, "off")
    assert remembered.folder("passed-checks") is None and remembered.recall("passed-checks", "0" * 64) is None
    remembered.keep("passed-checks", "0" * 64)  # nothing to write to
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv(remembered.ENV, str(blocked))
    remembered.keep("passed-checks", "0" * 64)  # cannot be written: skipped, no error
    assert remembered.recall("passed-checks", "0" * 64) is None


def test_a_code_digest_is_remembered_by_its_text_and_read_back_unchanged(tmp_path, monkeypatch):
    from pipeline_lib.build import lock

    text = "import os\nfrom .x import y, z\n\n\ndef f():\n    return os.sep\n"
    monkeypatch.setenv(remembered.ENV, "off")
    lock.read_source.cache_clear()
    computed = lock.read_source(text)
    monkeypatch.setenv(remembered.ENV, str(tmp_path))
    lock.read_source.cache_clear()
    assert lock.read_source(text) == computed and len(list((tmp_path / "source-digests").iterdir())) == 1
    parsed = []
    monkeypatch.setattr(lock, "canonical_dump", lambda tree: parsed.append(tree) or "")
    lock.read_source.cache_clear()
    assert lock.read_source(text) == computed and not parsed  # read back: the same digest and imports, no parse
    lock.read_source(text.replace("os.sep", "os.linesep"))
    assert len(parsed) == 1  # another text: parsed anew
    lock.read_source.cache_clear()


def test_a_remembered_check_leaves_the_other_checks_of_its_run_naming_their_keys(tmp_path, monkeypatch):
    from pipeline_lib.plumbing.config import load_config
    from pipeline_lib.plumbing.errors import ConfigError

    _config(tmp_path)
    (tmp_path / "my_checked_net.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    raw = yaml.safe_load((tmp_path / "c.yaml").read_text())
    load_config(raw)  # passes, and is remembered
    raw["runs"]["mine_run"]["n_probe"] = 10**6
    for _ in range(2):  # checked, then remembered: the same sentence
        with pytest.raises(ConfigError, match=r"config key 'runs\.mine_run\.n_probe'"):
            load_config(raw)


def test_a_check_run_on_a_module_imported_before_an_edit_is_not_kept(tmp_path, monkeypatch):
    """In one long session (a notebook) Python keeps the module as first imported: after an edit the check runs
    on the old code, so its pass is not remembered under the edited files' key."""
    from pipeline_lib.plumbing.config import load_config

    _config(tmp_path)
    (tmp_path / "my_session_net.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    raw = yaml.safe_load((tmp_path / "c.yaml").read_text())
    raw["models"]["mine"]["module"] = "my_session_net:Net"
    load_config(raw)
    kept = lambda: len(list((tmp_path / "cache" / "passed-checks").iterdir()))  # noqa: E731
    assert kept() == 1
    (tmp_path / "my_session_net.py").write_text(MODULE.replace("classes=5", "classes=2"))
    load_config(raw)  # the old module answers in this process: passes, and must not be kept
    assert kept() == 1
    monkeypatch.delitem(sys.modules, "my_session_net")


def test_two_models_of_one_module_are_each_remembered(tmp_path, monkeypatch):
    """The second model's check finds the module imported by the first check of this process, from the same files:
    its pass is kept too."""
    from pipeline_lib.plumbing.config import load_config

    _config(tmp_path)
    (tmp_path / "my_pair_net.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(remembered.ENV, str(tmp_path / "cache"))
    raw = yaml.safe_load((tmp_path / "c.yaml").read_text())
    raw["models"] = {m: {"kind": "module", "module": "my_pair_net:Net", "args": {"classes": c}}
                     for m, c in (("five", 5), ("six", 6))}
    raw["runs"] = {f"{m}_run": {"dataset": "sma_p4_T12", "model": m, "epochs": 1, "seeds": 1} for m in raw["models"]}
    load_config(raw)
    assert len(list((tmp_path / "cache" / "passed-checks").iterdir())) == 2
    monkeypatch.delitem(sys.modules, "my_pair_net")


def test_the_config_schema_is_assembled_once_and_read_back_until_its_sources_change(tmp_path, monkeypatch):
    from pipeline_lib.plumbing import config_schema

    monkeypatch.setenv(remembered.ENV, str(tmp_path))
    assemble, assembled = config_schema._assembled, []
    monkeypatch.setattr(config_schema, "_assembled", lambda: assembled.append(1) or assemble())
    config_schema.schema.cache_clear()
    try:
        first = config_schema.schema()
        config_schema.schema.cache_clear()
        assert config_schema.schema() == first and len(assembled) == 1  # read back, as a new process would
        (kept,) = (tmp_path / "config-schema").iterdir()
        kept.write_text(kept.read_text()[:100])  # damaged: assembled anew, not a failed config read
        config_schema.schema.cache_clear()
        assert config_schema.schema() == first and len(assembled) == 2
        for change in ("source", "base"):  # the package's source, or the base schema file, edited
            if change == "source":
                monkeypatch.setattr(remembered, "_source_digest", lambda: "0" * 64)
            else:
                edited = tmp_path / "config.schema.yaml"
                edited.write_text(config_schema.SCHEMA_PATH.read_text() + "\n# edited\n")
                monkeypatch.setattr(config_schema, "SCHEMA_PATH", edited)
            config_schema.schema.cache_clear()
            assert config_schema.schema() == first and len(assembled) == 3 + (change == "base"), change
    finally:
        config_schema.schema.cache_clear()
