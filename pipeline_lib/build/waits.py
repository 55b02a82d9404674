"""The README's waits that no results folder records: the install, the test suite and the tour, each timed once
and kept in ``docs/waits.json`` (its seconds, command, CPU and core count), so that the README's cost table
is generated from a measurement and a new timing refreshes it.

``python -m pipeline_lib timed NAME -- COMMAND ...`` runs the command and keeps its wall time when it succeeds;
``--seconds S`` keeps a wall time measured outside (the install of a clean invocation, timed by its own shell).
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections import Counter
from pathlib import Path

from .lock import ROOT

WAITS = Path("docs") / "waits.json"
# name -> the README row's first cell
ROWS = {"install": "install (`pip install -e .`)", "suite": "the test suite (install included)",
        "tour": "the tour: every rule in miniature, `snakemake --cores all --directory .test`"}
INSTALL_SIZE = ("1.5 GB with PyTorch's CPU wheel (192 MB to download); PyTorch's default CUDA wheel is a 2.7 GB "
                "download with its NVIDIA libraries")


def machine(proc: Path = Path("/proc")) -> str:
    """The CPU a run or a timing was kept on (its model name), and the NVIDIA GPUs the driver lists beside it
    ("<CPU> with <GPU>": a run on a GPU machine trains there under ``device: auto``)."""
    import platform

    cpu, fields = None, {}
    try:
        for line in (proc / "cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "cpu family", "model") and key.strip() not in fields:
                fields[key.strip()] = value.strip()
        cpu = fields.get("model name")
    except OSError:
        pass
    if cpu and not any(ch.isdigit() for ch in cpu) and "cpu family" in fields and "model" in fields:
        # a model name without a model number ("AMD EPYC"): its family and model tell the generation (and so the
        # instruction set that decides the training's rounding) apart
        cpu += f" (family {fields['cpu family']}, model {fields['model']})"
    cpu = cpu or platform.processor() or platform.machine() or "unknown"
    gpus = []
    for info in sorted((proc / "driver/nvidia/gpus").glob("*/information")):
        try:
            gpus += [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if line.startswith("Model:")]
        except OSError:  # unreadable: name the machine by its CPU alone rather than fail
            continue
    names = [f"{n} x {g}" if n > 1 else g for g, n in Counter(gpus).items()]
    return f"{cpu} with {', '.join(names)}" if names else cpu


def cores() -> int:
    """The cores this process may run on (a job limited by ``taskset`` or a cgroup's affinity sees its own)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def read(root: Path = ROOT) -> dict[str, dict]:
    path = Path(root) / WAITS
    return json.loads(path.read_text()) if path.exists() else {}


def _check_name(name: str) -> None:
    if name not in ROWS:
        raise ValueError(f"timed: no README row named {name!r}; known: {', '.join(ROWS)}")


def keep(name: str, seconds: float, command: str, root: Path = ROOT) -> Path:
    """Keep one timing under ``name`` (one of :data:`ROWS`), with the CPU and core count it was measured on."""
    _check_name(name)
    if not seconds > 0:
        raise ValueError(f"timed {name}: --seconds must be positive, not {seconds}")
    waits = read(root)
    waits[name] = {"seconds": round(float(seconds), 1), "command": command, "machine": machine(), "cores": cores()}
    path = Path(root) / WAITS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(waits, indent=1, sort_keys=True) + "\n")
    return path


def timed(name: str, command: list[str], root: Path = ROOT) -> tuple[int, float]:
    """Run ``command`` and keep its wall time under ``name`` if it exits 0; its exit status and seconds (127 where
    it cannot be started)."""
    _check_name(name)  # before the command runs, not after
    start = time.monotonic()
    try:
        rc = subprocess.call(command)
    except OSError as exc:
        raise ValueError(f"timed {name}: cannot run {command[0]!r} ({exc.strerror})") from exc
    seconds = time.monotonic() - start
    if rc == 0:
        keep(name, seconds, shlex.join(command), root)
    return rc, seconds


def minutes(seconds: float) -> str:
    m = seconds / 60
    return f"{seconds:.0f} seconds" if m < 1 else f"{m:.1f} minutes" if m < 10 else f"{m:.0f} minutes"


def row(name: str, waits: dict[str, dict]) -> str:
    """The README's row for ``name``: the kept timing with where it was measured, or a plain statement that no
    timing is kept."""
    label = ROWS[name]
    w = waits.get(name)
    command = w["command"].replace("|", "\\|") if w else ""  # a table cell
    text = (f"{minutes(w['seconds'])} on {w['cores']} cores ({w['machine']}: `{command}`, timed once by "
            "`python -m pipeline_lib timed`)" if w else "not timed: no kept timing (`python -m pipeline_lib timed`)")
    if name == "install":
        text += f"; {INSTALL_SIZE}"
    return f"| {label} | {text} |"
