"""Fuzz harness for every parser (issue 7, item 5); run it with ``./run_local.sh fuzz``.

See :mod:`fuzz.__main__` for the engines and :mod:`fuzz.targets` for what counts as a crash.
"""
