"""Feed the terminal progress line from the pipeline (DirectRunner in-memory runs).

The DoFns run in the launching process there, so they can tell the active
:class:`~kebab_chunk.report.progress.Progress` reporter about matched and finished files.
On other runners (or off a TTY, or in CI) the calls are no-ops; Beam metrics carry the same
counts everywhere. The transform has no output: it only observes.
"""

from __future__ import annotations

from typing import Any

import apache_beam as beam

from kebab_chunk.report.progress import note_done, note_matched

__all__ = ["ReportProgress"]


def _matched(_: Any) -> None:
    note_matched()


def _done(_: Any) -> None:
    note_done()


def _failed(_: Any) -> None:
    note_done(error=True)


class ReportProgress(beam.PTransform[dict[str, Any], None]):
    """Observe ``files`` (matched), ``outcomes`` (documents done) and ``file_errors``."""

    def expand(self, inputs: dict[str, Any]) -> None:
        _ = inputs["files"] | "Note matched files" >> beam.Map(_matched)  # type: ignore[no-untyped-call]
        _ = inputs["outcomes"] | "Note finished documents" >> beam.Map(_done)  # type: ignore[no-untyped-call]
        _ = inputs["file_errors"] | "Note failed files" >> beam.Map(_failed)  # type: ignore[no-untyped-call]
