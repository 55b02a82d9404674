"""The code hash follows what the code computes: every job of the test config, hashed by a copy of the
package with one kind of edit, against the checkout's hashes (a fresh interpreter per copy)."""
import json
import re
import shutil

import pytest

from conftest import REPO
from pipeline_lib.plumbing import codehash, equivalence, jobs
from pipeline_lib.plumbing.config import load_config_file
from pipeline_lib.plumbing.equivalence import canonical, job_hashes, read_record

CONFIGS = (".test/config/config.yaml",)


@pytest.fixture(scope="module")
def baseline():
    return job_hashes(REPO, REPO, CONFIGS)


def _copy(tmp_path):
    shutil.copytree(REPO / "pipeline_lib", tmp_path / "pipeline_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for sub in ("schemas", "scripts"):
        shutil.copytree(REPO / "workflow" / sub, tmp_path / "workflow" / sub)
    return tmp_path / "pipeline_lib"


def _edit(path, old, new, count=1):
    text = path.read_text()
    assert text.count(old) >= count, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def _changed(tmp_path, baseline):
    after = job_hashes(tmp_path, REPO, CONFIGS)
    assert set(after) == set(baseline)
    return {job.split(" ", 1)[1] for job in after if after[job] != baseline[job]}


def test_docstrings_comments_and_formatting_rerun_nothing(tmp_path, baseline):
    pkg = _copy(tmp_path)
    for rel in ("engine.py", "models/transformer.py", "tasks/sma.py", "analysis/probes.py",
                "figures/fig5_accuracy.py"):
        path = pkg / rel
        text = path.read_text()
        # a new module docstring line, a comment on every def, blank lines, a reworded function docstring
        text = text.replace('"""', '"""Edited. ', 1)
        text = re.sub(r"^(def \w+\(.*)$", r"# a comment\n\1", text, flags=re.M)
        text = re.sub(r'^(def \w+.*:\n    """)', r"\n\n\1Reworded: ", text, count=1, flags=re.M)
        path.write_text(text)
        assert path.read_text() != (REPO / "pipeline_lib" / rel).read_text()
    assert _changed(tmp_path, baseline) == set()


def test_a_function_moved_to_another_module_reruns_nothing(tmp_path, baseline):
    pkg = _copy(tmp_path)
    losses = (pkg / "losses.py").read_text()
    start = losses.index("def per_seed_loss_acc(")
    end = losses.index("\n\n\n", start)
    func = losses[start:end]
    (pkg / "cross_entropy.py").write_text('"""Cross-entropy."""\nfrom __future__ import annotations\n\nimport torch\n'
                                          "import torch.nn.functional as F\n\nfrom .attention import small_last\n\n\n"
                                          f"{func}\n")
    (pkg / "losses.py").write_text(losses[:start].replace("from .attention import small_last\n",
                                                          "from .attention import small_last\n"
                                                          "from .cross_entropy import per_seed_loss_acc\n", 1)
                                   + losses[end:])
    assert _changed(tmp_path, baseline) == set()


def test_a_one_character_numeric_change_in_the_engine_reruns_exactly_the_jobs_that_import_it(tmp_path, baseline):
    pkg = _copy(tmp_path)
    _edit(pkg / "engine.py", "e % checkpoint.every == 0", "e % checkpoint.every == 1")  # one character
    cfg = load_config_file(REPO / CONFIGS[0])
    uses_engine = {job for job, modules in jobs.job_modules(cfg).items()
                   if any("pipeline_lib.engine" in codehash.closure_modules(m) for m in modules)}
    assert any(j.startswith("train ") for j in uses_engine)
    assert _changed(tmp_path, baseline) == uses_engine


def test_switching_an_import_between_two_functions_of_one_name_is_seen(tmp_path, baseline):
    # two `per_seed_loss_acc` in one closure: which one a module imports is part of the hash
    pkg = _copy(tmp_path)
    _edit(pkg / "attention.py", "import torch\n", "import torch\n\n\ndef per_seed_loss_acc(logits, y):\n"
                                                  "    return logits, y\n")
    changed_by_new_function = _changed(tmp_path, baseline)
    assert changed_by_new_function  # attention.py computes more: its jobs rerun
    interp = pkg / "analysis" / "interpolation.py"
    _edit(interp, "from ..losses import per_seed_loss_acc", "from ..attention import per_seed_loss_acc")
    after_switch = job_hashes(tmp_path, REPO, CONFIGS)
    _edit(interp, "from ..attention import per_seed_loss_acc", "from ..losses import per_seed_loss_acc")
    before_switch = job_hashes(tmp_path, REPO, CONFIGS)
    interpolation = [k for k in after_switch if k.split(" ")[1] == "interpolation"]
    assert interpolation and all(after_switch[k] != before_switch[k] for k in interpolation)


def test_the_equivalence_record_is_well_formed_and_bounded():
    """One entry per module (a dict keyed by module), each naming a refactor the record keeps and standing for
    parts of the module's own shape; no refactor kept that no entry names; the legacy map frozen as a flat map."""
    equivalence.check_record(read_record())
    good = {"groups": {"g": {"why": "w", "verified": "v", "since": "a" * 40}},
            "modules": {"m": {"digest": "1" * 32, "was": None, "group": "g",
                              "stands_for": {"statements": ["s"], "bindings": [["n", "code x"]]}}}}
    equivalence.check_record(good)
    for bad in ({**good, "groups": {**good["groups"], "h": good["groups"]["g"]}},  # a refactor no entry names
                {**good, "modules": {"m": {**good["modules"]["m"], "group": "h"}}},  # an entry naming none kept
                {**good, "groups": {"g": {**good["groups"]["g"], "since": "HEAD"}}}):
        with pytest.raises(ValueError, match="malformed"):
            equivalence.check_record(bad)
    legacy = json.loads(equivalence.LEGACY.read_text())["hashes"]
    assert legacy and not set(legacy) & set(legacy.values())  # no chains: one lookup
    assert all(re.fullmatch(r"[0-9a-f]{16}", h) for pair in legacy.items() for h in pair)
    assert canonical(next(iter(legacy))) == next(iter(legacy.values())) and canonical("0" * 16) == "0" * 16


def _user_config(tmp_path):
    """A user's own config: the test config's plug-ins with other seeds and data, so no record names its jobs."""
    text = (REPO / CONFIGS[0]).read_text()
    text, n = re.subn(r"\bseed: 0\b", "seed: 7", text)
    assert n
    user = tmp_path / "user"
    user.mkdir()
    (user / "config.yaml").write_text(text)
    shutil.copytree(REPO / "examples" / "own_models", user / "examples" / "own_models",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return user


def _refactor_losses_and_sma(pkg):
    """A refactor of three modules; the transformer model does not import the losses (the registry finds it)."""
    _edit(pkg / "losses.py", "    acc = (logits.argmax(-1) == y).float().mean(1)\n    return loss, acc",
          "    accuracy = (logits.argmax(-1) == y).float().mean(1)\n    return loss, accuracy")
    _edit(pkg / "tasks" / "sma.py", '    targets = {"label": first.sum(1) % p, "sum_k": first.sum(1), "zeros_k": (first == 0).sum(1)}\n'
          '    targets.update({f"token_{t}": first[:, t] for t in range(k)})\n    return targets\n',
          '    out = {"label": first.sum(1) % p, "sum_k": first.sum(1), "zeros_k": (first == 0).sum(1)}\n'
          '    out.update({f"token_{t}": first[:, t] for t in range(k)})\n    return out\n')
    _edit(pkg / "models" / "transformer.py", "        hidden = F.gelu(torch.bmm(zn, self.W_1[:, 0]) + self.b_1[:, 0, None])\n"
          "        z = z + torch.bmm(hidden, self.W_2[:, 0])", "        h = F.gelu(torch.bmm(zn, self.W_1[:, 0]) + "
          "self.b_1[:, 0, None])\n        z = z + torch.bmm(h, self.W_2[:, 0])")


def _holding(*modules):
    cfg = load_config_file(REPO / CONFIGS[0])
    return {job for job, mods in jobs.job_modules(cfg).items()
            if set(modules) <= {m for mod in mods for m in codehash.closure_modules(mod)}}


def test_a_recorded_refactor_reruns_nothing_for_any_config_a_users_included(tmp_path, baseline):
    """Recording is per module: the refactor's modules hash as their code before it, in every closure, so the jobs
    of a config that no record names (a user's) keep their hashes too; a partial revert of the refactor (one
    module back, the other still new) reruns exactly the jobs that hold both."""
    user = _user_config(tmp_path)
    user_before = job_hashes(REPO, user, ("config.yaml",))
    tree = tmp_path / "tree"
    pkg = _copy(tree)
    _refactor_losses_and_sma(pkg)
    changed = _changed(tree, baseline)
    assert changed == (_holding("pipeline_lib.losses") | _holding("pipeline_lib.tasks.sma")
                       | _holding("pipeline_lib.models.transformer"))
    assert job_hashes(tree, user, ("config.yaml",)) != user_before
    entries, removed = equivalence.changes(equivalence.module_table(REPO), equivalence.module_table(tree))
    # interpolation imports the refactored function, vit the refactored class: what their names bind changed too
    assert set(entries) == {"pipeline_lib.losses", "pipeline_lib.tasks.sma", "pipeline_lib.analysis.interpolation",
                            "pipeline_lib.models.transformer", "pipeline_lib.models.vit"}
    assert removed == []
    equivalence.record(entries, "0" * 40, "test", "test", path=pkg / "plumbing" / "equivalent_modules.json")
    assert _changed(tree, baseline) == set()
    assert job_hashes(tree, user, ("config.yaml",)) == user_before
    # a partial revert: losses back to its code before the refactor, the model still refactored: the jobs that hold
    # losses rerun (its equivalence was verified beside the new model; back at its old code it is marked, not
    # taken for the recorded code); sma's jobs hold no losses and keep their hashes
    shutil.copy2(REPO / "pipeline_lib" / "losses.py", pkg / "losses.py")
    assert any(j.startswith("train ") for j in _holding("pipeline_lib.losses", "pipeline_lib.models.transformer"))
    assert _changed(tree, baseline) == _holding("pipeline_lib.losses") | _holding("pipeline_lib.analysis.interpolation")


def test_a_module_edited_after_its_refactor_was_recorded_reruns_its_jobs(tmp_path, baseline):
    pkg = _copy(tmp_path)
    _refactor_losses_and_sma(pkg)
    entries, _ = equivalence.changes(equivalence.module_table(REPO), equivalence.module_table(tmp_path))
    equivalence.record(entries, "0" * 40, "test", "test", path=pkg / "plumbing" / "equivalent_modules.json")
    _edit(pkg / "tasks" / "sma.py", '"zeros_k": (first == 0).sum(1)}', '"zeros_k": (first == 1).sum(1)}')
    assert _changed(tmp_path, baseline) == _holding("pipeline_lib.tasks.sma")


def test_code_hashes_are_remembered_per_source_tree(tmp_path, monkeypatch):
    """The disk layer of code_hash: a file per source tree under $PIPELINE_LIB_CACHE, read back by the next
    process; a tree that changes while a process runs writes nothing; the oldest trees' files go."""
    import json
    import os

    from pipeline_lib.plumbing import codehash

    monkeypatch.setenv("PIPELINE_LIB_CACHE", str(tmp_path))
    train = codehash.compute_code_hash("pipeline_lib.stages.train")
    cache = codehash._DiskCache()
    assert cache.get("pipeline_lib.stages.train") is None
    cache.put("pipeline_lib.stages.train", train)
    cache.save()
    (saved,) = (tmp_path / "code_hashes").glob("*.json")
    assert json.loads(saved.read_text()) == {"pipeline_lib.stages.train": train}
    assert codehash._DiskCache().get("pipeline_lib.stages.train") == train
    for i in range(codehash._DiskCache.KEEP + 3):  # other source trees, all older than this one's file
        other = saved.parent / f"{i:032d}.json"
        other.write_text("{}")
        os.utime(other, (i, i))
    cache.put("x", "y")
    cache.save()
    assert len(list(saved.parent.glob("*.json"))) == codehash._DiskCache.KEEP and saved.exists()
    assert not (saved.parent / f"{0:032d}.json").exists()
    monkeypatch.setattr(codehash, "_tree_digest", lambda: "another tree")  # the sources changed meanwhile
    cache.put("z", "w")
    cache.save()
    assert "z" not in json.loads(saved.read_text())
    monkeypatch.setenv("PIPELINE_LIB_NO_CODE_CACHE", "1")
    off = codehash._DiskCache()
    assert off.get("pipeline_lib.stages.train") is None and off.path is None


# -- the same hash on every Python version -------------------------------------------------------------------

SNIPPET = '''@dataclass(frozen=True)
class Params(Base):
    """doc"""
    n: int = 3
    name: str | None = None

def f(x, /, y=None, *args, z: float = 1e-3, **kw) -> dict:
    global G
    out = {k: v for k, v in kw.items() if v is not None}
    match x:
        case None: pass
        case [a, *rest]: out["a"] = a
    with open(y) as fh, lock:
        out["s"] = f"{x!r:>{z}} and {y=} " "tail"
    return lambda q=None: out
'''
# Python 3.11's ast.dump of SNIPPET: the text every version must hash (3.12 adds `type_params=[]` to each def and
# class, 3.13 prints no empty list, and their f-string parsers split literal text differently)
SNIPPET_DUMP = (
    "Module(body=[ClassDef(name='Params', bases=[Name(id='Base', ctx=Load())], keywords=[], body=[Expr(value=Constant("
    "value='doc')), AnnAssign(target=Name(id='n', ctx=Store()), annotation=Name(id='int', ctx=Load()), value=Constant("
    "value=3), simple=1), AnnAssign(target=Name(id='name', ctx=Store()), annotation=BinOp(left=Name(id='str', ctx=Load()"
    "), op=BitOr(), right=Constant(value=None)), value=Constant(value=None), simple=1)], decorator_list=[Call(func=Name("
    "id='dataclass', ctx=Load()), args=[], keywords=[keyword(arg='frozen', value=Constant(value=True))])]), FunctionDef("
    "name='f', args=arguments(posonlyargs=[arg(arg='x')], args=[arg(arg='y')], vararg=arg(arg='args'), kwonlyargs=[arg("
    "arg='z', annotation=Name(id='float', ctx=Load()))], kw_defaults=[Constant(value=0.001)], kwarg=arg(arg='kw'), "
    "defaults=[Constant(value=None)]), body=[Global(names=['G']), Assign(targets=[Name(id='out', ctx=Store())], value="
    "DictComp(key=Name(id='k', ctx=Load()), value=Name(id='v', ctx=Load()), generators=[comprehension(target=Tuple(elts"
    "=[Name(id='k', ctx=Store()), Name(id='v', ctx=Store())], ctx=Store()), iter=Call(func=Attribute(value=Name(id='kw',"
    " ctx=Load()), attr='items', ctx=Load()), args=[], keywords=[]), ifs=[Compare(left=Name(id='v', ctx=Load()), ops=["
    "IsNot()], comparators=[Constant(value=None)])], is_async=0)])), Match(subject=Name(id='x', ctx=Load()), cases=["
    "match_case(pattern=MatchSingleton(value=None), body=[Pass()]), match_case(pattern=MatchSequence(patterns=[MatchAs("
    "name='a'), MatchStar(name='rest')]), body=[Assign(targets=[Subscript(value=Name(id='out', ctx=Load()), slice="
    "Constant(value='a'), ctx=Store())], value=Name(id='a', ctx=Load()))])]), With(items=[withitem(context_expr=Call("
    "func=Name(id='open', ctx=Load()), args=[Name(id='y', ctx=Load())], keywords=[]), optional_vars=Name(id='fh', ctx="
    "Store())), withitem(context_expr=Name(id='lock', ctx=Load()))], body=[Assign(targets=[Subscript(value=Name(id="
    "'out', ctx=Load()), slice=Constant(value='s'), ctx=Store())], value=JoinedStr(values=[FormattedValue(value=Name("
    "id='x', ctx=Load()), conversion=114, format_spec=JoinedStr(values=[Constant(value='>'), FormattedValue(value=Name("
    "id='z', ctx=Load()), conversion=-1)])), Constant(value=' and y='), FormattedValue(value=Name(id='y', ctx=Load()), "
    "conversion=114), Constant(value=' tail')]))]), Return(value=Lambda(args=arguments(posonlyargs=[], args=[arg(arg="
    "'q')], kwonlyargs=[], kw_defaults=[], defaults=[Constant(value=None)]), body=Name(id='out', ctx=Load())))], "
    "decorator_list=[], returns=Name(id='dict', ctx=Load()))], type_ignores=[])")


def test_the_hashed_text_of_a_tree_is_python_3_11s_on_every_version():
    import ast

    assert codehash.canonical_dump(ast.parse(SNIPPET)) == SNIPPET_DUMP


def test_what_later_pythons_print_differently_does_not_reach_the_hash(monkeypatch):
    import ast

    tree = ast.parse(SNIPPET)
    func = tree.body[1]
    # 3.12: every def and class has type parameters (an empty list when none is declared)
    for cls in (ast.FunctionDef, ast.ClassDef):
        monkeypatch.setattr(cls, "_fields", (*cls._fields, "type_params"))
    func.type_params, tree.body[0].type_params = [], []
    # 3.13 may leave an optional field unset instead of None
    del func.body[-1].value.args.vararg
    # another parser's split of an f-string's literal text: ' and ', 'y=' and '' for ' and y='
    joined = func.body[3].body[0].value
    i = next(k for k, v in enumerate(joined.values) if getattr(v, "value", None) == " and y=")
    joined.values[i:i + 1] = [ast.Constant(" and "), ast.Constant("y="), ast.Constant("")]
    assert codehash.canonical_dump(tree) == SNIPPET_DUMP
    # a declared type parameter is code, and is seen
    func.type_params = [ast.Name(id="T", ctx=ast.Load())]
    assert codehash.canonical_dump(tree) != SNIPPET_DUMP


def test_statement_order_counts_only_where_it_changes_what_a_module_computes(tmp_path):
    def parts(name, source):
        path = tmp_path / f"{name}.py"
        path.write_text(source)
        return codehash.module_parts(f"pipeline_lib.{name}", path)[0]

    defs = "def f():\n    return g() + 1\n\n\ndef g():\n    return 2\n\n\nK = 3\n"
    swapped = "K = 3\n\n\ndef g():\n    return 2\n\n\ndef f():\n    return g() + 1\n"
    assert parts("defs", defs) == parts("defs_swapped", swapped)  # definitions: a set
    # a name bound twice: the later binding wins, so the order is the result
    assert parts("twice", "X = 1\nX = 2\n") != parts("twice_swapped", "X = 2\nX = 1\n")
    # a statement that acts: where it stands decides what later statements read
    acts = "L = []\nL.append(1)\nN = len(L)\n"
    assert parts("acts", acts) != parts("acts_swapped", "L = []\nN = len(L)\nL.append(1)\n")
    assert parts("acts_again", acts) == parts("acts", acts)
    # an assignment that calls acts (two draws of one generator); an import rebound by a definition
    draws = "A = rng.normal()\nB = rng.normal()\n"
    assert parts("draws", draws) != parts("draws_swapped", "B = rng.normal()\nA = rng.normal()\n")
    shadow = "from .attention import small_last\n\n\ndef small_last(x):\n    return x\n"
    assert parts("shadow", shadow) != parts(
        "shadow_swapped", "def small_last(x):\n    return x\n\n\nfrom .attention import small_last\n")


# -- the plumbing that computes is hashed where it computes ------------------------------------------------------

def _jobs_with(*modules):
    """Jobs of the test config whose closure holds one of ``modules``."""
    cfg = load_config_file(REPO / CONFIGS[0])
    return {job for job, mods in jobs.job_modules(cfg).items()
            if any(set(modules) & set(codehash.closure_modules(m)) for m in mods)}


def _importers(plumbing_module, name):
    """Jobs whose closure holds a module that imports ``name`` from ``plumbing_module`` (found by parsing)."""
    import ast

    found = set()
    for path in (REPO / "pipeline_lib").rglob("*.py"):
        module = ".".join(("pipeline_lib", *path.relative_to(REPO / "pipeline_lib").with_suffix("").parts))
        module = module.removesuffix(".__init__")
        if codehash.is_plumbing(module):
            continue
        for node in ast.walk(codehash.parse(path)):
            if isinstance(node, ast.ImportFrom) and codehash._import_target(module, node) == plumbing_module \
                    and name in {a.name for a in node.names}:
                found.add(module)
    assert found, (plumbing_module, name)
    return _jobs_with(*found)


def _training_jobs(which=lambda raw_run: True):
    """Training jobs of the test config whose raw run entry ``which`` selects."""
    cfg = load_config_file(REPO / CONFIGS[0])
    return {f"train {r}" for r, raw in cfg.raw["runs"].items() if which(raw)}


# (plumbing file, the text edited, a numeric edit, the jobs it shapes). The config's resolution (seeds, slots,
# shapes) is hashed as what it resolves: an edit that changes the values reruns the runs whose values change.
PLUMBING_EDITS = [
    ("values.py", "tuple(range(seeds))", "tuple(range(seeds))[::-1]",  # seed_list: `seeds: 3` -> (2, 1, 0)
     lambda: _training_jobs(lambda r: isinstance(r["seeds"], int) and r["seeds"] > 1)),
    ("config.py", '"lr_ratio": ratio} for s in self.seeds]', '"lr_ratio": ratio} for s in self.seeds[::-1]]',
     lambda: _training_jobs(lambda r: not isinstance(r["seeds"], int) and len(r["seeds"]) > 1
                            or isinstance(r["seeds"], int) and r["seeds"] > 1)),  # RunConfig.slots: slot order
    ("config.py", "for k in SCALAR_SWEEPS[1:] if k in sweep]", "for k in SCALAR_SWEEPS[1:][::-1] if k in sweep]",
     lambda: _training_jobs(lambda r: sum(k in r.get("sweep", {}) for k in ("weight_decay", "momentum")) > 1)),
    ("values.py", "for k, e in plug.get(\"SHAPE\", {}).items()}", "for k, e in plug.get(\"SHAPE\", {}).items()} | {\"edited\": 1}",
     _training_jobs),  # task_shape: every run's model is built from its shape
    ("store.py", "return ds.x.values[sel], ds.y.values[sel]", "return ds.x.values[sel][0:], ds.y.values[sel]",
     lambda: _importers("pipeline_lib.plumbing.store", "dataset_split")),
    ("store.py", "isel(snapshot=index)", "isel(snapshot=index - 0)",
     lambda: _importers("pipeline_lib.plumbing.store", "snapshot_arrays")),
    ("registry.py", "sys.path.insert(0, os.getcwd())", "sys.path.insert(1, os.getcwd())",
     lambda: _importers("pipeline_lib.plumbing.registry", "user_import_path")),
]


@pytest.mark.parametrize("file, old, new, expected", PLUMBING_EDITS, ids=[e[1][:30] for e in PLUMBING_EDITS])
def test_a_numeric_edit_in_computing_plumbing_reruns_exactly_the_jobs_it_shapes(tmp_path, baseline, file, old, new,
                                                                                 expected):
    pkg = _copy(tmp_path)
    _edit(pkg / "plumbing" / file, old, new)
    want = expected()
    if "SCALAR_SWEEPS" not in old:  # no test-config run sweeps two scalars: that edit must plan nothing
        assert want
    assert _changed(tmp_path, baseline) == {j for j in want if f"{CONFIGS[0]} {j}" in baseline}


def test_an_edit_of_the_resolution_that_resolves_the_same_values_reruns_nothing(tmp_path, baseline):
    pkg = _copy(tmp_path)
    _edit(pkg / "plumbing" / "values.py", "tuple(range(seeds))", "tuple(range(0, seeds, 1))")
    _edit(pkg / "plumbing" / "values.py", "**_SAFE, **names}", "**_SAFE, **names, '_': 1}")
    assert _changed(tmp_path, baseline) == set()


def test_a_docstring_or_comment_in_computing_plumbing_reruns_nothing(tmp_path, baseline):
    pkg = _copy(tmp_path)
    for file, name in (("values.py", "seed_list"), ("values.py", "evaluate"), ("store.py", "dataset_split"),
                       ("store.py", "snapshot_arrays"), ("registry.py", "user_import_path"), ("config.py", "slots")):
        path = pkg / "plumbing" / file
        text = path.read_text()
        start = text.index(f"def {name}(")
        body = text.index(":\n", start) + 2
        indent = " " * (len(text[body:]) - len(text[body:].lstrip(" ")))
        path.write_text(text[:body] + f'{indent}"""Reworded."""  # a comment\n' + text[body:])
    assert _changed(tmp_path, baseline) == set()


def test_every_declared_plumbing_definition_exists_and_is_imported_by_name():
    """A computing plumbing name is hashed where it is imported by name; reached as an attribute of its module
    (``from ..plumbing import store`` then ``store.dataset_split``) it would hash nothing, so no hashed module
    does that."""
    import ast

    computes = {}
    for path in sorted((REPO / "pipeline_lib" / "plumbing").glob("*.py")):
        module = f"pipeline_lib.plumbing.{path.stem}"
        for name in codehash.plumbing_computes(module):
            assert codehash.definition_digest(module, name).startswith("code ")
            computes.setdefault(path.stem, set()).add(name)
    assert computes == {"store": {"dataset_split", "snapshot_arrays"}, "registry": {"user_import_path"}}
    with pytest.raises(LookupError, match="no 'nowhere'"):
        codehash.definition_digest("pipeline_lib.plumbing.values", "nowhere")
    for path in (REPO / "pipeline_lib").rglob("*.py"):
        module = ".".join(("pipeline_lib", *path.relative_to(REPO / "pipeline_lib").with_suffix("").parts))
        if codehash.is_plumbing(module.removesuffix(".__init__")):
            continue
        tree = codehash.parse(path)
        aliases = {a.asname or a.name: a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and (node.module or "").endswith("plumbing") for a in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                assert node.attr not in computes.get(aliases[node.value.id], ()), (path, node.attr)
