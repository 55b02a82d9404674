"""Benchmark of the training engine: ``python -m pipeline_lib.bench [--model fig5|reasoning]``.

Times ``engine.train_seeds`` (training steps plus the per-epoch train/test evaluation a run does,
and for the transformer the recording of Q/K/V gradients and attention histograms), each
configuration in a fresh process so that its peak RSS is its own. The first epoch (warm-up,
allocations) is excluded from the timing. ``fig5``: the circuit model of Fig. 5, 1 and 10 seeds at
batch 32 and full batch (2048). ``reasoning``: the default config's Eureka reasoning transformer,
10 seeds at batch 256 and full batch (4392), on its one-layer fast path and on the direct form.
Prints a Markdown table; ``--json`` prints one JSON object per configuration instead.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

# Fig. 5 model and data: p=4, T=12, k=5, n_train=2048, d=32, h=128 (config/config.yaml).
FIG5 = {
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
MODELS = {"fig5": (FIG5, [(1, 32, "fast"), (10, 32, "fast"), (1, "full", "fast"), (10, "full", "fast")]),
          "reasoning": (REASONING, [(10, 256, "fast"), (10, "full", "fast"), (10, 256, "direct"),
                                    (10, "full", "direct")])}


def run_one(model_name: str, seeds: int, batch, path: str, epochs: int, threads: int, device: str) -> dict:
    import torch

    from .config import load_config
    from .engine import resolve_device, train_seeds, tune_allocator
    from .models import build_run_model, run_inputs

    tune_allocator()
    torch.set_num_threads(threads)
    raw = json.loads(json.dumps(MODELS[model_name][0]))
    raw["device"] = device
    raw["runs"]["bench"].update(epochs=epochs, batch_size=batch, seeds=seeds, log_every=10**9)
    cfg = load_config(raw)
    rc = cfg.runs["bench"]
    if model_name == "fig5":
        from .tasks.sma import sparse_modular_addition

        d = cfg.params("task", "sma")
        data = sparse_modular_addition(d.p, d.T, d.k, d.n_train, d.n_test, d.seed)
    else:
        from .tasks.eureka_reasoning import eureka_reasoning

        data = eureka_reasoning()
    spec = cfg.run_spec("bench")
    tensors = {k: run_inputs(spec, v) for k, v in dict(
        x_train=data.x_train, x_test=data.x_test, probe_x=data.x_test[:8], stats_x=data.x_test[:256]).items()}
    tensors.update(y_train=torch.as_tensor(data.y_train), y_test=torch.as_tensor(data.y_test))
    n_train = len(data.x_train)
    dev = resolve_device(device)
    model = build_run_model(spec)
    model.init_seeds(list(rc.seeds))
    model.to(dev)
    if path == "direct":  # the literal form the fast path is tested against
        model.forward = lambda x: model.internals(x).logits
    stamps: dict[int, float] = {}

    def callback(epoch, _):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        stamps[epoch] = time.perf_counter()

    train_seeds(model, tensors, rc, list(rc.seeds), dev, callback=callback)
    seconds = stamps[epochs] - stamps[1]  # epochs 2..E, each: training steps + evaluation
    steps_per_epoch = 1 if batch == "full" else -(-n_train // batch)
    n_epochs = epochs - 1
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "model": model_name, "path": path, "seeds": seeds, "batch": batch, "device": str(dev), "threads": threads,
        "ms_per_epoch": 1000 * seconds / n_epochs,
        "ms_per_step": 1000 * seconds / (n_epochs * steps_per_epoch),
        "seed_steps_per_s": seeds * n_epochs * steps_per_epoch / seconds,
        "ms_per_seed_epoch": 1000 * seconds / (n_epochs * seeds),
        "peak_rss_mb": rss_mb,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="fig5", choices=sorted(MODELS), help="which model to time")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run (the workflow's default: 1)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--epochs-full", type=int, default=None, help="epochs timed at full batch (default 200, reasoning 10)")
    ap.add_argument("--epochs-mini", type=int, default=None, help="epochs timed in mini-batches (default 4)")
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    ap.add_argument("--one", nargs=3, metavar=("SEEDS", "BATCH", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    epochs_full = args.epochs_full or (200 if args.model == "fig5" else 10)
    epochs_mini = args.epochs_mini or 4
    if args.one:
        seeds, batch, path = int(args.one[0]), args.one[1], args.one[2]
        batch = "full" if batch == "full" else int(batch)
        epochs = epochs_full if batch == "full" else epochs_mini
        print(json.dumps(run_one(args.model, seeds, batch, path, epochs + 1, args.threads, args.device)))
        return 0
    rows = []
    for seeds, batch, path in MODELS[args.model][1]:
        cmd = [sys.executable, "-m", "pipeline_lib.bench", "--model", args.model, "--one", str(seeds), str(batch),
               path, "--threads", str(args.threads), "--device", args.device,
               "--epochs-full", str(epochs_full), "--epochs-mini", str(epochs_mini)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
    if not args.json:
        what = ("Fig. 5 model (p=4, T=12, d=32, n_train=2048)" if args.model == "fig5" else
                "Eureka reasoning transformer (1 layer, d=32, 4 heads, n_train=4392)")
        print(f"{what}, device {rows[0]['device']}, {rows[0]['threads']} thread(s); "
              "per epoch = training steps + train/test evaluation\n")
        print("| seeds | batch | path | ms/step | ms/epoch | seed-steps/s | ms per seed-epoch | peak RSS (MB) |")
        print("|---:|---:|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['seeds']} | {r['batch']} | {r['path']} | {r['ms_per_step']:.2f} | {r['ms_per_epoch']:.0f} | "
                  f"{r['seed_steps_per_s']:.0f} | {r['ms_per_seed_epoch']:.2f} | {r['peak_rss_mb']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
