"""What each job of the DAG reads and writes: its input files are the artifacts its config entry references
(:mod:`.refs`: the plug-ins' ``x-ref`` annotations and what ``x-reads`` says each reference reads). Its code param
is the build-time wing's (:mod:`pipeline_lib.build.codes`)."""
from __future__ import annotations

from . import registry
from .config import Config
from .paths import Paths
from .refs import Ref, analysis_refs, refs
from .values import per_run


def analysis_jobs(cfg: Config, kind: str) -> list[str]:
    """Names of the jobs of one analysis: its entries, or the runs of a per-run analysis."""
    block = cfg.raw["analyses"].get(kind, {})
    return list(block.get("runs", [])) if per_run(kind) else list(block)


def analysis_inputs(cfg: Config, kind: str, name: str, paths: Paths | None = None) -> list[str]:
    return _files(cfg, analysis_refs(cfg.raw, kind, name), paths)


def figure_inputs(cfg: Config, name: str, paths: Paths | None = None) -> list[str]:
    found = refs(cfg.raw, f"figures.{name}", registry.plugin("figure", name).schema, cfg.raw["figures"][name])
    return _files(cfg, list(found), paths)


def _files(cfg: Config, found: list[Ref], paths: Paths | None) -> list[str]:
    paths = paths or cfg.paths
    files: list[str] = []
    for ref in found:
        if ref.target == "dataset":
            files.append(paths.dataset(ref.name))
        elif ref.target == "run":
            for read in ref.reads:
                if read == "dataset":
                    files.append(paths.dataset(cfg.runs[ref.name].dataset))
                elif read.startswith("analysis/"):
                    files.append(paths.analysis(read.split("/", 1)[1], ref.name))
                else:  # trajectory or weights, the run's ancestors' too
                    files += [getattr(paths, read)(r) for r in cfg.lineage(ref.name)]
        else:  # analysis/<kind>: the entry's artifact and/or its runs' artifacts
            kind = ref.target.split("/", 1)[1]
            if "artifact" in ref.reads:
                files.append(paths.analysis(kind, ref.name))
            run_reads = tuple(r for r in ref.reads if r != "artifact")
            if run_reads:
                inner = [Ref(r.path, "run", r.name, run_reads) for r in analysis_refs(cfg.raw, kind, ref.name)
                         if r.target == "run"]
                files += _files(cfg, inner, paths)
    return list(dict.fromkeys(files))


def online(cfg: Config, run: str) -> bool:
    """Whether a run's task is online (fresh samples every step: rule train_online, not train)."""
    return bool(registry.plugin("task", cfg.datasets[cfg.runs[run].dataset].plugin).get("ONLINE", False))


def train_runs(cfg: Config, online_runs: bool) -> list[str]:
    """The runs of rule train_online (``online_runs``) or of rule train."""
    return [r for r in cfg.runs if online(cfg, r) == online_runs]


# every figure's: the figure, its numbers and provenance, its report caption (with the numbers);
# its module may add EXTRA_OUTPUTS
FIGURE_OUTPUTS = (".pdf", ".png", ".json", ".rst")


def figure_outputs(name: str) -> tuple[str, ...]:
    """Extensions a figure writes: FIGURE_OUTPUTS and its module's EXTRA_OUTPUTS."""
    return (*FIGURE_OUTPUTS, *registry.plugin("figure", name).get("EXTRA_OUTPUTS", []))
