# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""The pipeline's side of the progress bar: what the launcher counts, what the DoFns report.

The bar (:class:`~kebab_chunk.report.progress.Progress`) lives in the launching process.
:func:`launch_progress` picks what it can show:

* DoFns run in the launching process (the DirectRunner in memory or with threads): the
  launcher counts the local files a run will read (the same match pattern and file filter
  as ``ReadCorpus``), and :class:`ReportProgress` feeds each file's outcome and error rows
  to the bar as they happen, so it shows files done of the total, the rate, the ETA and
  the failed files so far. A remote corpus (``gs://``, ``s3://``) is not listed twice:
  the bar then counts without a total.
* DoFns run elsewhere (Flink, Spark, Dataflow, Prism, the multi-processing DirectRunner):
  nothing they count can reach the launcher before the run ends, so the bar shows the
  elapsed time only; the run's summary prints the manifest's counts at the end.

Off a terminal, or in CI, nothing is drawn and nothing is counted up front.

:func:`worker_log_args` keeps the DirectRunner's worker processes (multi-processing mode)
at the launcher's log level, so their INFO records stay off the terminal unless the
launcher shows INFO (``--verbose``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TextIO

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import (
    DirectOptions,
    PipelineOptions,
    StandardOptions,
    WorkerOptions,
)
from apache_beam.pvalue import PCollection

from kebab_chunk.beam.locations import CorpusLocation
from kebab_chunk.beam.read import selected_files
from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.report.progress import Progress, note_done, note_error, progress_enabled

__all__ = [
    "ReportProgress",
    "count_selected_files",
    "counts_in_launcher",
    "launch_progress",
    "worker_log_args",
]

#: ``--runner`` values (lower case, without a ``runner`` suffix) whose DoFns can run in the
#: launching process.
_IN_PROCESS_RUNNERS = frozenset({"direct", "switchingdirect", "bundlebaseddirect"})


def _runner_name(options: PipelineOptions) -> str:
    runner = options.view_as(StandardOptions).runner
    if runner is None:
        return "DirectRunner"
    return runner if isinstance(runner, str) else type(runner).__name__


def counts_in_launcher(options: PipelineOptions) -> bool:
    """Whether the run's DoFns execute in this process, so they can feed the bar."""
    if not _is_direct(options):
        return False
    return bool(options.view_as(DirectOptions).direct_running_mode != "multi_processing")


def _is_direct(options: PipelineOptions) -> bool:
    return _runner_name(options).lower().removesuffix("runner") in _IN_PROCESS_RUNNERS


def worker_log_args(options: PipelineOptions) -> list[str]:
    """Beam arguments that make the DirectRunner's SDK workers log at the launcher's level.

    Its multi-processing workers are Python processes that log at INFO to the terminal by
    default. Unless the user chose ``--default_sdk_harness_log_level``, they get the
    launcher's effective level (WARNING, or INFO with ``--verbose``). Other runners are
    left alone: Java job servers refuse the Python level names, and their workers log
    elsewhere.
    """
    if not _is_direct(options) or options.view_as(WorkerOptions).default_sdk_harness_log_level:
        return []
    level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
    return [f"--default_sdk_harness_log_level={level}"]


def count_selected_files(
    corpus: CorpusLocation, corpus_filter: CorpusFilter | None = None
) -> int | None:
    """How many files ``ReadCorpus`` will read from a local corpus; None if it is remote.

    The same listing and filter as ``ReadCorpus`` (:func:`~kebab_chunk.beam.read.selected_files`);
    entries only its walk records (dangling links, unreadable folders) are not counted.
    """
    if any(FileSystems.get_scheme(part.pattern) is not None for part in corpus.inputs):
        return None
    return len(selected_files(corpus, corpus_filter))


def launch_progress(
    options: PipelineOptions,
    count_files: Callable[[], int | None],
    *,
    stream: TextIO | None = None,
    enabled: bool | None = None,
) -> Progress:
    """The bar for one run (module docstring); enter it and ``activate()`` it.

    ``count_files`` gives the run's total (e.g. :func:`count_selected_files`); it is called
    only when the bar is drawn and the DoFns run in this process.
    """
    if enabled is None:
        enabled = progress_enabled(stream if stream is not None else sys.stderr)
    if not enabled:
        return Progress(enabled=False, stream=stream)
    if counts_in_launcher(options):
        return Progress(count_files(), stream=stream, enabled=True)
    return Progress(
        counting=False,
        description=f"kebab-chunk: running on {_runner_name(options)}, file counts when it ends",
        stream=stream,
        enabled=True,
    )


def _done(outcome: Any) -> None:
    note_done(outcome.source_uri)


def _failed(error: Any) -> None:
    note_done(error.source_uri, error=True)


def _error(error: Any) -> None:
    note_error(error.source_uri)


#: Input key -> what each element says about its file.
_ROLES: dict[str, tuple[str, Callable[[Any], None]]] = {
    # DocumentOutcome (or an update's FileAccount of a reused document): the file is done.
    "outcomes": ("Note finished documents", _done),
    "reused_outcomes": ("Note reused documents", _done),
    # ErrorRecord of a file that ends there (read and parse stages).
    "read_errors": ("Note unread files", _failed),
    "parse_errors": ("Note unparsed files", _failed),
    "file_errors": ("Note failed files", _failed),
    # SourceFile of a file --skip-unsupported leaves out: done.
    "skipped": ("Note skipped files", _done),
    # ErrorRecord of a file whose outcome counts it done (chunk and write stages).
    "chunk_errors": ("Note chunking errors", _error),
    "write_errors": ("Note write errors", _error),
}


class ReportProgress(beam.PTransform[dict[str, PCollection[Any]], None]):
    """Feed the launcher's progress bar from the pipeline; the transform has no output.

    Input: a dict of PCollections, each key optional. ``outcomes`` and
    ``reused_outcomes`` (DocumentOutcome: one file done each); ``read_errors``,
    ``parse_errors`` or ``file_errors`` (ErrorRecord of a file that fails there: done, and
    failed); ``skipped`` (SourceFile of a file left out as unsupported: done);
    ``chunk_errors`` and ``write_errors`` (ErrorRecord of a file counted done by its
    outcome: failed). ``files`` is accepted and unused (totals are counted by the
    launcher). Pass each PCollection on its own rather than flattened: on the in-memory
    DirectRunner a Flatten of several stages' outputs runs only after all of them finish,
    and the bar would learn of those files at the end. Off the launching process every
    call is a no-op.
    """

    def expand(self, inputs: dict[str, PCollection[Any]]) -> None:
        unknown = sorted(set(inputs) - set(_ROLES) - {"files"})
        if unknown:
            raise ValueError(f"ReportProgress got unknown inputs {unknown}; see its docstring.")
        for key, (step, note) in _ROLES.items():
            if key in inputs:
                _ = inputs[key] | step >> beam.Map(note)
