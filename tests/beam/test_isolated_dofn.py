"""IsolatedDoFn (kebab_chunk.beam.isolation), the Beam wiring of the helper supervisor: every
output keeps the window and timestamp of the element it came from, even when it is emitted
later (tests/runtime/test_supervisor.py tests the supervisor itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms import window

from kebab_chunk.beam.isolation import IsolatedDoFn
from kebab_chunk.runtime.supervisor import Finished
from tests.beam.helpers import quiet_beam
from tests.runtime.supervisor_tasks import ScriptedTask

quiet_beam()


class _NameFn(IsolatedDoFn):
    def outputs(self, done: Finished) -> Iterator[Any]:
        if done.failure is None:
            yield done.result[0]
        else:
            yield beam.pvalue.TaggedOutput("failed", done.element[0])


def test_outputs_keep_the_window_and_timestamp_of_their_element() -> None:
    names = [(f"e{i}", "ok") for i in range(12)]
    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create([(n, 10 * i) for i, n in enumerate(names)])
            | "Stamp" >> beam.Map(lambda e: window.TimestampedValue(e[0], e[1]))
            | beam.WindowInto(window.FixedWindows(30))
            | beam.ParDo(
                _NameFn(ScriptedTask(), budgets_s=(30.0,), max_memory_mb=None)
            ).with_outputs("failed", main="names")
        )
        stamped = out.names | beam.Map(
            lambda name, ts=beam.DoFn.TimestampParam, w=beam.DoFn.WindowParam: (
                name,
                int(ts),
                int(w.start),
            )
        )
        assert_that(
            stamped,
            equal_to([(f"e{i}", 10 * i, 30 * (i // 3)) for i in range(12)]),
            label="timestamps and windows",
        )
        assert_that(out.failed, equal_to([]), label="no failures")
