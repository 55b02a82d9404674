"""The engine benchmark's tables in ``docs/performance.md``, generated from the runs kept in ``docs/bench/``.

``python benchmarks/bench.py ... --keep NAME`` writes ``docs/bench/NAME.json``: the command, the machine, the
torch version, the date and every case's row. ``publish`` fills each ``<!-- bench NAME: begin -->`` ...
``<!-- bench NAME: end -->`` block of the page from the file of that name (a block with no kept file says so
and how to make it), so the page states no number a benchmark run did not write.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from . import kept_tables
from .kept_tables import fill_blocks, made_by, made_on, not_kept, write

BENCH = Path("docs") / "bench"
PAGE = Path("docs") / "performance.md"
NAN = float("nan")
COMPILED = re.compile(r"## Call CompiledFxGraph \w+ ##")  # a graph's hash names it: another each compilation


def _matmul(side: str):
    """A row's matrix-product time of one profiled side (nan where that side was not profiled)."""
    return lambda r: r[f"{side}_profile"]["matmul_ms"] if f"{side}_profile" in r else NAN


# optional column groups, shown when any row has the group's key: (header, row key or getter, format)
COLUMN_GROUPS = [
    ("engine_profile", [("engine matmul ms/seed-epoch", _matmul("engine"), "{:.2f}"),
                        ("ratio ceiling", "ratio_ceiling", "{:.1f}x")]),
    ("adapter_ms_per_seed_epoch", [("adapter ms/seed-epoch", "adapter_ms_per_seed_epoch", "{:.2f}"),
                                   ("baseline/adapter", "adapter_ratio", "{:.1f}x"),
                                   ("adapter/engine", "engine_over_adapter", "{:.1f}x")]),
    ("compiled_ms_per_seed_epoch", [("compiled adapter ms/seed-epoch", "compiled_ms_per_seed_epoch", "{:.2f}"),
                                    ("baseline/compiled", "compiled_ratio", "{:.1f}x"),
                                    ("compile (s)", "compile_s", "{:.0f}")]),
    ("adapter_ceiling", [("baseline matmul ms/seed-epoch", _matmul("baseline"), "{:.2f}"),
                         ("adapter ceiling", "adapter_ceiling", "{:.1f}x")]),
    ("compiled_ceiling", [("compiled matmul ms/seed-epoch", _matmul("compiled"), "{:.2f}"),
                          ("compiled ceiling", "compiled_ceiling", "{:.1f}x")]),
]


def table(rows: list[dict]) -> str:
    """One line per case: the engine against the baseline, and the column groups any row carries."""
    columns = [col for key, group in COLUMN_GROUPS if any(key in r for r in rows) for col in group]
    lines = ["| model | batch | seeds | engine ms/seed-epoch | baseline ms/seed-epoch | engine seed-steps/s | "
             "baseline seed-steps/s | ratio | peak RSS (MB) |" + "".join(f" {h} |" for h, _, _ in columns),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(columns)]
    for r in rows:
        line = (f"| {r['model']} | {r['batch']} | {r['seeds']} | {r['engine_ms_per_seed_epoch']:.2f} | "
                f"{r.get('baseline_ms_per_seed_epoch', NAN):.2f} | {r['engine_seed_steps_per_s']:.0f} | "
                f"{r.get('baseline_seed_steps_per_s', NAN):.0f} | {r.get('ratio', NAN):.1f}x | {r['peak_rss_mb']:.0f} |")
        for _, value, fmt in columns:
            line += " " + fmt.format(value(r) if callable(value) else r.get(value, NAN)) + " |"
        lines.append(line)
    return "\n".join(lines)


def profiles(rows: list[dict], top: int | None = None) -> str:
    """Where each profiled side's time goes: ms per seed-epoch and operator calls per epoch (the ``top`` first)."""
    out = []
    for r in rows:
        for side in ("engine", "baseline", "compiled"):
            p = r.get(f"{side}_profile")
            if p:
                out.append(f"\n{r['model']} batch {r['batch']} seeds {r['seeds']}, {side}: {p['total_ms']:.2f} ms "
                           f"per seed-epoch profiled, matrix products {p['matmul_ms']:.2f}")
                out += [f"  {ms:8.3f} ms  {n:8.1f} calls/epoch  {COMPILED.sub('a compiled graph', op)}"
                        for op, ms, n in p["top"][:top]]
    return "\n".join(out)


def check_name(name: str) -> None:
    if not re.fullmatch(r"[\w.-]+", name):
        raise ValueError(f"--keep {name!r}: a name of letters, digits, '.', '-' or '_' (it names {BENCH}/<name>.json)")


def keep(name: str, rows: list[dict], argv: list[str], root: Path) -> Path:
    """A finished benchmark's rows with what made them, as ``docs/bench/<name>.json``."""
    check_name(name)
    return write(Path(root) / BENCH / f"{name}.json", made_by(["python", "benchmarks/bench.py", *argv]) | {"rows": rows})


def block(root: Path, name: str) -> str:
    """A block's text: what ran where and its table (with each profiled side's three largest operators), or
    that no run of that name is kept."""
    path = Path(root) / BENCH / f"{name}.json"
    if not path.exists():
        return not_kept(f"{BENCH}/{name}.json", f"Run the benchmark with `--keep {name}` on such a machine, then "
                        "`python -m pipeline_lib publish`.")
    kept = json.loads(path.read_text())
    rows = kept["rows"]
    threads = sorted({r["threads"] for r in rows})
    devices = sorted({r["device"] for r in rows})
    head = (f"`{kept['command']}` {made_on(kept)}, device {', '.join(devices)}, "
            f"{', '.join(map(str, threads))} thread(s); `{BENCH}/{name}.json`:")
    text = head + "\n\n" + table(rows) + "\n"
    said = profiles(rows, top=3)
    return text + (f"\nThe three largest operators of each profiled side:\n\n```{said}\n```\n" if said else "")


def page(root: Path) -> str:
    """``docs/performance.md`` with every benchmark block filled from its kept run."""
    return fill_blocks((Path(root) / PAGE).read_text(), "bench", lambda name: block(root, name), str(PAGE))


def measured_pages(root: Path) -> dict[Path, str]:
    """Pages of prose whose tables come from measurements kept outside ``docs/stats`` (as the README's blocks):
    this page and the diagnostics' (:mod:`.kept_tables`)."""
    root = Path(root)
    out = {root / PAGE: page(root)} if (root / PAGE).exists() else {}
    return out | kept_tables.pages(root)
