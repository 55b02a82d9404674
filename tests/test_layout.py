"""The package's shape: an acyclic import graph (function-local imports included), modules under ~400
lines, functions under ~60, no private name imported across modules, the run-time layer and the build-time wing
packages of their own."""
import ast
from pathlib import Path

from pipeline_lib.build.lock import ROOT

PACKAGE_DIR = ROOT / "pipeline_lib"


def module_file(module: str) -> Path:
    rel = Path(*module.split("."))
    pkg = ROOT / rel / "__init__.py"
    return pkg if pkg.exists() else (ROOT / rel).with_suffix(".py")

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = ["pipeline_lib", *path.relative_to(PACKAGE_DIR).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path) -> list[tuple[str, str]]:
    """(imported module, name) of every pipeline_lib import of a module, at any depth."""
    found = []
    parts = module.split(".")
    package = parts if path.name == "__init__.py" else parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            if target.split(".")[0] == "pipeline_lib":
                found += [(target, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.split(".")[0] == "pipeline_lib"]
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for mod, path in mods.items():
        deps = set()
        for target, name in _imports(mod, path):
            deps.add(f"{target}.{name}" if f"{target}.{name}" in mods else target)
        graph[mod] = {d for d in deps if d in mods and d != mod and not mod.startswith(d + ".")}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_of_pipeline_lib_is_acyclic():
    graph = _graph()
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the check can fail


def test_modules_and_functions_stay_small():
    long_modules = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long_modules, long_modules
    long_functions = []
    for mod, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    long_functions.append(f"{mod}.{node.name}: {n} lines")
    assert not long_functions, long_functions


def test_no_private_name_is_imported_across_modules():
    crossing = [f"{mod} imports {target}.{name}" for mod, path in _modules().items()
                for target, name in _imports(mod, path) if name.startswith("_") and name != "__version__"]
    assert not crossing, crossing


def test_the_run_time_layer_and_the_build_time_wing_are_packages():
    assert module_file("pipeline_lib.plumbing").name == "__init__.py"
    assert module_file("pipeline_lib.build").name == "__init__.py"
    assert {"config", "registry", "jobs", "store"} <= {p.stem for p in (PACKAGE_DIR / "plumbing").glob("*.py")}
    assert {"lock", "codes", "verify", "golden"} <= {p.stem for p in (PACKAGE_DIR / "build").glob("*.py")}


def test_every_long_test_says_why_it_must_be_slow():
    """A test marked `long` carries "Slow:" and its reason in its docstring, so the suite's time stays argued."""
    silent = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and any(ast.unparse(d) == "pytest.mark.long" for d in node.decorator_list):
                if "Slow:" not in (ast.get_docstring(node) or ""):
                    silent.append(f"{path.name}::{node.name}")
    assert not silent, silent
