"""A passed check of a module model is remembered (pipeline_lib/plumbing/checked.py): the next read of the same
config imports no torch, and an edit of the user's module checks it again and reports what is now wrong."""
import json
import subprocess
import sys

import yaml

from conftest import REPO, SMOKE
from pipeline_lib.plumbing import checked

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
                              checked.ENV: str(cache)})
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
    monkeypatch.setenv(checked.ENV, "off")
    assert checked.folder() is None and not checked.passed("0" * 64)
    checked.remember("0" * 64)  # nothing to write to
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv(checked.ENV, str(blocked))
    checked.remember("0" * 64)  # cannot be written: skipped, no error
    assert not checked.passed("0" * 64)
