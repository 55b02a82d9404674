"""Stage of every analysis: compute one job of an analysis module, write results/analysis/<kind>/<name>.h5.

An analysis module's ``compute(cfg, name, params, paths, threads)`` returns the artifact's data and
its own attrs; this stage adds the provenance (config slice, input files and their hashes, code).
"""
from __future__ import annotations

from ..plumbing import registry
from ..plumbing.config import Config
from ..plumbing.jobs import analysis_inputs
from ..plumbing.paths import Paths
from ..plumbing.store import provenance, write_dataset


def run_analysis(cfg: Config, kind: str, name: str, out_path: str, paths: Paths | None = None, threads: int = 1,
                 code: str = ""):
    """One job of analysis ``kind``; ``code``: the job's code param, kept in the provenance."""
    module = registry.load("analysis", kind)
    paths = paths or cfg.paths
    out, attrs = module.compute(cfg, name, cfg.params("analysis", kind, name), paths, threads)
    prov = provenance(cfg.analysis_slice(kind, name), analysis_inputs(cfg, kind, name, paths),
                      device=attrs.pop("device", "cpu"), code=code)
    write_dataset(out, out_path, {**prov, **attrs})
    return out
