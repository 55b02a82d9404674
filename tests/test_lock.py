"""The rerun lock's guarantees, one test each, on every shipped config and a user's own: an edit that can change a
number reruns exactly the jobs whose code holds it; comments, docstrings and formatting rerun nothing; a verified
refactor reruns nothing, and a module put back to its code before one is not taken for it; (numbers cannot move
under an unchanged code param: tests/test_golden.py). And the machinery's own shape: the lock file is current and
small, the hashed code is a package boundary."""
import ast
import re
import shutil

import pytest

from conftest import REPO, merged
from pipeline_lib.build import codes, verify
from pipeline_lib.build.astdump import canonical_dump
from pipeline_lib.build.lock import FRESH, LOCK, UNLOCKED, Code, digest_text, hashed_modules, is_hashed, read_lock
from pipeline_lib.plumbing.config import load_config, read_config_file, standalone_files


def _configs(user_dir=None) -> dict:
    """Every shipped config (a standalone file alone, an overlay merged into the default, the test config) and, with
    ``user_dir``, a user's own: the test config with other seeds, a user's nn.Module among its models."""
    default = read_config_file(REPO / "config" / "config.yaml")
    files = sorted((REPO / "config").glob("*.yaml"))
    alone = set(standalone_files(files))
    out = {"config/config.yaml": load_config(default),
           ".test/config/config.yaml": load_config(read_config_file(REPO / ".test/config/config.yaml"))}
    for path in files:
        if path.name != "config.yaml":
            raw = read_config_file(path)
            out[f"config/{path.name}"] = load_config(raw if str(path) in alone else merged(default, raw))
    if user_dir is not None:
        text, n = re.subn(r"\bseed: 0\b", "seed: 7", (REPO / ".test/config/config.yaml").read_text())
        assert n
        (user_dir / "user.yaml").write_text(text)
        out["user"] = load_config(read_config_file(user_dir / "user.yaml"))
    return out


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    return _configs(tmp_path_factory.mktemp("user"))


def _codes(configs, code: Code) -> dict[str, str]:
    return {f"{name} {job}": c for name, cfg in configs.items() for job, c in codes.job_codes(cfg, code).items()}


@pytest.fixture(scope="module")
def baseline(configs):
    return _codes(configs, Code(REPO))


def _copy(tmp_path):
    """The hashed code, its lock file and the test config in a folder of their own, to edit."""
    shutil.copytree(REPO / "pipeline_lib", tmp_path / "pipeline_lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "workflow" / "scripts", tmp_path / "workflow" / "scripts")
    shutil.copytree(REPO / ".test" / "config", tmp_path / ".test" / "config")
    return tmp_path


def _edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} in {path}"
    path.write_text(text.replace(old, new))


def _rerun(configs, baseline, root) -> set[str]:
    after = _codes(configs, Code(root))
    assert set(after) == set(baseline)
    return {job for job in after if after[job] != baseline[job]}


def _holding(configs, module) -> set[str]:
    """The jobs of every config whose code holds ``module``."""
    code = Code(REPO)
    return {f"{name} {job}" for name, cfg in configs.items() for job, mods in codes.job_modules(cfg).items()
            if any(module in code.closure(m) for m in mods)}


NUMERIC_EDITS = [  # one character each, in modules of every kind
    ("engine.py", "e % checkpoint.every == 0", "e % checkpoint.every == 1"),
    ("models/transformer.py", "torch.cat([cls, z], dim=2)", "torch.cat([cls, z], dim=-2)"),
    ("tasks/sma.py", "return x[:, :k].sum(axis=1) % p", "return x[:, :k].sum(axis=1) % (p + 1)"),
    ("selection.py", "isel(snapshot=index)", "isel(snapshot=index - 1)"),
    ("figures/fig5_accuracy.py", "success_threshold: float = 0.9", "success_threshold: float = 0.8"),
]


@pytest.mark.parametrize("rel, old, new", NUMERIC_EDITS, ids=[e[0] for e in NUMERIC_EDITS])
def test_an_edit_that_can_change_a_number_reruns_exactly_the_jobs_whose_code_holds_it(tmp_path, configs, baseline,
                                                                                     rel, old, new):
    root = _copy(tmp_path)
    path = root / "pipeline_lib" / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))
    module = "pipeline_lib." + rel.removesuffix(".py").replace("/", ".")
    holding = _holding(configs, module)
    assert any(job.startswith("user ") for job in holding)  # a user's config too
    assert _rerun(configs, baseline, root) == holding


def test_comments_docstrings_and_formatting_rerun_nothing(tmp_path, configs, baseline):
    root = _copy(tmp_path)
    for path in sorted(hashed_modules(root).values()):
        text = path.read_text()
        text = text.replace('"""', '"""Reworded. ', 1)  # the module's (or first) docstring
        text = re.sub(r"^(def \w+\(.*)$", r"# a comment\n\1", text, flags=re.M)
        text = re.sub(r"^( +)return ", r"\1return  ", text, flags=re.M)  # spacing
        path.write_text(text + '\n\n# a comment\n"""A string used as a comment."""\n')
    assert not Code(root).unlocked() and _rerun(configs, baseline, root) == set()


def test_a_verified_refactor_reruns_nothing_and_a_module_put_back_is_not_taken_for_it(tmp_path, configs, baseline,
                                                                                     monkeypatch):
    root = _copy(tmp_path)
    losses = root / "pipeline_lib" / "losses.py"
    before = losses.read_text()
    # a refactor of two modules, one of them split: a local renamed; a helper moved to a module of its own
    _edit(losses, "    acc = (logits.argmax(-1) == y).float().mean(1)\n    return loss, acc",
          "    accuracy = (logits.argmax(-1) == y).float().mean(1)\n    return loss, accuracy")
    sma = root / "pipeline_lib" / "tasks" / "sma.py"
    _edit(sma, '    targets = {"label": first.sum(1) % p,', '    out = {"label": first.sum(1) % p,')
    _edit(sma, '    targets.update({f"token_{t}": first[:, t] for t in range(k)})\n    return targets\n',
          '    out.update({f"token_{t}": first[:, t] for t in range(k)})\n    return out\n')
    (root / "pipeline_lib" / "helpers_of_a_refactor.py").write_text("ONE = 1\n")
    _edit(losses, "from __future__ import annotations\n",
          "from __future__ import annotations\n\nfrom .helpers_of_a_refactor import ONE  # noqa: F401\n")
    changed = _rerun(configs, baseline, root)
    assert changed == _holding(configs, "pipeline_lib.losses") | _holding(configs, "pipeline_lib.tasks.sma")
    verified = []
    monkeypatch.setattr(verify, "verify", lambda r, base, after, progress: verified.append(r) or 154)
    said = verify.lock(root, progress=lambda _: None, base=tmp_path)
    assert verified == [root] and any(s.startswith("refactor: 2 module(s)") for s in said), said
    locked = read_lock(root)
    assert locked["pipeline_lib.losses"][1] == read_lock(REPO)["pipeline_lib.losses"][1]  # the label is kept
    assert locked["pipeline_lib.helpers_of_a_refactor"][1] == FRESH
    assert _rerun(configs, baseline, root) == set()  # nothing reruns, in any config
    losses.write_text(before)  # back to its code before the refactor: not the code the lock's entry records
    assert Code(root).label("pipeline_lib.losses").startswith(UNLOCKED)
    assert _rerun(configs, baseline, root) == _holding(configs, "pipeline_lib.losses")


def test_an_intended_change_of_numbers_takes_new_labels(tmp_path, configs, baseline):
    root = _copy(tmp_path)
    _edit(root / "pipeline_lib" / "tasks" / "sma.py", '"label": first.sum(1) % p', '"label": first.sum(1) % p + 0')
    said = verify.lock(root, new_numbers=True, progress=lambda _: None)
    assert any("golden --write" in s for s in said)
    now = Code(root)
    assert not now.unlocked() and now.label("pipeline_lib.tasks.sma") == now.digest("pipeline_lib.tasks.sma")
    assert _rerun(configs, baseline, root) == _holding(configs, "pipeline_lib.tasks.sma")


def test_lock_refuses_a_change_no_test_config_job_runs(tmp_path):
    root = _copy(tmp_path)
    assert "pipeline_lib.api" not in verify.test_config_modules(root)  # results from Python: no job imports it
    (root / "pipeline_lib" / "api.py").write_text((root / "pipeline_lib" / "api.py").read_text() + "\nX = 1\n")
    with pytest.raises(verify.LockError, match="no job of the test config imports pipeline_lib.api"):
        verify.lock(root, progress=lambda _: None)


def test_verification_runs_head_then_the_working_tree_on_a_copy_and_refuses_moved_numbers(tmp_path, monkeypatch):
    import numpy as np
    import xarray as xr

    from pipeline_lib.plumbing.store import write_dataset

    runs = []

    def fake_run(code_root, work, config_root=REPO, cores=2):
        runs.append(code_root)
        value = 1.5 if fake_run.move and len(runs) == 2 else 1.0
        write_dataset(xr.Dataset({"w": ("seed", np.array([value, 2.0]))}), work / "results" / "runs" / "r" / "w.h5")
        return work / "results"

    monkeypatch.setattr(verify, "run_test_config", fake_run)
    monkeypatch.setattr(verify, "_head_tree", lambda root, dest: dest)
    head = verify._git(REPO, "rev-parse", "HEAD")[:12]
    for move in (False, True):
        fake_run.move, runs[:] = move, []
        base = verify.head_run(REPO, tmp_path / f"s{move}", progress=lambda _: None)
        assert verify.head_run(REPO, tmp_path / f"s{move}", progress=lambda _: None) == base  # made once
        if move:
            with pytest.raises(verify.LockError, match="moves numbers, so it is not a refactor: differ: runs/r/w.h5: w"):
                verify.verify(REPO, base, tmp_path / "after", progress=lambda _: None)
        else:
            assert verify.verify(REPO, base, tmp_path / "after", progress=lambda _: None) == 1
        assert runs == [tmp_path / f"s{move}" / f"code-{head}", REPO]


def test_the_lock_file_is_current_and_small():
    stale = Code(REPO).unlocked()
    assert not stale, (f"{', '.join(stale)}: code not in {LOCK}; run `python -m pipeline_lib lock` (a refactor, "
                       "verified) or `python -m pipeline_lib lock --new-numbers` (an intended change of numbers)")
    text = (REPO / LOCK).read_text()
    assert len(text.encode()) < 20_000
    lines = [ln.split() for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert all(len(f) == 3 for f in lines) and {f[0] for f in lines} == set(hashed_modules(REPO))


def test_the_hashed_code_is_a_package_boundary():
    """The run-time layer (plumbing) imports nothing hashed and nothing of the build-time wing; no hashed module
    imports the wing; the registry does not read the claims."""
    def imports(path):
        rel = path.relative_to(REPO).with_suffix("")
        parts = list(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        package = parts if path.name == "__init__.py" else parts[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join(base + (node.module.split(".") if node.module else []))
                yield from (f"{target}.{a.name}" if not node.module else target for a in node.names)
            elif isinstance(node, ast.Import):
                yield from (a.name for a in node.names)

    package = {p: list(imports(p)) for p in (REPO / "pipeline_lib").rglob("*.py")}
    plumbing = {p: [m for m in found if m.startswith("pipeline_lib") and not m.startswith("pipeline_lib.plumbing")]
                for p, found in package.items() if "plumbing" in p.parts}
    assert {str(p): m for p, m in plumbing.items() if set(m) - {"pipeline_lib.__version__"}} == {}
    wing = {str(p) for p, found in package.items() if "build" not in p.parts and p.name != "__main__.py"
            and any(m.startswith("pipeline_lib.build") for m in found)}
    assert wing == set()
    assert not any("claims" in m or "caveats" in m for m in package[REPO / "pipeline_lib/plumbing/registry.py"])
    assert is_hashed("pipeline_lib.engine") and is_hashed("workflow.scripts.train")
    assert not any(is_hashed(m) for m in ("pipeline_lib", "pipeline_lib.__main__", "pipeline_lib.plumbing.store",
                                          "pipeline_lib.build.lock"))


def test_a_job_hashes_its_closure_and_not_the_other_kinds():
    code = Code(REPO)
    train = code.closure("pipeline_lib.stages.train")
    assert {"pipeline_lib.engine", "pipeline_lib.models", "pipeline_lib.attention", "pipeline_lib.selection"} <= set(train)
    assert not {"pipeline_lib.tasks.sma", "pipeline_lib.models.circuit", "pipeline_lib.figures.fig5_accuracy"} & set(train)
    assert "pipeline_lib.models.transformer" in code.closure("pipeline_lib.models.vit")
    assert "pipeline_lib.models.vit" not in code.closure("pipeline_lib.models.transformer")
    fig5 = code.closure("pipeline_lib.figures.fig5_accuracy")
    assert "pipeline_lib.figures.style" in fig5 and "pipeline_lib.engine" not in fig5
    assert code.job_code("pipeline_lib.stages.train") != code.job_code("pipeline_lib.stages.figure")
    assert code.job_code("pipeline_lib.stages.train", data="a") != code.job_code("pipeline_lib.stages.train", data="b")


def test_the_digest_reads_code_not_text():
    base = "import math\n\n\ndef f(x):\n    '''Doc.'''\n    return math.sqrt(x) + 1\n"
    assert digest_text(base) == digest_text("import math\ndef f(x):  # c\n    return (math.sqrt(x)\n            + 1)\n")
    assert digest_text(base) != digest_text(base.replace("+ 1", "+ 2"))
    assert digest_text(base) != digest_text(base.replace("def f(x)", "def g(x)"))


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

    assert canonical_dump(ast.parse(SNIPPET)) == SNIPPET_DUMP


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
    assert canonical_dump(tree) == SNIPPET_DUMP
    # a declared type parameter is code, and is seen
    func.type_params = [ast.Name(id="T", ctx=ast.Load())]
    assert canonical_dump(tree) != SNIPPET_DUMP

