"""The supervisor of helper processes: start one, feed it, time it out, kill and replace it.

Parsers and chunkers run on untrusted bytes, so the pipeline never calls them in the Beam
worker itself: :class:`~kebab_chunk.beam.isolation.IsolatedDoFn` hands each element to a
long-lived helper process (:class:`IsolatedRunner`, here) and emits what the helper sends
back. This module is the worker's side of that conversation and uses no Beam; the
helper's side is :mod:`kebab_chunk.runtime.helper`, what they send each other
:mod:`kebab_chunk.runtime.protocol`. A helper that overruns the budget of the element it
is working on is killed (``timeout``), one that dies (a crash in a native library, a stack
overflow) is noticed by the closed socket (``worker_crash``); either way that one element
becomes a :class:`Failure`, a fresh helper is started and the other elements are sent
again.

Streaming, in batches: the worker collects up to ``batch`` elements (``batch_bytes``
pickled bytes) and sends them in one frame, keeps up to ``max_in_flight`` elements sent
ahead, and goes on with Beam's own work meanwhile, so helper and worker overlap instead of
waiting on each other. The helper works through a batch one element at a time and replies
at the end of it, or as soon as its reply holds 5 ms of work (so a slow element is never
held back). One frame per element cost both processes a pickle, a system call and a
wake-up, 60-90 µs of CPU per element (benchmarks/experiments/isolation_batching/).

Each element still has its own budget and fails alone. The helper keeps a progress record
(:mod:`kebab_chunk.runtime.protocol`): which element it is on, in which stage, since when.
The worker looks at it when the budget it knows of runs out (and, while a later stage has
a shorter budget, every quarter of that budget), and after a helper died, so a hang, a
crash or running out of memory is pinned to exactly the element and stage it happened in,
with that stage's note. That element fails; a fresh helper is started and everything else
in flight is sent to it again, including elements it had finished but not yet reported
(at most 5 ms of work).

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

from kebab_chunk.runtime.helper import HelperTask, helper_main, limit_memory, recv_exact
from kebab_chunk.runtime.protocol import (
    DONE,
    HEADER,
    OUT_OF_MEMORY,
    PROTOCOL,
    READY,
    Outcome,
    Progress,
    ReplyReader,
    decode_reply,
    encode_batch,
    progress_file,
    read_progress,
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
DEFAULT_MAX_IN_FLIGHT = 32
DEFAULT_MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024
#: Elements and pickled bytes sent in one batch (a larger element goes alone).
DEFAULT_BATCH = 16
DEFAULT_BATCH_BYTES = 4 * 1024 * 1024
_NEVER = float("inf")
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
    seq: int
    element: Any
    context: Any
    payload: bytes


@dataclass
class _Helper:
    process: multiprocessing.process.BaseProcess
    sock: socket.socket
    progress: int  # the descriptor of its progress file
    outgoing: deque[memoryview] = field(default_factory=deque)
    incoming: bytearray = field(default_factory=bytearray)
    scratch: bytearray = field(default_factory=lambda: bytearray(_RECV_BYTES))


class IsolatedRunner:
    """Worker-side handle of one helper process running ``task`` (see the module doc).

    ``budgets_s[k]`` is the time budget of stage ``k`` of every element. Elements go to the
    helper in batches of up to ``batch`` elements and ``batch_bytes`` pickled bytes;
    ``submit`` and ``drain`` return the elements finished so far, each exactly once.
    """

    def __init__(
        self,
        task: HelperTask,
        *,
        budgets_s: Sequence[float],
        max_memory_mb: int | None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_in_flight_bytes: int = DEFAULT_MAX_IN_FLIGHT_BYTES,
        batch: int = DEFAULT_BATCH,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
    ) -> None:
        if not budgets_s or not all(b > 0 for b in budgets_s):
            raise ValueError(f"every stage budget must be > 0, got {tuple(budgets_s)}")
        if max_in_flight < 1 or batch < 1:
            raise ValueError(
                f"max_in_flight and batch must be >= 1, got {max_in_flight} and {batch}"
            )
        self._serialized_task = pickle.dumps(task, PROTOCOL)
        self._budgets = tuple(budgets_s)
        self._max_memory_mb = max_memory_mb
        self._max_in_flight = max_in_flight
        self._max_bytes = max_in_flight_bytes
        self._batch = min(batch, max_in_flight)
        self._batch_bytes = batch_bytes
        self._helper: _Helper | None = None
        self._next_seq = 0
        self._pending: list[_InFlight] = []  # submitted, not sent yet
        self._pending_bytes = 0
        self._in_flight: deque[_InFlight] = deque()  # sent, no outcome yet
        self._bytes_in_flight = 0
        # What the worker knows the helper is on: (seq, stage, since). At least the head's
        # clock; the progress record, read when this runs out, may say it moved on.
        self._clock: tuple[int, int, float] = (0, 0, 0.0)

    # -- public

    def start(self) -> None:
        """Start the helper now (so start-up is never charged to an element's budget)."""
        if self._helper is not None:
            return
        ctx = _helper_context()
        ours, theirs = socket.socketpair()
        progress = progress_file()
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
            socket.send_fds(ours, [b"p"], [progress])
            header = recv_exact(ours, HEADER.size)
            ready = recv_exact(ours, HEADER.unpack(header)[0]) if header else None
        except OSError:
            ready = None
        if ready is None or bytes(ready) != READY:
            ours.close()
            os.close(progress)
            _reap(process, kill=True)
            raise RuntimeError(
                "the isolation helper process could not start (exit code "
                f"{process.exitcode}); see the log above for its error."
            )
        ours.setblocking(False)
        self._helper = _Helper(process, ours, progress)

    def submit(self, element: Any, context: Any = None) -> list[Finished]:
        """Queue ``element``; returns what finished meanwhile (blocks while the queue is full)."""
        try:
            payload = pickle.dumps(element, PROTOCOL)
        except Exception as exc:  # cannot even be sent: this element alone fails
            return [Finished(element, context, failure=_raised(0, None, exc))]
        self.start()
        self._pending.append(_InFlight(-1, element, context, payload))
        self._pending_bytes += len(payload)
        if len(self._pending) < self._batch and self._pending_bytes < self._batch_bytes:
            return []
        return self._send_pending()

    def drain(self) -> list[Finished]:
        """Wait for every queued element; returns them."""
        finished = self._send_pending() if self._pending else []
        while self._in_flight:
            finished += self._pump(block=True)
        return finished

    def close(self) -> None:
        """Stop the helper (it exits when its socket closes); queued elements are dropped."""
        self._stop(kill=False)
        self._pending.clear()
        self._pending_bytes = 0
        self._in_flight.clear()
        self._bytes_in_flight = 0

    # -- internals

    def _send_pending(self) -> list[Finished]:
        """Send the pending batch once there is room for it in flight."""
        finished: list[Finished] = []
        while self._in_flight and (
            len(self._in_flight) + len(self._pending) > self._max_in_flight
            or self._bytes_in_flight + self._pending_bytes > self._max_bytes
        ):
            finished += self._pump(block=True)
        batch, self._pending, self._pending_bytes = self._pending, [], 0
        self._dispatch(batch)
        return finished + self._pump(block=False)

    def _dispatch(self, entries: list[_InFlight]) -> None:
        """Send ``entries`` to the helper, after everything in flight.

        They are numbered as they are sent, so numbers rise in the order the helper works.
        """
        self.start()
        helper = self._helper
        assert helper is not None
        for entry in entries:
            entry.seq = self._next_seq
            self._next_seq += 1
        if not self._in_flight:  # an idle helper: the first one's clock starts now
            self._clock = (entries[0].seq, 0, time.monotonic())
        self._in_flight.extend(entries)
        self._bytes_in_flight += sum(len(e.payload) for e in entries)
        # one frame, one send: the copy of a document is cheaper than a second system call
        frame = encode_batch([e.seq for e in entries], [e.payload for e in entries])
        helper.outgoing.append(memoryview(frame))

    def _pump(self, *, block: bool) -> list[Finished]:
        """Move bytes both ways; ``block``: until an element finishes (or fails)."""
        finished: list[Finished] = []
        while True:
            helper = self._helper
            assert helper is not None
            timeout = min(self._time_left(), self._poll_s()) if block else 0.0
            writers = [helper.sock] if helper.outgoing else []
            readable, writable, _ = select.select([helper.sock], writers, [], timeout)
            try:
                if writable:
                    self._write(helper)
                if readable:
                    self._read(helper, finished)
            except (_HelperDied, OSError):  # every outcome it sent has been read by now
                if self._in_flight:
                    finished.append(self._fail_current(CRASH))
                else:
                    self._stop(kill=True)
                return finished
            if not block or finished or not self._in_flight:
                return finished
            self._read_clock(helper)
            if self._time_left() <= 0:
                finished.append(self._fail_current(TIMEOUT))
                return finished

    def _time_left(self) -> float:
        _, stage, since = self._clock
        return max(0.0, since + self._budgets[stage] - time.monotonic())

    def _poll_s(self) -> float:
        """How long the worker may wait before it looks at the progress record again.

        Its clock cannot see a stage begin: a later stage with a shorter budget than the
        current one is caught within a quarter of that budget past its end.
        """
        later = self._budgets[self._clock[1] + 1 :]
        return min(later) / 4 if later else _NEVER

    def _read_clock(self, helper: _Helper) -> None:
        """Update the clock from the progress record: a later element, or a later stage.

        The worker's own clock of the head starts when it sent it to an idle helper or saw
        the outcome before it, never before the helper began it; the record has the time
        the helper did.
        """
        seen = read_progress(helper.progress, with_note=False)
        if seen is not None and seen.seq >= self._in_flight[0].seq:
            self._clock = (seen.seq, seen.stage, seen.started)

    def _write(self, helper: _Helper) -> None:
        while helper.outgoing:
            view = helper.outgoing[0]
            try:
                sent = helper.sock.send(view)
            except BlockingIOError:
                return
            except (BrokenPipeError, ConnectionResetError):
                # The helper is gone, but outcomes it sent before dying may still be unread:
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
            frame = bytes(buf[start + HEADER.size : end])
            start = end
            if frame[:1] == OUT_OF_MEMORY:  # the helper's last word: nothing follows
                finished.append(self._fail_current(RAISED, "MemoryError", "MemoryError()"))
                return
            self._receive(frame, finished)
        del buf[:start]

    def _receive(self, frame: bytes, finished: list[Finished]) -> None:
        reader = ReplyReader(frame)
        outcomes = decode_reply(frame)
        for done, outcome in enumerate(outcomes):
            if reader.broken:  # the rest cannot be read: the helper does them again
                rest = [self._in_flight.popleft() for _ in range(len(outcomes) - done)]
                self._bytes_in_flight -= sum(len(e.payload) for e in rest)
                self._dispatch(rest)
                break
            head = self._in_flight[0]
            ended = _ended(outcome, reader)
            finished.append(self._finish(Finished(head.element, head.context, *ended)))
        if self._in_flight and self._clock[0] < self._in_flight[0].seq:
            self._clock = (self._in_flight[0].seq, 0, time.monotonic())

    def _finish(self, done: Finished) -> Finished:
        """Retire the head."""
        head = self._in_flight.popleft()
        self._bytes_in_flight -= len(head.payload)
        return done

    def _fail_current(self, kind: str, exc_type: str = "", detail: str = "") -> Finished:
        """The element the helper was on hung, crashed or ran out of memory: fail it alone.

        The helper is stopped first, so its progress record is final: it names the element
        (the head unless the helper had finished the head without sending it yet), its stage
        and note. Everything else in flight goes to a fresh helper, in order.
        """
        head_seq = self._in_flight[0].seq
        exit_code, seen = self._stop(kill=True)
        failing = self._in_flight[0]
        stage, note = 0, None
        if seen is not None and seen.seq >= head_seq:
            failing = next((e for e in self._in_flight if e.seq == seen.seq), failing)
            stage, note = seen.stage, seen.note
        self._in_flight.remove(failing)
        self._bytes_in_flight -= len(failing.payload)
        if kind == CRASH:
            detail = f"helper exit code {exit_code}"
        failure = Failure(kind, stage, note, exc_type, detail)
        self._restart()
        return Finished(failing.element, failing.context, failure=failure)

    def _restart(self) -> None:
        """Replace the helper and send it every element still in flight, in order."""
        entries = list(self._in_flight)
        self._in_flight.clear()
        self._bytes_in_flight = 0
        batch: list[_InFlight] = []
        size = 0
        for entry in entries:
            if batch and (len(batch) >= self._batch or size >= self._batch_bytes):
                self._dispatch(batch)
                batch, size = [], 0
            batch.append(entry)
            size += len(entry.payload)
        if batch:
            self._dispatch(batch)

    def _stop(self, *, kill: bool) -> tuple[int | None, Progress | None]:
        """Stop the helper; returns its exit code (negative: the signal that ended it) and
        its last progress record."""
        helper, self._helper = self._helper, None
        if helper is None:
            return None, None
        helper.sock.close()
        exit_code = _reap(helper.process, kill=kill)
        try:
            seen = read_progress(helper.progress, with_note=True)
        finally:
            os.close(helper.progress)
        return exit_code, seen


def _ended(outcome: Outcome, reader: ReplyReader) -> tuple[Any, Failure | None]:
    """``(result, failure)`` of one outcome from the helper."""
    try:
        body = reader.load(outcome)
    except Exception as exc:  # a result the worker cannot rebuild fails its element
        return None, _raised(outcome.stage, _note(outcome), exc)
    if outcome.status == DONE:
        return body, None
    exc_type, detail = body
    return None, Failure(RAISED, outcome.stage, _note(outcome), exc_type, detail)


def _note(outcome: Outcome) -> Any:
    if not outcome.note:
        return None
    try:
        return pickle.loads(outcome.note)
    except Exception:  # the failure goes without its note
        return None


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
