"""The training stages' view of the engine's loop: a progress bar on a terminal and a plain log line
every ``log_every`` epochs (or steps), the failure logged with its traceback."""
from __future__ import annotations

import time

from tqdm import tqdm

from ..engine import train_seeds
from ..plumbing.config import TrainingPlan
from ..recording import Recording


def train_with_progress(model, data: dict, plan: TrainingPlan, device, log, unit: str = "epoch",
                        **engine) -> Recording:
    """The engine's loop (``engine.train_seeds`` with the ``engine`` keywords) with a progress bar on a
    terminal and a plain line every log_every epochs (``unit``: "step" for a run of fresh samples)."""
    bar = tqdm(total=plan.epochs + 1, desc=plan.name, unit=unit, disable=None, mininterval=1.0)
    t0 = time.perf_counter()

    def callback(epoch: int, metrics: dict | None) -> None:
        bar.update(1)
        if metrics is not None:
            bar.set_postfix(loss=f"{metrics['train_loss']:.3f}", test_acc=f"{metrics['test_acc']:.3f}")
            log.info(f"{unit} {epoch}: " + " ".join(f"{k}={v:.4f}" for k, v in metrics.items())
                     + f" ({time.perf_counter() - t0:.1f} s)")

    try:
        rec = train_seeds(model, data, plan, device, callback=callback, **engine)
    except BaseException:
        log.exception("training failed")
        raise
    finally:
        bar.close()
    n_div = int((rec.diverged_epoch >= 0).sum())
    log.info(f"done in {time.perf_counter() - t0:.1f} s; diverged slots: {n_div}/{len(rec.diverged_epoch)}")
    return rec
