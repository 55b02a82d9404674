"""environment.yml and pyproject.toml name the same dependencies with the same versions, the
distribution is not named pipeline_lib (the index's pipeline-lib is another project; that the new
name is free was checked with `pip index versions` when it was chosen), and the licence is there."""
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
