"""Kept statistics files (``docs/stats/<name>.json``): their format, one figure a line, and setting a config's kept
run aside as the rerun of the machine that made it when a run on another machine replaces it."""
from __future__ import annotations

import json
from pathlib import Path

from .reruns import rerun_path


def write_kept(out: Path, kept: dict) -> None:
    """A kept statistics file, one figure (and one training job's seconds) a line (a diff names the figure)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    figures, seconds = kept["figures"], kept.get("train_seconds", {})
    lines = [f"{json.dumps(fig)}: {json.dumps(figures[fig], sort_keys=True)}" for fig in sorted(figures)]
    runs = [f"{json.dumps(run)}: {json.dumps(seconds[run])}" for run in sorted(seconds)]
    extra = "".join(f', "{k}": {json.dumps(kept[k])}' for k in ("machine", "rerun") if k in kept)
    out.write_text('{"config": ' + json.dumps(kept["config"]) + ', "replicate": ' + json.dumps(kept["replicate"])
                   + ', "cost": ' + json.dumps(kept["cost"], sort_keys=True) + extra + ',\n"figures": {\n'
                   + ",\n".join(lines) + "\n}" + (',\n"train_seconds": {\n' + ",\n".join(runs) + "\n}" if runs else "")
                   + "}\n")


def earlier_as_rerun(kept_file: Path, here: str) -> Path:
    """Before a run made on the machine ``here`` replaces ``kept_file`` (a config's kept run), keep that earlier
    run beside it as the rerun of the machine that made it (:func:`.rerun_path`), so that a verdict the two
    machines' rounding decides is undecided rather than the newer machine's. Refused, saying why and changing
    nothing, where there is no earlier run, it is a rerun itself, it records no machine or was made ``here`` (the
    same machine's numbers again are no rerun), or that machine already has a kept rerun (it would be lost)."""
    kept_file = Path(kept_file)
    if not kept_file.exists():
        raise FileNotFoundError(f"{kept_file}: no earlier kept run to keep as a rerun; leave out --earlier-as-rerun")
    earlier = json.loads(kept_file.read_text())
    made_on = earlier.get("machine")
    if earlier.get("rerun"):
        raise ValueError(f"{kept_file} is a rerun already; --earlier-as-rerun sets aside a config's own kept run")
    if not made_on or made_on == here:
        raise ValueError(f"{kept_file} was made on {made_on or 'an unrecorded machine'}"
                         + (", this machine: its numbers again are no rerun" if made_on else
                            ": a rerun must name the machine whose rounding it stands for")
                         + "; leave out --earlier-as-rerun to replace it")
    out = rerun_path(kept_file.parent, kept_file.stem, made_on)
    if out.exists():
        raise ValueError(f"{out} already keeps a rerun made on {made_on}; keeping {kept_file} there would lose it")
    write_kept(out, {**earlier, "rerun": True})
    return out
