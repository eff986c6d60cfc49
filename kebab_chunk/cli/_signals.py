"""SIGTERM and SIGINT stop ``run`` and ``rechunk`` in one line with exit status 143 / 130.

``timeout``, systemd, Airflow and Kubernetes send SIGTERM; a terminal sends SIGINT
(Ctrl-C). Both must end the job the same way at any moment, with the status scripts and
orchestrators test (128 + the signal number). The difficulty is where the signal lands:
on the in-memory DirectRunner the main thread is usually inside a DoFn, waiting for an
isolation helper, and Beam turns whatever that DoFn raises (our ``KeyboardInterrupt``
included) into a ``RuntimeError`` naming the step, after logging it with its traceback.
So the exception that reaches the command cannot say that a signal stopped it; the
handler records the signal here, and the command asks :meth:`StopSignals.status`
instead of looking at the exception. While a stop is under way, log records are dropped
(``logging.disable``: Beam's traceback of the interrupted step is not news), and so are
exceptions that end other threads (``threading.excepthook``), so the command's sentence
is the only line the command itself writes to stderr. Worker processes of the
multi-processing DirectRunner that the signal reached as well (a terminal's Ctrl-C goes
to the whole process group) may still print their own lines.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from types import FrameType, TracebackType

from kebab_chunk.cli.exits import EXIT_SIGINT, EXIT_SIGTERM

__all__ = ["StopSignals"]


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it stops the run exactly as Ctrl-C does."""


class StopSignals:
    """Context manager: while inside, SIGTERM and SIGINT raise ``KeyboardInterrupt`` in the
    main thread and are recorded (:attr:`signum`). Outside the main thread (where Python
    cannot install handlers) it does nothing. The previous handlers come back on exit.

    The Python-level handler runs in the main thread, some time after the signal: a signal
    sent to the whole process group also ends Beam's worker processes, and Beam's threads
    may report that first. So the signal number is also read from Python's wakeup fd
    (written the moment the signal arrives, from any thread) before a log record or a
    thread's exception is let through.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}
        self._wakeup: tuple[int, int] | None = None
        self._previous_wakeup = -1
        self._log_level = logging.NOTSET
        self._excepthook = threading.excepthook
        self._handlers: list[logging.Handler] = []

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous[signum] = signal.signal(signum, self._handle)
            read, write = os.pipe()
            os.set_blocking(read, False)
            os.set_blocking(write, False)
            self._wakeup = (read, write)
            self._previous_wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._log_level = logging.root.manager.disable
        self._excepthook = threading.excepthook
        threading.excepthook = self._thread_died
        self._handlers = list(logging.getLogger().handlers)
        for handler in self._handlers:
            handler.addFilter(self._quiet)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()
        if self._wakeup is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            for fd in self._wakeup:
                os.close(fd)
            self._wakeup = None
        threading.excepthook = self._excepthook
        for handler in self._handlers:
            handler.removeFilter(self._quiet)
        if self.signum is not None:
            logging.disable(self._log_level)

    def _record(self, signum: int) -> None:
        if self.signum is None:
            self.signum = signum
            logging.disable(logging.CRITICAL)  # Beam logs the interrupted step's traceback

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._record(signum)
        raise _Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    def _stopping(self) -> bool:
        """Whether a stop signal arrived, even one whose handler has not run yet."""
        if self.signum is None and self._wakeup is not None:
            try:
                arrived = os.read(self._wakeup[0], 64)
            except (BlockingIOError, OSError):
                arrived = b""
            for signum in arrived:
                if signum in (signal.SIGTERM, signal.SIGINT):
                    self._record(signum)
                    break
        return self.signum is not None

    def _quiet(self, record: logging.LogRecord) -> bool:
        return not self._stopping()

    def _thread_died(self, args: threading.ExceptHookArgs) -> None:
        # After a stop, Beam's threads die of the stop (a worker process ended by the same
        # signal, a closed channel): not news either.
        if not self._stopping():
            self._excepthook(args)

    @property
    def status(self) -> int | None:
        """143 after SIGTERM, 130 after SIGINT (or a ``KeyboardInterrupt`` noted with
        :meth:`note_interrupt`), None while no signal arrived."""
        if not self._stopping():
            return None
        return EXIT_SIGTERM if self.signum == signal.SIGTERM else EXIT_SIGINT

    def note_interrupt(self, exc: KeyboardInterrupt) -> None:
        """Record an interrupt that did not pass through the handler (one raised before it
        was installed, or outside the main thread)."""
        self._record(signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT)

    def describe(self) -> str:
        """How the command was stopped, for its one line."""
        return "terminated by SIGTERM" if self.signum == signal.SIGTERM else "interrupted (SIGINT)"
