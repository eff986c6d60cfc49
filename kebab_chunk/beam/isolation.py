# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``Isolated``: run a DoFn's ``process`` in a helper process with a time and memory budget.

Parsers and chunkers run on untrusted bytes. Wrapped in :class:`Isolated`, each element is
processed in a long-lived helper process; the worker waits at most ``timeout_s`` for the
result. A helper that overruns the budget is killed (``TimeoutError``), one that dies (a
crash in a native library, a stack overflow) raises ``BrokenProcessPool``; either way a
fresh helper serves the next element. Apply ``with_exception_handling()`` around it to turn
those exceptions into dead-letter rows.

Why not Beam's own ``with_exception_handling(use_subprocess=True)``: it starts its helper
with ``fork`` from the SDK worker, and on the multi-process and portable runners that
worker has gRPC threads running; a forked child then dies at random on gRPC's inherited
lock state ("Mutex::Fer with pending CondVar queueing"), so healthy documents became
``worker_crash`` rows in about one run of three. Here helpers come from a ``forkserver``
(a clean, single-threaded process started with exec; ``spawn`` where forkserver is not
available), which preloads this module, so a fresh helper costs a fork, not an interpreter.

The helper installs the memory guard (:func:`limit_memory`) before it runs anything: its
address space may grow by at most ``max_memory_mb`` MiB over its size at start, so an
allocation beyond that raises ``MemoryError`` inside the helper instead of exhausting the
machine. Only the wrapped DoFn's ``setup`` (once per helper) and ``process`` are called.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import apache_beam as beam
from apache_beam.internal import pickler

__all__ = ["Isolated", "limit_memory"]

_log = logging.getLogger(__name__)
#: Seconds to wait for a killed helper to be reaped.
_REAP_S = 5.0

# Set in the helper process by _init_helper; the worker never touches them.
_HELPER_FN: beam.DoFn | None = None


def _address_space_bytes() -> int | None:
    """This process's current virtual memory size, or None where /proc is unavailable."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def limit_memory(max_memory_mb: int | None) -> bool:
    """Cap this process's address space at its current size plus ``max_memory_mb`` MiB.

    Relative to the current size, because what a process maps but never touches (thread
    stacks, shared libraries) varies by runner. Returns False (and logs a warning) where
    ``RLIMIT_AS`` or ``/proc`` is unavailable, i.e. outside Linux. Never call it in a Beam
    worker itself: the cap would apply to the whole worker.
    """
    if max_memory_mb is None:
        return False
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        _log.warning("memory guard unavailable on this platform; --max-memory-mb ignored")
        return False
    current = _address_space_bytes()
    if current is None:  # pragma: no cover - macOS and others without /proc
        _log.warning("memory guard unavailable on this platform; --max-memory-mb ignored")
        return False
    soft = current + max_memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return True


def _init_helper(serialized_fn: bytes, max_memory_mb: int | None) -> None:
    """Helper-process initializer: memory guard first, then the DoFn's own setup."""
    global _HELPER_FN
    limit_memory(max_memory_mb)
    fn = pickler.loads(serialized_fn)
    fn.setup()
    _HELPER_FN = fn


def _ready() -> int:
    return os.getpid()


def _process(element: Any) -> list[Any]:
    assert _HELPER_FN is not None, "helper process not initialised"
    return list(_HELPER_FN.process(element) or ())


def _helper_context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # Replaces the default preload (['__main__']): the server imports only this module
        # (and so apache_beam), never the launching script.
        ctx.set_forkserver_preload([__name__])
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - Windows


class Isolated(beam.DoFn):
    """Wraps ``fn`` so every ``process`` call runs in a helper process (see module doc).

    Raises ``TimeoutError`` when an element takes longer than ``timeout_s`` and
    ``BrokenProcessPool`` when the helper dies; both after replacing the helper.
    """

    def __init__(self, fn: beam.DoFn, *, timeout_s: float, max_memory_mb: int | None) -> None:
        super().__init__()
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self._serialized_fn = pickler.dumps(fn)
        self._timeout_s = timeout_s
        self._max_memory_mb = max_memory_mb
        self._pool: ProcessPoolExecutor | None = None

    def setup(self) -> None:
        self._pool = None
        self._start()  # start-up is not charged to the first element's budget

    def _start(self) -> ProcessPoolExecutor:
        if self._pool is None:
            pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=_helper_context(),
                initializer=_init_helper,
                initargs=(self._serialized_fn, self._max_memory_mb),
            )
            try:
                pool.submit(_ready).result()
            except BrokenProcessPool:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            self._pool = pool
        return self._pool

    def process(self, element: Any) -> Iterator[Any]:
        pool = self._start()
        future = pool.submit(_process, element)
        try:
            results = future.result(timeout=self._timeout_s)
        except (FutureTimeout, BrokenProcessPool):
            self._stop(kill=True)
            raise
        yield from results

    def teardown(self) -> None:
        self._stop(kill=False)

    def _stop(self, *, kill: bool) -> None:
        """Shut the helper down; ``kill`` for one that is stuck or already broken."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())
        if kill:
            for proc in processes:
                proc.kill()
            for proc in processes:
                proc.join(_REAP_S)
        pool.shutdown(wait=not kill, cancel_futures=True)
