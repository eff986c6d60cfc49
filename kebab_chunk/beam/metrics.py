# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Beam metric names, in one place so the manifest and the counters stay in step.

Every count in ``manifest.json`` has a counter in the ``kebab_chunk`` namespace with the
same meaning, e.g. ``documents_chunked``, ``chunks[md-heading-v1]``,
``errors[parse/binary_content]``, ``files[application/pdf]``. They show up live in the
Dataflow / Flink UI while the job runs; the manifest is the durable record.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from apache_beam.metrics.metric import Metrics

__all__ = ["NAMESPACE", "WORKER_PID", "inc", "keyed", "record_worker"]

NAMESPACE = "kebab_chunk"
#: Distribution of the process ids that read input files. ``min != max`` means more than
#: one worker process did work, which is how the tests check that a runner parallelised.
WORKER_PID = "worker_pid"


def keyed(name: str, key: str) -> str:
    """The counter name for one key of a keyed count, e.g. ``chunks[md-heading-v1]``."""
    return f"{name}[{key}]"


@functools.lru_cache(maxsize=1024)
def _counter(name: str) -> Any:
    # A metric object only names the metric: each update goes to the container of the
    # bundle running at that moment, so one object per name serves every bundle (making
    # one per update was a visible share of the worker's CPU per document).
    return Metrics.counter(NAMESPACE, name)


def inc(name: str, n: int = 1) -> None:
    """Add ``n`` to the counter ``kebab_chunk/<name>``."""
    _counter(name).inc(n)


_WORKERS = Metrics.distribution(NAMESPACE, WORKER_PID)


def record_worker() -> None:
    """Record the current process id in the :data:`WORKER_PID` distribution."""
    _WORKERS.update(os.getpid())
