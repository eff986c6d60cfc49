"""The progress bar of long runs: files done of the total, rate, ETA and failed files so far.

Drawn with tqdm on stderr, and only when stderr is a terminal and ``CI`` is not set: piped
output, log files and CI logs get nothing from it (the run's own summary still prints).
Tests force it on with ``enabled=True`` and a string stream, and pass a ``clock``.

Used three ways:

* by a CLI loop that knows its inputs (``kebab-chunk chunk``)::

      with Progress(total=len(paths)) as progress:
          for path in paths:
              ...
              progress.advance(error=failed)

* by the pipeline when its DoFns run in the launching process (the DirectRunner in memory
  or with threads): the launcher counts the files up front, wraps ``pipeline.run()`` in
  ``with Progress(total=n) as progress, progress.activate():`` and the transforms call the
  module functions :func:`note_done` (a file reached its outcome, possibly as an error row)
  and :func:`note_error` (a file that is counted done elsewhere got an error row). They
  are no-ops when no reporter is active in the process (a remote worker, a test), so
  transforms call them unconditionally. Failed files are counted once each, by
  ``source_uri``, as the manifest's ``errors`` bucket counts them.

* by runs whose DoFns run elsewhere (Flink, Spark, Dataflow, Prism, the multi-processing
  DirectRunner): ``Progress(counting=False, description=...)`` shows only the elapsed time,
  since no count can reach the launcher before the run ends; the manifest's counts are
  printed when it does.

A total that turns out too small (entries the up-front count cannot see, such as broken
symbolic links, which become error rows) grows to the number done, so the bar never shows
more done than total. While the bar is drawn, :func:`write_above` prints a line (a log
record) above it instead of through it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm  # type: ignore[import-untyped]

__all__ = ["Progress", "note_done", "note_error", "progress_enabled", "write_above"]

_ACTIVE: Progress | None = None
_ACTIVE_LOCK = threading.Lock()
#: Bars being drawn now, in this process (so :func:`write_above` knows to step around one).
_DRAWN: set[Progress] = set()

#: The tool's name, in front of the bar.
_PREFIX = "kebab-chunk"
#: The bar with a total: percentage, bar, done/total, elapsed<ETA, rate, failed files. The
#: rate is always files per second (tqdm would switch to seconds per file below one).
_WITH_TOTAL = (
    "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
    "[{elapsed}<{remaining}, {rate_noinv_fmt}{postfix}]"
)
#: Without a total (a remote corpus): files done, elapsed, rate, failed files.
_WITHOUT_TOTAL = "{desc}: {n_fmt}{unit} [{elapsed}, {rate_noinv_fmt}{postfix}]"
#: Without counts (workers elsewhere): what runs and for how long.
_ELAPSED_ONLY = "{desc} [{elapsed}]"


def _terminal_shape(stream: Any) -> tuple[int | None, int | None]:
    """Columns and rows of the terminal behind ``stream``, None for what it does not say."""
    try:
        columns, lines = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):  # not a terminal: a pipe, a string stream
        return None, None
    return columns or None, lines or None


def progress_enabled(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """True when ``stream`` is a terminal and the environment is not CI (``CI`` unset/empty)."""
    env = os.environ if environ is None else environ
    if env.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # a closed or detached stream
        return False


class Progress:
    """Counts files done and files failed against a total, drawn as one tqdm bar.

    ``total`` is the number of files when known up front (None: the bar shows the count and
    rate without a percentage or ETA). ``counting=False`` draws only ``description`` and the
    elapsed time. ``enabled`` overrides the terminal / CI detection. ``refresh_s`` redraws
    the bar that often even when nothing finishes, so the elapsed time and ETA stay live
    (None: only on counts). All methods are thread-safe: the DirectRunner calls them from
    its worker threads.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        unit: str = "files",
        description: str = _PREFIX,
        counting: bool = True,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        min_interval: float = 0.1,
        refresh_s: float | None = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self._stream) if enabled is None else enabled
        self.total = total
        self.counting = counting
        self.done = 0
        self._failed: set[str] = set()
        self._failed_unnamed = 0
        self._clock = clock
        self._start = clock()
        self._lock = threading.Lock()
        self._closed = False
        self._unit = unit
        self._description = description
        self._bar: Any = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if self.enabled:
            self._bar = self._new_bar(min_interval)
            with _ACTIVE_LOCK:
                _DRAWN.add(self)
            if refresh_s is not None:
                self._ticker = threading.Thread(
                    target=self._tick, args=(refresh_s,), name="kebab-progress", daemon=True
                )
                self._ticker.start()

    def _new_bar(self, min_interval: float) -> Any:
        """The tqdm bar, on our clock (as tqdm's own tests time it) and with overall rates."""
        common: dict[str, Any] = {
            "file": self._stream,
            "mininterval": min_interval,
            "maxinterval": max(min_interval, 10.0),
            "dynamic_ncols": True,
            "leave": True,
            # The whole run's average: DirectRunner bundles finish in bursts, which makes
            # tqdm's moving average (and so the ETA) jump.
            "smoothing": 0,
        }
        if self.counting:
            bar = tqdm(
                total=self.total,
                desc=self._description,
                unit=f" {self._unit}",
                postfix=self._errors_text(),
                bar_format=self._bar_format(),
                **common,
            )
        else:
            bar = tqdm(total=None, desc=self._description, bar_format=_ELAPSED_ONLY, **common)
        bar._time = self._clock
        bar.start_t = bar.last_print_t = self._start
        # tqdm reads an unknown terminal width as -1 and trims the bar to nothing (seen on
        # pseudo-terminals without a size); ours says None, which draws a 10-column bar.
        bar.dynamic_ncols = _terminal_shape
        bar.ncols, bar.nrows = _terminal_shape(self._stream)
        bar.refresh()
        return bar

    # --- counting ----------------------------------------------------------------------

    @property
    def errors(self) -> int:
        """Files that failed so far (each counted once)."""
        return len(self._failed) + self._failed_unnamed

    def advance(self, n: int = 1, *, error: bool = False) -> None:
        """``n`` files reached their outcome; ``error`` marks them as failed."""
        with self._lock:
            if error:
                self._failed_unnamed += n
            self._count(n, error)

    def finish(self, source_uri: str, *, error: bool = False) -> None:
        """The file ``source_uri`` reached its outcome (``error``: as an error row)."""
        with self._lock:
            newly_failed = error and source_uri not in self._failed
            if error:
                self._failed.add(source_uri)
            self._count(1, newly_failed)

    def fail(self, source_uri: str) -> None:
        """The file ``source_uri`` got an error row; it is counted done by its outcome."""
        with self._lock:
            if source_uri in self._failed:
                return
            self._failed.add(source_uri)
            self._count(0, True)

    def _count(self, n: int, errors_changed: bool) -> None:
        self.done += n
        if self.total is not None and self.done > self.total:
            self.total = self.done
        bar = self._bar
        if bar is None or self._closed or not self.counting:
            return
        if bar.total is not None and bar.n + n > bar.total:
            bar.total = bar.n + n
        if errors_changed:
            bar.set_postfix_str(self._errors_text(), refresh=False)
        if n:
            bar.update(n)  # redraws at most every min_interval seconds
        elif errors_changed:
            bar.refresh()

    def _bar_format(self) -> str:
        if not self.counting:
            return _ELAPSED_ONLY
        return _WITHOUT_TOTAL if self.total is None else _WITH_TOTAL

    def _errors_text(self) -> str:
        n = self.errors
        return f"{n} error{'' if n == 1 else 's'}"

    def line(self) -> str:
        """The bar's text as it would be drawn now, without terminal control characters."""
        with self._lock:
            if self._bar is not None:
                return str(tqdm.format_meter(**self._bar.format_dict))
            return str(
                tqdm.format_meter(
                    n=self.done,
                    total=self.total,
                    elapsed=self._clock() - self._start,
                    prefix=self._description,
                    unit=f" {self._unit}",
                    postfix=self._errors_text(),
                    bar_format=self._bar_format(),
                )
            )

    # --- drawing -----------------------------------------------------------------------

    def _tick(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            with self._lock:
                if self._closed:
                    return
                self._bar.refresh()

    def close(self) -> None:
        """Draw the final state and end the line (once; later calls do nothing)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            if self._bar is not None:
                self._bar.close()  # leave=True: the final state, then a newline
                with _ACTIVE_LOCK:
                    _DRAWN.discard(self)
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- process-wide hook for the pipeline --------------------------------------------

    @contextmanager
    def activate(self) -> Iterator[Progress]:
        """Make this the reporter that :func:`note_done` / :func:`note_error` feed."""
        global _ACTIVE
        with _ACTIVE_LOCK:
            previous, _ACTIVE = _ACTIVE, self
        try:
            yield self
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE = previous


def note_done(source_uri: str, *, error: bool = False) -> None:
    """Tell the active reporter (if any in this process) that a file reached its outcome."""
    reporter = _ACTIVE
    if reporter is not None:
        reporter.finish(source_uri, error=error)


def note_error(source_uri: str) -> None:
    """Tell the active reporter (if any) that a file counted done elsewhere got an error row."""
    reporter = _ACTIVE
    if reporter is not None:
        reporter.fail(source_uri)


def write_above(text: str, stream: TextIO) -> None:
    """Write one line to ``stream``; a progress bar drawn there is cleared and redrawn below.

    For log records during a run: without this they would be written into the bar's line.
    """
    if _DRAWN:
        tqdm.write(text, file=stream)
    else:
        stream.write(text + "\n")
    stream.flush()
