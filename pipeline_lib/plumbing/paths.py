"""Where each artifact lives: one place for the paths the rules declare and the stages read.

Paths are readable names from the config (``results/runs/<run>/trajectory.h5``), relative to the
working directory Snakemake runs in, or under ``root`` for a test.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paths:
    """The artifact paths of one results folder."""

    root: str = "results"

    def _p(self, *parts: str) -> str:
        return str(Path(self.root, *parts))

    def dataset(self, name: str) -> str:
        return self._p("datasets", f"{name}.h5")

    def trajectory(self, run: str) -> str:
        return self._p("runs", run, "trajectory.h5")

    def weights(self, run: str) -> str:
        return self._p("runs", run, "weights.h5")

    def analysis(self, kind: str, name: str) -> str:
        """The artifact of entry ``name`` of analysis ``kind`` (a per-run analysis: the run's name)."""
        return self._p("analysis", kind, f"{name}.h5")

    def figure(self, name: str, ext: str) -> str:
        return self._p("figures", f"{name}{ext}")

    def claims(self, ext: str) -> str:
        """The claims ledger (``.csv``, ``.md``)."""
        return self._p(f"claims{ext}")

    def claims_paper(self, paper: str, ext: str) -> str:
        """One paper's claims for the report (``.csv``; its caption ``.rst``), named after the paper."""
        return self._p("claims", re.sub(r"[^a-z0-9]+", "_", paper.lower()).strip("_") + ext)

    def log(self, stage: str, name: str) -> str:
        return self._p("logs", stage, f"{name}.log")

    def benchmark(self, stage: str, name: str) -> str:
        return self._p("benchmarks", stage, f"{name}.tsv")
