"""``python -m pipeline_lib everything``: every shipped config and the default's replicate, run through Snakemake
one after another and each kept and published as soon as it finishes (:func:`pipeline_lib.build.publish.keep`),
so an interruption loses only the config that was running and a rerun skips what is finished (Snakemake plans
nothing for it).

Every argument after ``--`` goes to each ``snakemake`` call: ``-- --cores all`` on this machine, ``-- --profile
profiles/slurm`` on a cluster (each config's jobs then run in parallel there). The default config runs first:
the overlays that merge into it (not ``standalone``) write into its results folder and reuse its jobs.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..plumbing.config import standalone_files
from .lock import ROOT
from .publish import DEFAULT, config_of, keep, publish


@dataclass(frozen=True)
class Step:
    """One Snakemake invocation and what it keeps: ``config`` (its file, relative to the checkout), whether it
    is the default's replicate, and its results folder."""
    config: str
    replicate: bool
    results: str

    def snakemake(self, extra: list[str]) -> list[str]:
        cmd = [sys.executable, "-m", "snakemake"]
        if self.config != DEFAULT:
            cmd += ["--configfile", self.config]
        if self.replicate:
            cmd += ["--config", "replicate=true"]
        return cmd + extra

    @property
    def name(self) -> str:
        return Path(self.config).stem + (" (replicate)" if self.replicate else "")


def shipped(root: Path = ROOT) -> list[str]:
    """The shipped configs: the default, then the overlays that merge into it, then the standalone ones."""
    files = sorted(p for p in (root / "config").glob("*.yaml") if p.name != Path(DEFAULT).name)
    merged = [p for p in files if not standalone_files([p])]
    return [DEFAULT, *(p.relative_to(root).as_posix() for p in merged + [p for p in files if p not in merged])]


def plan(root: Path = ROOT, only: list[str] | None = None, skip: list[str] = (), replicate: bool = True) -> list[Step]:
    """The steps, in order; ``only`` / ``skip``: config names (file stems) to run or leave out."""
    names = {Path(c).stem: c for c in shipped(root)}
    unknown = sorted((set(only or []) | set(skip)) - set(names))
    if unknown:
        raise ValueError(f"unknown config(s) {', '.join(unknown)}: the shipped ones are {', '.join(names)}")
    chosen = [c for n, c in names.items() if (only is None or n in only) and n not in skip]
    # each config is read here (its results folder), so one that cannot be read fails before anything runs
    steps = [Step(c, False, config_of(root, c).raw["results"]) for c in chosen]
    if replicate and DEFAULT in chosen:
        steps.insert(1, Step(DEFAULT, True, config_of(root, DEFAULT, True).raw["results"]))
    return steps


def run(steps: list[Step], extra: list[str], root: Path = ROOT, dry_run: bool = False, say=print) -> int:
    """Run, keep and publish each step in turn; the number that failed (each is said, and the others still
    run)."""
    failed = []
    for i, step in enumerate(steps, 1):
        head = f"[{i}/{len(steps)}] {step.name}"
        cmd = step.snakemake(extra)
        say(f"{head}: snakemake {' '.join(cmd[3:])}")
        if dry_run:
            continue
        if subprocess.run(cmd, cwd=root).returncode:
            failed.append(step.name)
            say(f"{head} failed: its log is under {step.results}/logs; going on")
            continue
        try:
            say(f"{head}: kept {keep(root / step.results, root, step.config, step.replicate)}")
            say("\n".join(publish(root)))
        except (OSError, ValueError, KeyError) as exc:
            failed.append(step.name)
            say(f"{head} ran, but keeping or publishing it failed: {exc}; going on")
    if failed:
        say(f"{len(failed)} of {len(steps)} failed: {', '.join(failed)}")
    return len(failed)
