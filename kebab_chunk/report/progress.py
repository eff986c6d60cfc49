"""A one-line progress display for long local runs: files done / matched and errors so far.

Used two ways:

* by a CLI loop that knows its inputs::

      with Progress(total=len(paths)) as progress:
          for path in paths:
              ...
              progress.advance(error=failed)

* by the pipeline on the DirectRunner, whose DoFns run in the launching process: the
  launcher wraps ``pipeline.run()`` in ``with Progress() as progress, progress.activate():``
  and the transforms call the module functions :func:`note_matched` (a file was matched)
  and :func:`note_done` (a file reached its outcome). They are no-ops when no reporter is
  active in the process (a remote worker, a test), so transforms can call them
  unconditionally; Beam metrics carry the same counts on every runner.

The display goes to stderr and only when it is a terminal and ``CI`` is not set: piped
output, log files and CI logs stay free of carriage-return noise. Redraws are throttled
(at most one per ``min_interval`` seconds), and the final state is always drawn on close.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TextIO

__all__ = ["Progress", "note_done", "note_matched", "progress_enabled"]

_ACTIVE: Progress | None = None
_ACTIVE_LOCK = threading.Lock()


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
    """Counts files done (and how many failed) against files matched, drawn on one line.

    ``total`` is the number of matched files when known up front; :meth:`add_matched`
    grows it when files are discovered as the run goes. ``enabled`` overrides the
    terminal / CI detection (tests pass ``True`` with a string stream). All methods are
    thread-safe: the DirectRunner calls them from its worker threads.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        label: str = "files",
        stream: TextIO | None = None,
        enabled: bool | None = None,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(self._stream) if enabled is None else enabled
        self._label = label
        self._min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        self.matched = total or 0
        self._total_known = total is not None
        self.done = 0
        self.errors = 0
        self._last_draw: float | None = None
        self._closed = False

    # --- counting ----------------------------------------------------------------------

    def add_matched(self, n: int = 1) -> None:
        """``n`` more files were matched (for runs that discover inputs as they go)."""
        with self._lock:
            self.matched += n
            self._total_known = True
            self._maybe_draw()

    def advance(self, n: int = 1, *, error: bool = False) -> None:
        """``n`` files reached their outcome; ``error`` marks them as failed."""
        with self._lock:
            self.done += n
            if error:
                self.errors += n
            self._maybe_draw()

    def line(self) -> str:
        """The text of the progress line, e.g. ``files 12/40 done, 1 error``."""
        total = f"/{self.matched}" if self._total_known else ""
        errors = f", {self.errors} error{'s' if self.errors != 1 else ''}"
        return f"kebab-chunk: {self._label} {self.done}{total} done{errors}"

    # --- drawing -----------------------------------------------------------------------

    def _maybe_draw(self, force: bool = False) -> None:
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if not force and self._last_draw is not None and now - self._last_draw < self._min_interval:
            return
        self._last_draw = now
        self._stream.write("\r" + self.line())  # counts only grow: the line never shrinks
        self._stream.flush()

    def close(self) -> None:
        """Draw the final counts and end the line (once; later calls do nothing).

        A reporter that never counted anything (e.g. the pipeline ran on remote workers,
        which cannot reach it) stays silent rather than claiming "0 done".
        """
        with self._lock:
            if self._closed:
                return
            if not (self.matched or self.done):
                self._closed = True
                return
            self._maybe_draw(force=True)
            if self.enabled:
                self._stream.write("\n")
                self._stream.flush()
            self._closed = True

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
        """Make this the reporter that :func:`note_matched` / :func:`note_done` feed."""
        global _ACTIVE
        with _ACTIVE_LOCK:
            previous, _ACTIVE = _ACTIVE, self
        try:
            yield self
        finally:
            with _ACTIVE_LOCK:
                _ACTIVE = previous


def note_matched(n: int = 1) -> None:
    """Tell the active reporter (if any in this process) that ``n`` files were matched."""
    reporter = _ACTIVE
    if reporter is not None:
        reporter.add_matched(n)


def note_done(*, error: bool = False) -> None:
    """Tell the active reporter (if any in this process) that one file reached its outcome."""
    reporter = _ACTIVE
    if reporter is not None:
        reporter.advance(error=error)
