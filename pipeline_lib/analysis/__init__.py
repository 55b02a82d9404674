"""Analyses of trained runs: pure functions on arrays and models (no files; stages do the I/O)."""
