"""Benchmarks: run with ``./run_local.sh bench`` (never part of the test suite)."""
