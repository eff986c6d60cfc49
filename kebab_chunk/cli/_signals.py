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
(``logging.disable``: Beam's traceback of the interrupted step is not news), so the
command's sentence is the only line on stderr.
"""

from __future__ import annotations

import logging
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
    cannot install handlers) it does nothing. The previous handlers come back on exit."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}
        self._log_level = logging.NOTSET

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                self._previous[signum] = signal.signal(signum, self._handle)
        self._log_level = logging.root.manager.disable
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
        if self.signum is not None:
            logging.disable(self._log_level)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            logging.disable(logging.CRITICAL)  # Beam logs the interrupted step's traceback
        raise _Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    @property
    def status(self) -> int | None:
        """143 after SIGTERM, 130 after SIGINT (or a ``KeyboardInterrupt`` noted with
        :meth:`note_interrupt`), None while no signal arrived."""
        if self.signum is None:
            return None
        return EXIT_SIGTERM if self.signum == signal.SIGTERM else EXIT_SIGINT

    def note_interrupt(self, exc: KeyboardInterrupt) -> None:
        """Record an interrupt that did not pass through the handler (one raised before it
        was installed, or outside the main thread)."""
        if self.signum is None:
            self.signum = signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT

    def describe(self) -> str:
        """How the command was stopped, for its one line."""
        return "terminated by SIGTERM" if self.signum == signal.SIGTERM else "interrupted (SIGINT)"
