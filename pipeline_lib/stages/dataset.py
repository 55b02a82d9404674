"""Stage `dataset`: generate one dataset entry with its task module into results/datasets/<name>.h5."""
from __future__ import annotations

from ..plumbing import registry
from ..plumbing.config import Config
from ..plumbing.store import provenance, write_dataset


def build_dataset(cfg: Config, name: str, out_path: str, code: str = "") -> None:
    """Generate dataset ``name`` into ``out_path``; ``code``: the job's code param, kept in the provenance."""
    entry = cfg.datasets[name]
    ds = registry.load("task", entry.plugin).generate(cfg.params("task", name))
    write_dataset(ds, out_path, provenance(cfg.dataset_slice(name), device="none", code=code))
