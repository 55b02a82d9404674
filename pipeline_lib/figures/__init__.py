"""Figures, one plug-in module per figure (``<figure name>.py``), each owning its config block, its
statistics and its plot.

A figure module declares, as plain literals read without importing it: ``NAME`` (the figure and
rule name), ``CONFIG`` (the YAML JSON-schema fragment of ``figures.<NAME>``, whose ``x-ref``
annotations name the runs and analysis entries it reads) and optionally ``EXTRA_OUTPUTS``. Its
``Params`` dataclass mirrors CONFIG's properties, and ``build(cfg, params, paths, outputs)`` reads
the artifacts, computes the numbers and returns ``(figure, stats)``; the figure stage saves both.
Shared helpers: :mod:`.style` (sizes, colours, seeds-and-median drawing) and :mod:`.reading`.

Figures read artifacts only: they never train or run a model.
"""
