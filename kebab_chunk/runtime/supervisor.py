"""The supervisor of helper processes: start one, feed it, time it out, kill and replace it.

Parsers and chunkers run on untrusted bytes, so the pipeline never calls them in the Beam
worker itself: :class:`~kebab_chunk.beam.isolation.IsolatedDoFn` hands each element to a
long-lived helper process (:class:`IsolatedRunner`, here) and emits what the helper sends
back. This module is the worker's side of that conversation and uses no Beam; the
helper's side is :mod:`kebab_chunk.runtime.helper`. A helper that overruns the budget of
the element it is working on is killed (``timeout``), one that dies (a crash in a native
library, a stack overflow) is noticed by the closed socket (``worker_crash``); either way
that one element becomes a :class:`Failure`, a fresh helper is started and the elements
that were queued behind it are sent again.

Streaming, not one round trip per element: the worker sends up to ``max_in_flight``
elements ahead and the helper works through them one at a time, sending each result as
soon as it is ready. The worker goes on with Beam's own work meanwhile, so helper and
worker overlap instead of waiting on each other. The helper processes elements strictly in
order, so the oldest unfinished element is always the one it is working on: a hang or a
crash is pinned to exactly one element. Its budget runs from the moment the worker sees
the previous result (or sends the element to an idle helper), never earlier.

Stages: a task may report that it moved on to another stage of the same element
(``enter(stage, note)``, e.g. from parsing to chunking); the budget of that stage starts
then, and a failure names the stage and carries the ``note`` (what the worker needs to
write the error row without the intermediate result ever leaving the helper).

Why not ``ProcessPoolExecutor`` (the first design): each submit goes through a queue
feeder thread and a result manager thread, which cost milliseconds of thread hand-offs per
element on a loaded machine; one socket and ``select`` in the calling thread need none.
Why not Beam's ``with_exception_handling(use_subprocess=True)``: it forks its helper from
the SDK worker, whose gRPC threads make a forked child die at random. Helpers here come
from a ``forkserver`` (a clean, single-threaded process started with exec; ``spawn`` where
forkserver is not available) that preloads only :mod:`kebab_chunk.runtime.helper`, which
does not import Apache Beam; tasks travel with the standard ``pickle``, so a helper never
needs Beam at all. A fresh helper costs a fork plus the imports of its parsers and
chunkers, and its memory is that of a plain Python process holding them.

The helper installs the memory guard (:func:`limit_memory`) once its task is loaded and
set up, before the first element: its address space may grow by at most ``max_memory_mb``
MiB over its size then, so an allocation beyond that raises ``MemoryError`` inside the
helper instead of exhausting the machine.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import select
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kebab_chunk.runtime.helper import (
    HEADER,
    MSG_DONE,
    MSG_RAISED,
    MSG_READY,
    MSG_STAGE,
    PROTOCOL,
    HelperTask,
    helper_main,
    limit_memory,
    recv_exact,
)

__all__ = [
    "CRASH",
    "RAISED",
    "TIMEOUT",
    "Failure",
    "Finished",
    "HelperTask",
    "InlineRunner",
    "IsolatedRunner",
    "limit_memory",
]

#: Seconds to wait for a killed or closed helper to be reaped.
_REAP_S = 5.0
#: Seconds a new helper may take to start (import, unpickle the task, its setup).
_START_S = 120.0
#: Elements and pickled bytes the worker sends ahead of the helper (at least one element).
DEFAULT_MAX_IN_FLIGHT = 16
DEFAULT_MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024
_RECV_BYTES = 1 << 20


#: ``Failure.kind``: the stage overran its budget, the helper died, the task raised.
TIMEOUT, CRASH, RAISED = "timeout", "worker_crash", "raised"


@dataclass(frozen=True)
class Failure:
    """Why an element has no result: ``kind`` is TIMEOUT, CRASH or RAISED.

    ``stage`` is the stage that was running, ``note`` what the task reported on entering
    it (None in stage 0); ``exc_type`` and ``detail`` (class name and repr) are set for
    RAISED, an exception that escaped the task (or pickling its result); for CRASH,
    ``detail`` gives the helper's exit code (negative: the signal that ended it).
    """

    kind: str
    stage: int = 0
    note: Any = None
    exc_type: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Finished:
    """One element done: its ``result``, or ``failure``; ``context`` is the caller's tag."""

    element: Any
    context: Any
    result: Any = None
    failure: Failure | None = None


def _helper_context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # Replaces the default preload (['__main__']): the server imports only the helper
        # module (not even Apache Beam), never the launching script.
        ctx.set_forkserver_preload([helper_main.__module__])
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - Windows


_MAIN_LOCK = threading.Lock()


@contextmanager
def _launching_script_hidden() -> Iterator[None]:
    """Start a helper without multiprocessing re-running the launching script in it.

    Each new process runs ``spawn.prepare``, which imports ``__main__`` again (as
    ``__mp_main__``) from its ``__spec__`` or ``__file__``: a script without an
    ``if __name__ == "__main__":`` guard would run again in every helper, and a pipeline
    started from ``python -`` or ``python -c`` could not start helpers at all (there is
    no file ``<stdin>`` to import). Helpers need nothing from the script, so for the
    moment of the start ``__main__`` has neither.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _MAIN_LOCK:
        saved: dict[str, Any] = {
            k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__
        }
        main.__dict__.pop("__file__", None)
        main.__dict__["__spec__"] = None
        try:
            yield
        finally:
            main.__dict__.pop("__spec__", None)
            main.__dict__.update(saved)


# ------------------------------------------------------------------ the worker side


class _HelperDied(Exception):
    """The helper's socket closed or failed: the process is gone."""


@dataclass
class _InFlight:
    element: Any
    context: Any
    payload: bytes
    stage: int = 0
    note: Any = None
    started: float | None = None  # when its current stage started (set once it is the head)


@dataclass
class _Helper:
    process: multiprocessing.process.BaseProcess
    sock: socket.socket
    outgoing: deque[memoryview] = field(default_factory=deque)
    incoming: bytearray = field(default_factory=bytearray)
    scratch: bytearray = field(default_factory=lambda: bytearray(_RECV_BYTES))


class IsolatedRunner:
    """Worker-side handle of one helper process running ``task`` (see the module doc).

    ``budgets_s[k]`` is the time budget of stage ``k`` of every element. ``submit`` and
    ``drain`` return the elements finished so far, each exactly once, in the order the
    helper finished them.
    """

    def __init__(
        self,
        task: HelperTask,
        *,
        budgets_s: Sequence[float],
        max_memory_mb: int | None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_in_flight_bytes: int = DEFAULT_MAX_IN_FLIGHT_BYTES,
    ) -> None:
        if not budgets_s or not all(b > 0 for b in budgets_s):
            raise ValueError(f"every stage budget must be > 0, got {tuple(budgets_s)}")
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        self._serialized_task = pickle.dumps(task, PROTOCOL)
        self._budgets = tuple(budgets_s)
        self._max_memory_mb = max_memory_mb
        self._max_in_flight = max_in_flight
        self._max_bytes = max_in_flight_bytes
        self._helper: _Helper | None = None
        self._replace = False  # the helper announced that it exits: start a fresh one
        self._in_flight: deque[_InFlight] = deque()
        self._bytes_in_flight = 0

    # -- public

    def start(self) -> None:
        """Start the helper now (so start-up is never charged to an element's budget)."""
        if self._helper is not None:
            return
        ctx = _helper_context()
        ours, theirs = socket.socketpair()
        process = ctx.Process(  # type: ignore[attr-defined]
            target=helper_main,
            args=(theirs, self._serialized_task, self._max_memory_mb, os.getpid()),
            name="kebab-chunk-helper",
            daemon=True,
        )
        with _launching_script_hidden():
            process.start()
        theirs.close()
        ours.settimeout(_START_S)
        try:
            header = recv_exact(ours, HEADER.size)
            ready = recv_exact(ours, HEADER.unpack(header)[0]) if header else None
        except OSError:
            ready = None
        if ready is None or pickle.loads(ready) != (MSG_READY,):
            ours.close()
            _reap(process, kill=True)
            raise RuntimeError(
                "the isolation helper process could not start (exit code "
                f"{process.exitcode}); see the log above for its error."
            )
        ours.setblocking(False)
        self._helper = _Helper(process, ours)

    def submit(self, element: Any, context: Any = None) -> list[Finished]:
        """Queue ``element``; returns what finished meanwhile (blocks while the queue is full)."""
        try:
            payload = pickle.dumps(element, PROTOCOL)
        except Exception as exc:  # cannot even be sent: this element alone fails
            return [Finished(element, context, failure=_raised(0, None, exc))]
        self.start()
        entry = _InFlight(element, context, payload)
        if not self._in_flight:
            entry.started = time.monotonic()
        self._in_flight.append(entry)
        self._bytes_in_flight += len(payload)
        self._send(payload)
        finished = self._pump(block=False)
        while self._in_flight and (
            len(self._in_flight) >= self._max_in_flight or self._bytes_in_flight > self._max_bytes
        ):
            finished += self._pump(block=True)
        return finished

    def drain(self) -> list[Finished]:
        """Wait for every queued element; returns them."""
        finished: list[Finished] = []
        while self._in_flight:
            finished += self._pump(block=True)
        return finished

    def close(self) -> None:
        """Stop the helper (it exits when its socket closes); queued elements are dropped."""
        self._stop(kill=False)
        self._in_flight.clear()
        self._bytes_in_flight = 0

    # -- internals

    def _send(self, payload: bytes) -> None:
        assert self._helper is not None
        # one frame, one send: the copy of a document is cheaper than a second system call
        self._helper.outgoing.append(memoryview(HEADER.pack(len(payload)) + payload))

    def _pump(self, *, block: bool) -> list[Finished]:
        """Move bytes both ways; ``block``: until an element finishes (or fails)."""
        finished: list[Finished] = []
        while True:
            helper = self._helper
            assert helper is not None
            timeout = self._time_left() if block else 0.0
            writers = [helper.sock] if helper.outgoing else []
            readable, writable, _ = select.select([helper.sock], writers, [], timeout)
            try:
                if writable:
                    self._write(helper)
                if readable:
                    self._read(helper, finished)
            except (_HelperDied, OSError):  # every result it sent has been read by now
                if self._in_flight:
                    finished.append(self._fail_head(CRASH))
                else:
                    self._stop(kill=True)
                return finished
            if not block or finished or not self._in_flight:
                return finished
            if self._time_left() <= 0:
                finished.append(self._fail_head(TIMEOUT))
                return finished

    def _time_left(self) -> float:
        head = self._in_flight[0]
        if head.started is None:
            head.started = time.monotonic()
        return max(0.0, head.started + self._budgets[head.stage] - time.monotonic())

    def _write(self, helper: _Helper) -> None:
        while helper.outgoing:
            view = helper.outgoing[0]
            try:
                sent = helper.sock.send(view)
            except BlockingIOError:
                return
            except (BrokenPipeError, ConnectionResetError):
                # The helper is gone, but results it sent before dying may still be unread:
                # keep reading until the end of the stream, which then fails the right element.
                helper.outgoing.clear()
                return
            if sent < len(view):
                helper.outgoing[0] = view[sent:]
                return
            helper.outgoing.popleft()

    def _read(self, helper: _Helper, finished: list[Finished]) -> None:
        try:
            # into a buffer kept for the helper's life: a fresh 1 MB ``recv`` result per
            # call would be mapped and unmapped each time
            received = helper.sock.recv_into(helper.scratch)
        except BlockingIOError:
            return
        if not received:
            raise _HelperDied
        buf = helper.incoming
        buf += memoryview(helper.scratch)[:received]
        start = 0
        while len(buf) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(buf, start)
            end = start + HEADER.size + size
            if len(buf) < end:
                break
            self._receive(bytes(buf[start + HEADER.size : end]), finished)
            start = end
            if self._replace:  # nothing follows in this helper's stream
                self._replace = False
                self._restart()
                return
        del buf[:start]

    def _receive(self, frame: bytes, finished: list[Finished]) -> None:
        if not self._in_flight:  # pragma: no cover - the helper only answers what was sent
            return
        head = self._in_flight[0]
        try:
            message = pickle.loads(frame)
        except Exception as exc:  # a result the worker cannot rebuild fails its element
            finished.append(
                self._finish(
                    Finished(
                        head.element, head.context, failure=_raised(head.stage, head.note, exc)
                    )
                )
            )
            return
        kind = message[0]
        if kind == MSG_STAGE:
            head.stage, head.note, head.started = message[1], message[2], time.monotonic()
        elif kind == MSG_DONE:
            finished.append(self._finish(Finished(head.element, head.context, message[1])))
        elif kind == MSG_RAISED:
            failure = Failure(RAISED, head.stage, head.note, message[1], message[2])
            finished.append(self._finish(Finished(head.element, head.context, failure=failure)))
            self._replace = message[3]  # the helper exits after this message

    def _finish(self, done: Finished) -> Finished:
        """Retire the head; the next element's clock starts now."""
        head = self._in_flight.popleft()
        self._bytes_in_flight -= len(head.payload)
        if self._in_flight:
            self._in_flight[0].started = time.monotonic()
        return done

    def _fail_head(self, kind: str) -> Finished:
        """The head hung or killed the helper: fail it, restart, resend the rest."""
        head = self._in_flight[0]
        exit_code = self._stop(kill=True)
        detail = f"helper exit code {exit_code}" if kind == CRASH else ""
        done = self._finish(
            Finished(
                head.element,
                head.context,
                failure=Failure(kind, head.stage, head.note, detail=detail),
            )
        )
        self._restart()
        return done

    def _restart(self) -> None:
        """Replace the helper and send it every element still in flight, in order."""
        self._stop(kill=True)
        if self._in_flight:
            self.start()
            for entry in self._in_flight:
                entry.stage, entry.note, entry.started = 0, None, None
                self._send(entry.payload)
            self._in_flight[0].started = time.monotonic()

    def _stop(self, *, kill: bool) -> int | None:
        """Stop the helper; returns its exit code (negative: the signal that ended it)."""
        helper, self._helper = self._helper, None
        if helper is None:
            return None
        helper.sock.close()
        return _reap(helper.process, kill=kill)


def _reap(process: multiprocessing.process.BaseProcess, *, kill: bool) -> int | None:
    if kill and process.exitcode is None:
        process.kill()
    process.join(_REAP_S)
    if process.is_alive():  # did not exit on its own after the socket closed
        process.kill()
        process.join(_REAP_S)
    return process.exitcode


def _raised(stage: int, note: Any, exc: BaseException) -> Failure:
    return Failure(RAISED, stage, note, type(exc).__name__, repr(exc))


class InlineRunner:
    """:class:`IsolatedRunner`'s interface without a helper: no time budget, no guard.

    Only for measuring what isolation costs (``isolate=False``); a hang stalls the worker
    and a crash kills it.
    """

    def __init__(self, task: HelperTask) -> None:
        self._task = task

    def start(self) -> None:
        self._task.setup()

    def submit(self, element: Any, context: Any = None) -> list[Finished]:
        stage, note = 0, None

        def enter(new_stage: int, new_note: Any) -> None:
            nonlocal stage, note
            stage, note = new_stage, new_note

        try:
            return [Finished(element, context, self._task.run(element, enter))]
        except Exception as exc:
            return [Finished(element, context, failure=_raised(stage, note, exc))]

    def drain(self) -> list[Finished]:
        return []

    def close(self) -> None:
        pass
