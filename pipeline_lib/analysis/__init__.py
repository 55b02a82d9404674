"""Analyses of trained runs, one plug-in module each (see ``pipeline_lib.plumbing.registry``): a module's
``compute(cfg, name, params, paths, threads)`` reads its inputs through ``paths`` and returns the
artifact's data; the generic stage (``stages.analysis``) writes it with its provenance.
``clusters`` is a helper, not an analysis."""
