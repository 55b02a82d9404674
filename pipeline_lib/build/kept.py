"""Kept statistics files (``docs/stats/<name>.json``): their format, one figure a line, and setting a config's kept
run aside as the rerun of the machine that made it when a run on another machine replaces it."""
from __future__ import annotations

import json
from pathlib import Path

from .reruns import kept_reruns, rerun_path


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


def same_machine(a: str | None, b: str | None) -> bool:
    """Whether two recorded machine names may name one machine: equal, or one recorded without the details in
    parentheses that the other gives (older kept files say "AMD EPYC", newer "AMD EPYC (family 25, model 17)")."""
    if not a or not b:
        return False
    base_a, base_b = a.split(" (")[0], b.split(" (")[0]
    return a == b or (base_a == base_b and (a == base_a or b == base_b))


def earlier_as_rerun(kept_file: Path, here: str) -> Path:
    """Before a run made on the machine ``here`` replaces ``kept_file`` (a config's kept run), keep that earlier
    run beside it as the rerun of the machine that made it (:func:`.rerun_path`), so that a verdict the two
    machines' rounding decides is undecided rather than the newer machine's. Refused, saying why and changing
    nothing, where there is no earlier run, it is a rerun itself, it records no machine or may have been made
    ``here`` (the same machine's numbers again are no rerun; so are figures it kept from ``here``), a rerun of its
    machine is kept already (it would be lost) or one of ``here`` is (the new run would repeat it)."""
    kept_file = Path(kept_file)
    if not kept_file.exists():
        raise FileNotFoundError(f"{kept_file}: no earlier kept run to keep as a rerun; leave out --earlier-as-rerun")
    earlier = json.loads(kept_file.read_text())
    made_on = earlier.get("machine")
    if earlier.get("rerun"):
        raise ValueError(f"{kept_file} is a rerun already; --earlier-as-rerun sets aside a config's own kept run")
    if not made_on:
        raise ValueError(f"{kept_file} records no machine, and a rerun must name the machine whose rounding it "
                         "stands for; leave out --earlier-as-rerun to replace it")
    if same_machine(made_on, here):
        raise ValueError(f"{kept_file} was made on {made_on}, this machine ({here}): its numbers again are no "
                         "rerun; leave out --earlier-as-rerun to replace it")
    mixed = sorted(f for f, k in earlier["figures"].items() if same_machine(k.get("machine", made_on), here))
    if mixed:
        raise ValueError(f"{kept_file} was made on {made_on}, and {', '.join(mixed)} of it on this machine ({here}): "
                         "its numbers again are no rerun; leave out --earlier-as-rerun to replace it")
    for path, other in kept_reruns(kept_file.parent, kept_file.stem):
        for machine, whose in ((made_on, "its machine's rerun would be lost"), (here, "the new run would repeat it")):
            if same_machine(other, machine):
                raise ValueError(f"{path.name} already keeps a rerun made on {other}: {whose}; leave out "
                                 "--earlier-as-rerun, or remove that rerun first")
    out = rerun_path(kept_file.parent, kept_file.stem, made_on)
    write_kept(out, {**earlier, "rerun": True})
    return out
