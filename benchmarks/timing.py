"""Small timing helpers: median of repeated runs with fresh objects each run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(run: Callable[[], object], repeats: int = 3) -> float:
    """Median wall time of ``repeats`` calls of ``run`` (each builds its own objects)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
