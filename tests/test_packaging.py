"""environment.yml and pyproject.toml name the same dependencies with the same versions, the
distribution is not named pipeline_lib (the index's pipeline-lib is another project; that the new
name is free was checked with `pip index versions` when it was chosen), and the licence is there."""
import os
import re

import pytest
import yaml
from packaging.requirements import Requirement

from conftest import REPO

# pip name -> conda name, where they differ
CONDA_NAMES = {"torch": "pytorch"}


def _pyproject():
    import tomllib
    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def _expected() -> dict[str, str]:
    project = _pyproject()
    out = {"python": project["requires-python"]}
    for line in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
        req = Requirement(line)
        out[CONDA_NAMES.get(req.name, req.name)] = ",".join(sorted(str(s) for s in req.specifier))
        if "reports" in req.extras:  # snakemake[reports] = snakemake + pygments
            out["pygments"] = ""
    return out


def _conda() -> dict[str, str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    assert env["channels"][:2] == ["conda-forge", "bioconda"]
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and dep != "pip":
            name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
            out[name] = ",".join(sorted(s.strip() for s in spec.split(",") if s.strip()))
    return out


def test_environment_yml_matches_pyproject():
    expected, conda = _expected(), _conda()
    # python's bound: conda's may be tighter above (no wheels of every dependency for the newest)
    assert expected.pop("python") in conda.pop("python").split(",")
    assert conda == expected


def test_environment_yml_installs_the_package_itself_with_its_dev_extra():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = [d for d in env["dependencies"] if isinstance(d, dict)][0]["pip"]
    assert pip == ["-e .[dev]"]


def test_distribution_is_not_named_like_the_import_package_and_has_a_licence():
    project = _pyproject()
    # "pipeline_lib" would be read by pip as pipeline-lib, an unrelated project on the package index
    assert re.sub(r"[-_.]+", "-", project["name"]).lower() != "pipeline-lib"
    assert project["license"] == "MIT" and (REPO / "LICENSE").read_text().startswith("MIT License")


def test_the_python_bound_admits_no_python_that_snakemake_refuses_and_the_readme_states_it():
    from importlib.metadata import metadata

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    ours = _pyproject()["requires-python"]
    lowest = min(Version(f"3.{minor}") for minor in range(6, 20) if Version(f"3.{minor}") in SpecifierSet(ours))
    # the snakemake major version we allow (9) needs the Python its metadata names: ours must not go below it
    assert lowest in SpecifierSet(metadata("snakemake")["Requires-Python"]), (ours, metadata("snakemake")["Requires-Python"])
    readme = (REPO / "README.md").read_text()
    assert f"Python ≥ {lowest}" in readme and "Python ≥ 3.10" not in readme


def test_the_lock_file_pins_every_dependency_within_its_bounds():
    from packaging.version import Version

    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = Version(version)
    project = _pyproject()
    for line in [*project["dependencies"], *project["optional-dependencies"]["dev"]]:
        req = Requirement(line)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req.name} is not pinned in requirements.lock"
        assert req.specifier.contains(pins[name], prereleases=True), (req.name, str(pins[name]), str(req.specifier))


def test_a_package_installed_away_from_its_checkout_says_what_to_do(monkeypatch, tmp_path):
    from pipeline_lib.plumbing import config_schema
    from pipeline_lib.plumbing.errors import ConfigError

    monkeypatch.setattr(config_schema, "SCHEMA_PATH", tmp_path / "workflow" / "schemas" / "config.schema.yaml")
    config_schema.schema.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"pip install -e \."):
            config_schema.schema()
    finally:
        config_schema.schema.cache_clear()


def _runtime_expected() -> dict[str, str]:
    """pyproject's runtime dependencies by conda name, without the workflow engine (the main process
    runs Snakemake; a job only needs what pipeline_lib imports)."""
    dev = {CONDA_NAMES.get(Requirement(line).name, Requirement(line).name)
           for line in _pyproject()["optional-dependencies"]["dev"]}
    return {k: v for k, v in _expected().items() if k not in dev | {"snakemake", "pygments"}}


def test_the_rules_environment_names_the_runtime_dependencies_of_pyproject():
    env = yaml.safe_load((REPO / "workflow" / "envs" / "pipeline.yaml").read_text())
    assert env["channels"][0] == "conda-forge" and not any(isinstance(d, dict) for d in env["dependencies"])
    deps = {}
    for dep in env["dependencies"]:
        name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
        deps[name] = ",".join(sorted(s.strip() for s in spec.split(",") if s.strip()))
    expected = _runtime_expected()
    assert expected.pop("python") in deps.pop("python").split(",")
    assert deps == expected


@pytest.mark.workflow
def test_every_rule_names_the_one_environment_and_the_lint_is_clean():
    import subprocess
    import sys
    smk = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk")), REPO / "workflow" / "Snakefile"]
    rules = sum(len(re.findall(r"(?m)^\s*rule\b", p.read_text())) for p in smk)
    conda = [m for p in smk for m in re.findall(r"(?m)^\s*conda:\n\s*(\S+)", p.read_text())]
    assert conda and set(conda) == {'"../envs/pipeline.yaml"'}
    assert len(conda) == rules - 1  # every rule but `all`, which runs nothing
    lint = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0 and "Lints for" not in lint.stdout + lint.stderr, lint.stdout + lint.stderr


@pytest.mark.workflow
@pytest.mark.parametrize("snakefile", ["Snakefile", "workflow/Snakefile"])
def test_the_workflow_finds_pipeline_lib_in_its_checkout_where_the_environment_lacks_it(tmp_path, snakefile):
    """A job's environment (the rules' conda environment) has the libraries but not pipeline_lib: Python
    without its site hooks (no editable-install finder) but with the same site-packages on its path."""
    import subprocess
    import sys
    import sysconfig
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    bare = [sys.executable, "-S"]
    # the control: pipeline_lib is not importable there
    probe = subprocess.run([*bare, "-c", "import pipeline_lib"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'pipeline_lib'" in probe.stderr
    import shutil
    shutil.copytree(REPO / ".test" / "config", tmp_path / "config")
    plan = subprocess.run([*bare, "-m", "snakemake", "fig5_accuracy", "-s", str(REPO / snakefile), "-d", str(tmp_path),
                           "-n"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert plan.returncode == 0 and "rule fig5_accuracy" in plan.stdout, plan.stderr[-2000:]


def test_every_package_data_pattern_names_a_file_the_package_reads():
    """A built wheel ships what the package reads at run time: each package-data pattern matches a file (a moved
    record or declarations folder would otherwise leave the wheel without it, silently)."""
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as fh:
        data = tomllib.load(fh)["tool"]["setuptools"]["package-data"]
    for package, patterns in data.items():
        for pattern in patterns:
            assert list((REPO / package.replace(".", "/")).glob(pattern)), f"{package}: {pattern} matches no file"
    from pipeline_lib.build.lock import LOCK

    shipped = {p for pats in data.values() for pat in pats for p in (REPO / "pipeline_lib").glob(pat)}
    assert (REPO / LOCK).resolve() in {p.resolve() for p in shipped}


def test_a_package_without_its_lock_file_says_what_to_do(tmp_path):
    """Read as empty, a missing lock file would rerun every job without a word."""
    from pipeline_lib.build.lock import read_lock

    with pytest.raises(FileNotFoundError, match=r"code.lock is missing.*pip install -e \."):
        read_lock(tmp_path)
    assert read_lock(tmp_path, missing_ok=True) == {}
    assert "pipeline_lib.engine" in read_lock()  # the checkout's
