"""Optimizer plug-ins: one module each, named by a run's ``optimizer.name`` (besides torch's adam,
adamw and sgd, which the engine builds itself).

A module declares ``NAME`` and ``CONFIG`` (the JSON-schema fragment of its own keys of a run's
``optimizer`` block, without defaults: its ``Params`` holds them) and defines ``Params`` and
``build(params, opt_cfg) -> torch.optim.Optimizer`` for seed-batched parameters (a leading seed axis;
the update of seed i must depend on seed i alone). Only runs that name a plug-in have its module in
their code hash.
"""
