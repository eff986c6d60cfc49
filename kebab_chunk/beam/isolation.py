# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Parse and chunk work in a helper process, as a Beam DoFn.

:class:`IsolatedDoFn` hands each element to a helper process through the supervisor of
:mod:`kebab_chunk.runtime.supervisor` (:class:`IsolatedRunner`: streaming, per-stage time
budgets, the memory guard, a killed or crashed helper replaced) and emits what comes back
with the window and timestamp of the element it came from. Everything but that wiring uses
no Beam and lives in :mod:`kebab_chunk.runtime`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.utils.windowed_value import WindowedValue

from kebab_chunk.runtime.gc_freeze import freeze_process
from kebab_chunk.runtime.helper import HelperTask
from kebab_chunk.runtime.supervisor import Finished, InlineRunner, IsolatedRunner

__all__ = ["IsolatedDoFn"]


class IsolatedDoFn(beam.DoFn):
    """A DoFn whose work (``task``) runs in a helper process; subclasses define ``outputs``.

    Results arrive after later elements were submitted, or in ``finish_bundle``, so every
    output is emitted with the window and timestamp of the element it came from.
    ``budgets_s``: per stage; ``isolate=False`` runs the task in the worker (measuring only).
    """

    def __init__(
        self,
        task: HelperTask,
        *,
        budgets_s: Sequence[float],
        max_memory_mb: int | None,
        isolate: bool = True,
    ) -> None:
        super().__init__()
        self._task = task
        self._budgets_s = tuple(budgets_s)
        self._max_memory_mb = max_memory_mb
        self._isolate = isolate
        self._runner: IsolatedRunner | InlineRunner | None = None

    def outputs(self, done: Finished) -> Iterable[Any]:
        """The outputs (values or ``TaggedOutput``) for one finished element."""
        raise NotImplementedError

    def setup(self) -> None:
        freeze_process()  # a runner's SDK worker: what it holds now lives as long as it does
        if self._isolate:
            self._runner = IsolatedRunner(
                self._task, budgets_s=self._budgets_s, max_memory_mb=self._max_memory_mb
            )
        else:
            self._runner = InlineRunner(self._task)
        self._runner.start()

    def process(
        self,
        element: Any,
        timestamp: Any = beam.DoFn.TimestampParam,
        window: Any = beam.DoFn.WindowParam,
    ) -> Iterator[Any]:
        assert self._runner is not None
        for done in self._runner.submit(element, (timestamp, (window,))):
            yield from self._windowed(done)

    def finish_bundle(self) -> Iterator[Any]:
        assert self._runner is not None
        for done in self._runner.drain():
            yield from self._windowed(done)

    def teardown(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def _windowed(self, done: Finished) -> Iterator[Any]:
        timestamp, windows = done.context
        for out in self.outputs(done):
            if isinstance(out, pvalue.TaggedOutput):
                yield pvalue.TaggedOutput(out.tag, WindowedValue(out.value, timestamp, windows))
            else:
                yield WindowedValue(out, timestamp, windows)
