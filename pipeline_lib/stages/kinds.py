"""Which library module serves which config kind, as names only (nothing imported here).

A stage imports the module of the kind it is asked for at run time, and a rule's code-hash param
covers the stage and that module (``code_hash`` follows ``import`` statements, not these names), so
editing the transformer reruns the transformer runs and leaves the circuit runs alone, and the other
way round.
"""
from __future__ import annotations

import importlib

MODEL_MODULES = {
    "circuit": "pipeline_lib.models.circuit",
    "transformer": "pipeline_lib.models.transformer",
    "vit": "pipeline_lib.models.transformer",
}

DATASET_STAGES = {
    "sparse_modular_addition": "pipeline_lib.stages.dataset",
    "eureka_reasoning": "pipeline_lib.stages.dataset_eureka",
    "eureka_digits": "pipeline_lib.stages.dataset_eureka",
}


def model_module(kind: str):
    return importlib.import_module(MODEL_MODULES[kind])


def build_run_model(cfg, run: str, n_seeds: int | None = None):
    """The model a run trains (not initialised), for ``n_seeds`` seeds (default: the run's)."""
    rc = cfg.runs[run]
    mc = cfg.models[rc.model]
    n = len(rc.seeds) if n_seeds is None else n_seeds
    return model_module(mc.kind).build_model(mc, n, cfg.dataset_shape(rc.dataset), rc.attention)


def run_inputs(cfg, run: str, x):
    """Dataset ``x`` -> the input tensor of the run's model (token ids or image patches)."""
    mc = cfg.models[cfg.runs[run].model]
    return model_module(mc.kind).as_inputs(x, mc)
