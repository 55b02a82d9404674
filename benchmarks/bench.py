"""Benchmark of the training engine against a plain per-seed baseline: ``python benchmarks/bench.py``.

Every case (model x batch x seeds) runs in a fresh process, which times first the engine
(``engine.train_seeds``: the training steps plus the per-epoch train/test evaluation a run records,
and for the transformer its Q/K/V gradient and attention-histogram recording), then, in the same
process and conditions, the **baseline**: the same model written the way the papers' code trains it,
one plain ``nn.Module`` per seed (``nn.Embedding``/``nn.Linear``, batch-first tensors), one seed after
another, ``torch.optim.Adam``, and an evaluation of the whole training and test sets after every
epoch. The baseline starts from the engine's initialisation of the same seed, and
``tests/test_bench.py`` checks that it computes the engine model's function. The baseline trains its
seeds one after another, so its cost per seed-epoch does not depend on the number of seeds: it is
timed on ``min(seeds, 2)`` seeds. The first epoch of either (warm-up, allocations) is not timed.

The ratio is the baseline's time per seed-epoch over the engine's (for batch 32: the engine's
seed-steps/s over the baseline's, the same number). Peak RSS is the engine's (read before the
baseline runs). Models: ``circuit`` = the circuits paper's Fig. 5 model (p=4, T=12, d=32, h=128,
n_train=2048); ``reasoning`` = the Eureka reasoning transformer of the default config (1 layer,
d=32, 4 heads, n_train=4392, n_test=10249).

``--profile N`` then profiles N more epochs of each side (torch profiler, after a warm-up epoch): the
top operators, the engine's matrix-product time, and the ratio's *ceiling* (baseline time over the
engine's matrix products alone: the ratio if everything else took no time), and the *adapter
ceiling* (baseline time over the baseline's own matrix products: a seed-batched plain module keeps
every one of them, so this is its ratio if all else took no time and its products ran as fast as
the loop's); with ``--compiled`` the compiled adapter's profile and its ceiling over its own matrix
products.
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout: its examples/ (the plain circuit)
from examples.own_models.circuit import CircuitNet  # noqa: E402

# Fig. 5 model and data: p=4, T=12, k=5, n_train=2048, d=32, h=128 (config/config.yaml).
CIRCUIT = {
    "datasets": {"sma": {"task": "sparse_modular_addition", "p": 4, "T": 12, "k": 5, "n_train": 2048, "n_test": 1024}},
    "models": {"circuit": {"d": 32, "vocab": 4}},
    "runs": {"bench": {"dataset": "sma", "model": "circuit", "epochs": 1}},
}
# The default config's Eureka reasoning model: 1 layer, d=32, 4 heads, on all of {0..10}^4 (30% train).
REASONING = {
    "datasets": {"eureka_reasoning": {"task": "eureka_reasoning"}},
    "models": {"reasoning_tf": {"kind": "transformer", "d": 32, "n_heads": 4}},
    "runs": {"bench": {"dataset": "eureka_reasoning", "model": "reasoning_tf", "epochs": 1}},
}
CONFIGS = {"circuit": CIRCUIT, "reasoning": REASONING}
SEEDS = (1, 10, 50)
BATCHES = ("full", 32)
# epochs timed (after one warm-up epoch) per (model, batch): enough for a stable mean, minutes in all
EPOCHS = {("circuit", "full"): 100, ("circuit", 32): 3, ("reasoning", "full"): 4, ("reasoning", 32): 1}


# -- the baseline: one plain nn.Module per seed --------------------------------------------------------
class PlainCircuit(CircuitNet):
    """The circuit model (paper_text equations) as a plain module: the user-facing example
    ``examples/own_models/circuit.py``, started from a slot of the engine's model."""

    @torch.no_grad()
    def load_slot(self, m, i: int) -> "PlainCircuit":
        """Copy slot i of the engine's CircuitModel ``m``."""
        for dst, src in ((self.tok.weight, m.W_E[i]), (self.pos.weight, m.P[i]), (self.w_Q, m.w_Q[i]),
                         (self.value.weight, m.W_V[i]), (self.fc1.weight, m.W_1[i]), (self.fc2.weight, m.W_2[i].T),
                         (self.out.weight, m.unembed()[i])):
            dst.copy_(src)
        return self


class PlainBlock(nn.Module):
    """Pre-LN encoder layer: multi-head softmax attention with temperature tau, GELU MLP."""

    def __init__(self, d: int, heads: int, h: int, tau: float):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.o = nn.Linear(d, d, bias=False)
        self.fc1, self.fc2 = nn.Linear(d, h), nn.Linear(h, d)
        self.heads, self.tau = heads, tau

    def forward(self, z: torch.Tensor) -> torch.Tensor:  # (B, T, d)
        B, T, d = z.shape
        zn = self.ln1(z)
        q, k, v = (f(zn).view(B, T, self.heads, -1).transpose(1, 2) for f in (self.q, self.k, self.v))
        att = torch.softmax(q @ k.transpose(-1, -2) / self.tau, dim=-1)
        z = z + self.o((att @ v).transpose(1, 2).reshape(B, T, d))
        return z + self.fc2(F.gelu(self.fc1(self.ln2(z))))


class PlainTransformer(nn.Module):
    """The Eureka reasoning transformer (CLS token, learned positions, pre-LN layers) as a plain module."""

    def __init__(self, vocab: int, n_tokens: int, d: int, heads: int, depth: int, h: int, classes: int, tau: float):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.cls = nn.Parameter(torch.empty(d))
        self.pos = nn.Parameter(torch.empty(n_tokens + 1, d))
        self.blocks = nn.ModuleList(PlainBlock(d, heads, h, tau) for _ in range(depth))
        self.lnf, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, N) -> (B, C)
        z = self.tok(x)
        z = torch.cat([self.cls.expand(len(x), 1, -1), z], dim=1) + self.pos
        for block in self.blocks:
            z = block(z)
        return self.head(self.lnf(z[:, 0]))

    @torch.no_grad()
    def load_slot(self, m, i: int) -> "PlainTransformer":
        """Copy slot i of the engine's SeedTransformer ``m`` (per-head (d, e) maps -> one (d, d) Linear)."""
        per_head = lambda W: W.permute(1, 0, 2).reshape(W.shape[1], -1).T  # noqa: E731  (H, d, e) -> (H*e, d)
        self.tok.weight.copy_(m.W_E[i])
        self.cls.copy_(m.cls[i])
        self.pos.copy_(m.P[i])
        for layer, b in enumerate(self.blocks):
            b.ln1.weight.copy_(m.ln1_g[i, layer]), b.ln1.bias.copy_(m.ln1_b[i, layer])
            b.ln2.weight.copy_(m.ln2_g[i, layer]), b.ln2.bias.copy_(m.ln2_b[i, layer])
            for lin, W in ((b.q, m.W_Q), (b.k, m.W_K), (b.v, m.W_V)):
                lin.weight.copy_(per_head(W[i, layer]))
            b.o.weight.copy_(m.W_O[i, layer].reshape(-1, m.d).T)
            b.fc1.weight.copy_(m.W_1[i, layer].T), b.fc1.bias.copy_(m.b_1[i, layer])
            b.fc2.weight.copy_(m.W_2[i, layer].T), b.fc2.bias.copy_(m.b_2[i, layer])
        self.lnf.weight.copy_(m.lnf_g[i]), self.lnf.bias.copy_(m.lnf_b[i])
        self.head.weight.copy_(m.W_cls[i].T), self.head.bias.copy_(m.b_cls[i])
        return self


def plain_class(model) -> tuple[type, dict]:
    """The plain single-seed module class of an engine model (circuit paper_text or transformer) and
    its constructor's arguments."""
    if hasattr(model, "w_Q"):
        if model.architecture != "paper_text" or model.variant != "softmax":
            raise ValueError("the plain circuit baseline is the paper_text architecture with softmax attention")
        return PlainCircuit, dict(vocab=model.V, T=model.T, d=model.d, h=model.h, tau=model.tau)
    if model.variant != "softmax" or not hasattr(model, "W_E"):
        raise ValueError("the plain transformer baseline takes token inputs and softmax attention")
    return PlainTransformer, dict(vocab=model.W_E.shape[1], n_tokens=model.P.shape[1] - 1, d=model.d, heads=model.H,
                                  depth=model.L, h=model.W_1.shape[-1], classes=model.W_cls.shape[-1], tau=model.tau)


def plain_module(model, i: int) -> nn.Module:
    """A plain single-seed module equal to slot i of an engine model (circuit paper_text or transformer)."""
    cls, args = plain_class(model)
    return cls(**args).load_slot(model, i)


def adapter_model(model, compile: bool = False) -> nn.Module:
    """The plain module of an engine model, seed-batched by the workflow's ``module`` model kind (vmap over
    functional_call; with ``compile``, its model key ``compile: true``), every slot started from the
    engine model's slot."""
    from pipeline_lib.models.module import ModuleModel

    cls, args = plain_class(model)
    adapter = ModuleModel(cls, args, model.S, compile=compile)
    with torch.no_grad():
        for i in range(model.S):
            for name, p in plain_module(model, i).named_parameters():
                getattr(adapter, name)[i].copy_(p)
    return adapter


def train_plain(module: nn.Module, data: dict, batch, epochs: int, lr: float, betas, generator,
                on_epoch=None) -> list[tuple[float, float, float, float]]:
    """The papers' way: Adam, full batch or shuffled mini-batches, then train and test loss/accuracy
    of the whole sets after every epoch (read to the host, as a log line would)."""
    x_tr, y_tr, x_te, y_te = data["x_train"], data["y_train"], data["x_test"], data["y_test"]
    opt = torch.optim.Adam(module.parameters(), lr=lr, betas=betas)
    N = len(x_tr)
    B = N if batch == "full" else batch
    log = []
    for epoch in range(epochs):
        perm = torch.arange(N) if batch == "full" else torch.randperm(N, generator=generator)
        for j in range(0, N, B):
            idx = perm[j:j + B]
            loss = F.cross_entropy(module(x_tr[idx]), y_tr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            row = []
            for x, y in ((x_tr, y_tr), (x_te, y_te)):
                logits = module(x)
                row += [F.cross_entropy(logits, y).item(), (logits.argmax(-1) == y).float().mean().item()]
        log.append(tuple(row))
        if on_epoch is not None:
            on_epoch(epoch)
    return log


# -- one case ------------------------------------------------------------------------------------------
def _setup(model_name: str, seeds: int, batch, epochs: int, device: str):
    from pipeline_lib.models import build_run_model, run_inputs
    from pipeline_lib.plumbing.config import load_config

    raw = json.loads(json.dumps(CONFIGS[model_name]))
    raw["device"] = device
    raw["runs"]["bench"].update(epochs=epochs, batch_size=batch, seeds=seeds, log_every=10**9)
    cfg = load_config(raw)
    spec = cfg.run_spec("bench")
    if model_name == "circuit":
        from pipeline_lib.tasks.sma import sparse_modular_addition

        d = cfg.params("task", "sma")
        data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    else:
        from pipeline_lib.tasks.eureka_reasoning import eureka_reasoning

        data = eureka_reasoning()
    tensors = {k: run_inputs(spec, v) for k, v in dict(
        x_train=data.x_train, x_test=data.x_test, probe_x=data.x_test[:8], stats_x=data.x_test[:256]).items()}
    tensors.update(y_train=torch.as_tensor(data.y_train), y_test=torch.as_tensor(data.y_test))
    model = build_run_model(spec)
    model.init_seeds(list(spec.seeds))
    return cfg.runs["bench"], spec, tensors, model


# matrix products: what the arithmetic of a step costs at best on this device
MATMUL_OPS = frozenset({"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::addbmm", "aten::_addmm_activation",
                        "aten::mv", "aten::addmv", "aten::addmv_", "aten::dot"})


OUTSIDE = "(between operators: Python, untraced)"  # the profiler's step span, less its operators


def _profiled(run, epochs: int, seeds: int, top: int, wait: int, cuda: bool) -> dict:
    """Profile ``epochs`` epochs of ``seeds`` seeds with the torch profiler: ``run(on_epoch)`` trains and
    calls ``on_epoch`` once per epoch boundary; the first ``wait`` intervals and one warm-up interval
    (allocations) are not recorded. Returns the ``top`` operators by self time (ms per seed-epoch,
    calls per epoch) and the matrix products' time. The profiler adds a few microseconds per operator,
    so totals of many small operators read high; the matrix products' self time is their kernels'.
    With ``cuda`` the times are the GPU kernels' of each operator (the operator rows carry them; the
    kernel rows themselves are left out so that nothing counts twice)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile, schedule

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts, schedule=schedule(wait=wait, warmup=1, active=epochs, repeat=1)) as prof:
        run(lambda *_: prof.step())
    events = [e for e in prof.key_averages() if e.device_type == DeviceType.CPU]
    attr = "self_device_time_total" if cuda else "self_cpu_time_total"
    steps = [e for e in events if e.key.startswith("ProfilerStep")]
    per = lambda us: us / 1000 / (epochs * seeds)  # noqa: E731  (profiler reports microseconds)
    ranked = sorted(events, key=lambda e: -getattr(e, attr))[:top]
    return {"epochs_recorded": steps[0].count if steps else 0,
            "total_ms": per(sum(getattr(e, attr) for e in events)),
            "matmul_ms": per(sum(getattr(e, attr) for e in events if e.key in MATMUL_OPS)),
            "top": [[OUTSIDE if e.key.startswith("ProfilerStep") else e.key, per(getattr(e, attr)), e.count / epochs]
                    for e in ranked]}


def run_case(model_name: str, seeds: int, batch, epochs: int, threads: int, device: str, baseline: bool = True,
             profile_epochs: int = 0, top: int = 12, adapter: bool = False, compiled: bool = False) -> dict:
    """Time one case; with ``profile_epochs``, afterwards profile that many more epochs of each side
    (the timing itself is never profiled) and add where the time goes and the ratio's ceiling. With
    ``adapter``, also the plain module seed-batched by the ``module`` model kind; with ``compiled``, also
    that compiled (its first epoch, not timed, holds the compilation: reported as ``compile_s``)."""
    from pipeline_lib.engine import train_seeds
    from pipeline_lib.models import seed_generator
    from pipeline_lib.plumbing.config import TrainingPlan
    from pipeline_lib.plumbing.device import resolve_device, tune_allocator

    tune_allocator()
    torch.set_num_threads(threads)
    rc, spec, tensors, model = _setup(model_name, seeds, batch, epochs + 1, device)
    dev = resolve_device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    n_train = len(tensors["x_train"])
    steps = 1 if batch == "full" else math.ceil(n_train / batch)
    stamps: dict[int, float] = {}

    def stamp(epoch, _=None):
        sync()
        stamps[epoch] = time.perf_counter()

    def seed_epoch_s(m) -> float:
        """Train ``m`` with the engine (its first epoch, warm-up, untimed): seconds per seed-epoch of epochs
        2..E+1, steps + evaluation."""
        stamps.clear()
        train_seeds(m.to(dev), tensors, TrainingPlan.of(rc), dev, callback=stamp)
        return (stamps[epochs + 1] - stamps[1]) / (epochs * seeds)

    plain = [plain_module(model, i) for i in range(min(seeds, 2))] if baseline else []  # from the initialisation
    adapted = adapter_model(model) if adapter else None
    compiled_adapter = adapter_model(model, compile=True) if compiled else None
    engine_s = seed_epoch_s(model)
    row = {"model": model_name, "seeds": seeds, "batch": batch, "device": str(dev), "threads": threads,
           "epochs_timed": epochs, "steps_per_epoch": steps,
           "engine_ms_per_seed_epoch": 1000 * engine_s, "engine_seed_steps_per_s": steps / engine_s,
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if adapter:  # the same loop and plan, the model being the plain module under vmap
        adapter_s = seed_epoch_s(adapted)
        row.update(adapter_ms_per_seed_epoch=1000 * adapter_s, engine_over_adapter=adapter_s / engine_s)
    if compiled:
        start = time.perf_counter()
        compiled_s = seed_epoch_s(compiled_adapter)
        # the compilations (training step and each evaluation's shapes) all happen before epoch 1 ends
        row.update(compiled_ms_per_seed_epoch=1000 * compiled_s, compile_s=stamps[1] - start - compiled_s * seeds,
                   engine_over_compiled=compiled_s / engine_s)
    if baseline:
        per_seed = []
        data = {k: tensors[k].to(dev) for k in ("x_train", "y_train", "x_test", "y_test")}
        for i in range(min(seeds, 2)):
            module = plain[i].to(dev)
            stamps.clear()
            train_plain(module, data, batch, epochs + 1, rc.optimizer.lr, rc.optimizer.betas,
                        seed_generator(rc.seeds[i], "data"), on_epoch=stamp)
            per_seed.append((stamps[epochs] - stamps[0]) / epochs)
        base_s = sum(per_seed) / len(per_seed)
        row.update(baseline_ms_per_seed_epoch=1000 * base_s, baseline_seed_steps_per_s=steps / base_s,
                   ratio=base_s / engine_s)
        if adapter:
            row["adapter_ratio"] = base_s / adapter_s
        if compiled:
            row["compiled_ratio"] = base_s / compiled_s
    if profile_epochs:
        import dataclasses

        cuda = dev.type == "cuda"
        short = dataclasses.replace(rc, epochs=profile_epochs + 1)  # + the warm-up epoch, not recorded
        # the engine calls back after each epoch's evaluation, first before any step (wait=1 skips that)
        row["engine_profile"] = _profiled(
            lambda cb: train_seeds(model, tensors, TrainingPlan.of(short), dev, callback=cb), profile_epochs, seeds,
            top, wait=1, cuda=cuda)
        if baseline:
            row["baseline_profile"] = _profiled(
                lambda cb: train_plain(plain[0], data, batch, short.epochs, rc.optimizer.lr, rc.optimizer.betas,
                                       seed_generator(rc.seeds[0], "data"), on_epoch=cb), profile_epochs, 1, top, wait=0,
                cuda=cuda)
            # the ratio if everything but the engine's matrix products took no time
            row["ratio_ceiling"] = row["baseline_ms_per_seed_epoch"] / row["engine_profile"]["matmul_ms"]
            # a seed-batched plain module (the adapter) keeps every matrix product of the plain module:
            # its ratio if all else took no time and its products ran as fast as the baseline's
            row["adapter_ceiling"] = row["baseline_ms_per_seed_epoch"] / row["baseline_profile"]["matmul_ms"]
        if compiled:
            row["compiled_profile"] = _profiled(
                lambda cb: train_seeds(compiled_adapter, tensors, TrainingPlan.of(short), dev, callback=cb),
                profile_epochs, seeds, top, wait=1, cuda=cuda)
            if baseline:  # the same with the compiled adapter's own matrix products
                row["compiled_ceiling"] = row["baseline_ms_per_seed_epoch"] / row["compiled_profile"]["matmul_ms"]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", nargs="+", default=sorted(CONFIGS), choices=sorted(CONFIGS), help="models to time")
    ap.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS), help="seed counts (default 1 10 50)")
    ap.add_argument("--batch", nargs="+", default=[str(b) for b in BATCHES], help="'full' and/or integers")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the workflow's default per job: 1)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--epochs", type=int, default=None, help="epochs timed per case (default: per model and batch)")
    ap.add_argument("--no-baseline", action="store_true", help="time the engine only")
    ap.add_argument("--adapter", action="store_true",
                    help="also time the plain module seed-batched by the module model kind (vmap), same loop and plan")
    ap.add_argument("--compiled", action="store_true",
                    help="also time the adapter compiled (the module model key compile: true); its first epoch "
                         "holds the compilation and is reported, not timed")
    ap.add_argument("--json", action="store_true", help="print one JSON line per case instead of a table")
    ap.add_argument("--profile", type=int, default=0, metavar="EPOCHS",
                    help="after timing, profile this many epochs of each side (torch profiler): the top operators, "
                         "the matrix products' time and the ratio's ceiling if all else were free")
    ap.add_argument("--keep", metavar="NAME",
                    help="also write the rows with the command, machine and date to docs/bench/NAME.json, from which "
                         "`python -m pipeline_lib publish` fills docs/performance.md's block of that name")
    ap.add_argument("--one", nargs=3, metavar=("MODEL", "SEEDS", "BATCH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    from pipeline_lib.build import bench_page  # the tables and --keep; not in a case's process (--one)

    if args.profile < 0:
        ap.error(f"--profile takes a number of epochs >= 0, got {args.profile}")
    if args.keep:
        try:
            bench_page.check_name(args.keep)
        except ValueError as err:
            ap.error(str(err))
    as_batch = lambda b: "full" if str(b) == "full" else int(b)  # noqa: E731
    if args.one:
        model_name, seeds, batch = args.one[0], int(args.one[1]), as_batch(args.one[2])
        epochs = args.epochs or EPOCHS.get((model_name, batch), EPOCHS[(model_name, 32)])
        print(json.dumps(run_case(model_name, seeds, batch, epochs, args.threads, args.device, not args.no_baseline,
                                  profile_epochs=args.profile, adapter=args.adapter, compiled=args.compiled)))
        return 0
    rows = []
    for model_name in args.model:
        for batch in map(as_batch, args.batch):
            for seeds in args.seeds:
                cmd = [sys.executable, __file__, "--one", model_name, str(seeds), str(batch),
                       "--threads", str(args.threads), "--device", args.device]
                cmd += (["--epochs", str(args.epochs)] if args.epochs else []) + (["--no-baseline"] if args.no_baseline else [])
                cmd += ["--profile", str(args.profile)] if args.profile else []
                cmd += ["--adapter"] if args.adapter else []
                cmd += ["--compiled"] if args.compiled else []
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode:
                    sys.stderr.write(out.stderr)
                    raise SystemExit(f"bench case {model_name} batch {batch} seeds {seeds} failed")
                row = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append(row)
                print(json.dumps(row) if args.json else
                      f"{model_name} batch {batch} seeds {seeds}: ratio {row.get('ratio', float('nan')):.1f}x",
                      file=sys.stdout if args.json else sys.stderr, flush=True)
    if not args.json:
        print(f"engine vs plain per-seed baseline, device {rows[0]['device']}, {rows[0]['threads']} thread(s); "
              "per epoch = training steps + train/test evaluation\n")
        print(bench_page.table(rows))
        if args.profile:
            print(bench_page.profiles(rows))
    if args.keep:
        argv = sys.argv[1:] if argv is None else list(argv)
        print(f"kept {bench_page.keep(args.keep, rows, argv, ROOT).relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
