"""The plumbing: what turns a config into jobs and files, and computes no number of an artifact.

Config loading, schema and checks (``config``, ``config_schema``, ``config_checks``, ``errors``,
``values``, ``refs``), the plug-in registry, each job's inputs and code hash (``jobs``, ``codehash``,
``equivalence``), artifact paths and I/O (``paths``, ``store``), lineage, the replicate's config and the
golden digests. No module here enters a code hash (:func:`.codehash.is_plumbing`): what the plumbing
passes on to a computation (a default, a resolved value) is part of the job's config slice instead.
"""
