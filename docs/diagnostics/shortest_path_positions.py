"""A diagnostic outside the pipeline (docs/diagnostics/shortest_path_positions.md): which recipe lets the
shortest-path decoder leave its token-accuracy plateau.

Exploration data: the task's generator with data seed 1 (the configs use seed 0); model seed 100 (the
configs use 0-2). One JSON argument, e.g.

    python docs/diagnostics/shortest_path_positions.py '{"steps": 6000, "rope": "only", "warmup": 300}'

keys: n_graphs, queries, n_max, lr, bs, steps, d, heads, warmup (steps), wd (AdamW), sched (const|cos|cos_epoch:
a cosine to 0 over the steps, stepped each step, or once per epoch of ``epoch`` steps (default 800): the
workflow's ``schedule: cosine`` without warm-up, from ``pipeline_lib.lr_schedule``), seeds, seed, rope (absent:
learned positions; "only": rotary embeddings on queries and keys, no absolute positions), every (steps
between evaluations), far (true: also the share for every test sequence of distance 3 or more, not only
those among the first 1000, and the share of those whose greedy decoding is a shortest path, as the
workflow's path_accuracy scores it: any shortest path counts; the same greedy share for the training
sequences of distance 3 or more, to tell a generalisation gap from a fit that is not there yet). Prints the
test loss, the token accuracy and, by distance, the share of test sequences whose every path token is predicted (teacher forcing), on 1000 test sequences.
``--table`` instead reads the kept logs of the "far" runs (``shortest_path_positions_logs/``, each opening with
its command) and keeps their last evaluations as the .md's table (``kept/shortest_path_positions_far.json``).
RoPE is the decoder's own (``positions: rope``), except that the learned position embedding is still
created (and left unused), as in the runs of the .md, so that every other parameter starts as with learned
positions; a decoder built with ``positions: rope`` has no such parameter and so other initial values.
"""
from __future__ import annotations

import ast
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import xarray as xr

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from pipeline_lib.analysis.path_accuracy import decode_valid  # noqa: E402
from pipeline_lib.lr_schedule import lr_factor  # noqa: E402
from pipeline_lib.models.decoder import SeedDecoder  # noqa: E402
from pipeline_lib.tasks import shortest_path as sp  # noqa: E402

GRAPHS = 16000  # graphs generated where a run does not say


def dataset(n_graphs: int, queries: int, n_max: int) -> xr.Dataset:
    cache = Path(tempfile.gettempdir()) / f"shortest_path_positions_{n_graphs}_{queries}_{n_max}.nc"
    if cache.exists():
        return xr.open_dataset(cache).load()
    ds = sp.generate(sp.Params(n_graphs=n_graphs, n_max=n_max, queries=queries, seed=1))
    stored = ds.copy()
    for v in ["graph_class", "graph_split", "split"]:
        stored[v] = stored[v].astype(str)
    stored.to_netcdf(cache)
    return ds


def main(args: dict) -> None:
    torch.set_num_threads(1)
    lr, bs, steps = args.get("lr", 1e-3), args.get("bs", 64), args.get("steps", 4000)
    d, heads, warm, wd = args.get("d", 64), args.get("heads", 4), args.get("warmup", 0), args.get("wd", 0.0)
    sched, S, seed = args.get("sched", "const"), args.get("seeds", 1), args.get("seed", 100)
    ds = dataset(args.get("n_graphs", GRAPHS), args.get("queries", 4), args.get("n_max", 6))
    split = ds.split.values.astype(str)
    X, Y = torch.as_tensor(ds.x.values), torch.as_tensor(ds.y.values)
    tr, te = np.where(split == "train")[0], np.where(split == "test")[0][:1000]
    far = np.where((split == "test") & (ds.distance.values >= 3))[0] if args.get("far") else te[:0]
    far_train = np.where((split == "train") & (ds.distance.values >= 3))[0] if args.get("far") else te[:0]
    V, T = int(ds.attrs["task_node_tokens"]) + 5, X.shape[1]
    torch.manual_seed(seed)
    m = SeedDecoder(S, V, T, V, d, heads, 2, 4, tau=math.sqrt(d // heads))
    # RoPE as the runs had it: the decoder's rotation, with the learned positions created (so the initialisation
    # is that of the learned-position model) but left out of the forward pass
    m.rope = bool(args.get("rope"))
    m.init_seeds(list(range(seed, seed + S)))
    opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=wd)

    if sched == "cos_epoch":  # the workflow's per-epoch cosine, no warm-up of its own, floor 0
        ep = args.get("epoch", 800)
        per_epoch = lr_factor(SimpleNamespace(schedule="cosine", lr=lr, warmup_epochs=0, warmup_lr=0.0, min_lr=0.0,
                                              cooldown_epochs=0), steps // ep, ep)

    def lr_at(k):
        f = min(1.0, (k + 1) / warm) if warm else 1.0
        if sched == "cos":
            f *= 0.5 * (1 + math.cos(math.pi * k / steps))
        elif sched == "cos_epoch":
            f *= per_epoch(k)
        return lr * f

    g = torch.Generator().manual_seed(7)
    dist = ds.distance.values
    t0 = time.time()

    def all_tokens(rows):
        lo = m(X[rows])
        yy = Y[rows][None, :, :lo.shape[2]]
        return lo, ((lo.argmax(-1) == yy) | (yy < 0)).all(-1)  # (S, B): every path token predicted

    def greedy_by_distance(rows, label):
        valid = decode_valid(m, ds, rows, int(ds.attrs["task_n_max"]), "cpu")[0]  # (S, len(rows))
        return {label(k): round(float(valid[:, dist[rows] == k].mean()), 3) for k in np.unique(dist[rows])}

    def evaluate():
        m.eval()
        with torch.no_grad():
            lo, ok = all_tokens(te)
            loss, acc = m.loss_acc(lo, Y[te])
            out = {int(k): round(float(ok[:, dist[te] == k].float().mean()), 3) for k in np.unique(dist[te])}
            if len(far):
                ok = all_tokens(far)[1]
                out.update({f"all test, d={int(k)} (n={int((dist[far] == k).sum())})":
                            round(float(ok[:, dist[far] == k].float().mean()), 3) for k in np.unique(dist[far])})
                out.update(greedy_by_distance(far, lambda k: f"greedy path, d={int(k)}"))
                out.update(greedy_by_distance(
                    far_train, lambda k: f"train greedy path, d={int(k)} (n={int((dist[far_train] == k).sum())})"))
        m.train()
        return float(loss.mean()), float(acc.mean()), out

    for k in range(steps + 1):
        if k % args.get("every", 500) == 0:
            loss, acc, out = evaluate()
            print(f"step {k} {time.time() - t0:.0f}s test loss {loss:.3f} acc {acc:.3f} seq-correct by distance {out}",
                  flush=True)
        if k == steps:
            break
        idx = tr[torch.randint(len(tr), (bs,), generator=g).numpy()]
        for pg in opt.param_groups:
            pg["lr"] = lr_at(k)
        loss, _ = m.loss_acc(m(X[idx]), Y[idx])
        opt.zero_grad()
        loss.sum().backward()
        opt.step()


LOGS = Path(__file__).parent / "shortest_path_positions_logs"
KEPT = Path(__file__).parent / "kept" / "shortest_path_positions_far.json"


def _share(out: dict, prefix: str, key: str | None = None) -> str:
    """A distance's greedy share with its number of paths, read from the labels of one evaluation: the count is
    in the label starting with ``prefix`` (e.g. 'all test, d=3 (n=616)'), the share under ``key`` (default: that
    label itself); 'not measured' where the log has no such label."""
    label = next((k for k in out if isinstance(k, str) and k.startswith(prefix)), None)
    if label is None:
        return "not measured"
    return f"{out[key or label]:.3f} ({int(label.split('(n=')[1].rstrip(')')):,})"


def table(logs: list[Path]) -> tuple[list[str], list[list[str]]]:
    """The distance-3 table of the .md from kept logs of runs with ``"far": true``: each log's last evaluation
    (its first line is the command: the run's arguments)."""
    if not logs:
        raise SystemExit(f"--table: no logs in {LOGS}")
    columns = ["run", "graphs", "steps (cosine over)", "test loss", "token acc.", "greedy, test d = 3",
               "greedy, training d = 3", "greedy, test d = 4"]
    rows = []
    for log in logs:
        lines = log.read_text().splitlines()
        run = json.loads(lines[0].split("'")[1])
        last = next(line for line in reversed(lines) if line.startswith("step "))
        words = last.split()  # step N Ts test loss L acc A seq-correct by distance {...}
        out = ast.literal_eval(last.split("seq-correct by distance ", 1)[1])
        step = int(words[1])
        steps = f"{step / 1000:g}k" + (f" of {run['steps'] / 1000:g}k" if step != run["steps"] else "")
        rows.append([log.name.split("_")[0], f"{run.get('n_graphs', GRAPHS):,}", steps, words[5], words[7],
                     _share(out, "all test, d=3", "greedy path, d=3"), _share(out, "train greedy path, d=3"),
                     _share(out, "all test, d=4", "greedy path, d=4")])
    return columns, rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--table"]:  # the .md's table from the kept logs, kept beside the .md
        from pipeline_lib.build.kept_tables import keep

        logs = sorted(LOGS.glob("*.log"))
        print(keep(KEPT, *table(logs), ["python", "docs/diagnostics/shortest_path_positions.py", "--table"],
                   source=f"the last evaluation in each of {len(logs)} logs kept in {LOGS.relative_to(LOGS.parents[2])}/"))
    else:
        main(json.loads(sys.argv[1]))
