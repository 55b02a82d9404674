"""The build-time wing: what the DAG and a maintainer's commands need, and nothing a job runs.

``lock`` (each module's digest and label, the lock file ``pipeline_lib/code.lock``), ``codes`` (each job's code
param), ``verify`` (the ``lock`` command: a change verified on the test config before it is recorded), ``golden``
(digests of the test config's artifacts, per machine), ``cost`` and ``publish`` (what a finished run cost, the
ledgers and the README's generated blocks). The run-time layer (``pipeline_lib.plumbing``) and the hashed modules
never import this package (``tests/test_lock.py``).
"""
