"""The log file of a job (a logger per path, written from the start of the job)."""
from __future__ import annotations

import logging
from pathlib import Path


def job_logger(log_path: str | None) -> logging.Logger:
    log = logging.getLogger(f"pipeline_lib.train.{log_path}")
    log.setLevel(logging.INFO)
    log.propagate = False
    if log_path and not log.handlers:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_path, mode="w")
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(handler)
    return log
