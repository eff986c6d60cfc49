"""The isolation helper process itself: memory guard, then one batch after another.

Beam-free on purpose (see :mod:`kebab_chunk.runtime.supervisor` for the worker side): the
forkserver preloads only this module, and a helper imports only what its task needs (the
parsers and chunkers), so a helper starts in a fraction of the time and memory of a Beam
worker. What travels both ways is in :mod:`kebab_chunk.runtime.protocol`.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from kebab_chunk.runtime.gc_freeze import freeze_process
from kebab_chunk.runtime.protocol import (
    DONE,
    HEADER,
    OUT_OF_MEMORY,
    PROTOCOL,
    RAISED_IN_TASK,
    READY,
    ProgressWriter,
    ReplyWriter,
    decode_batch,
)

__all__ = [
    "FrameReader",
    "HelperTask",
    "helper_main",
    "limit_memory",
    "recv_exact",
]

_log = logging.getLogger(__name__)
#: A reply goes out once it holds this many bytes or this much work, even before its batch
#: is done: what a helper that then dies had finished but not sent is done again, so this
#: bounds the work a failure throws away (and a slow document is not held back).
REPLY_BYTES = 4 * 1024 * 1024
REPLY_WAIT_S = 0.005


def _address_space_bytes() -> int | None:
    """This process's current virtual memory size, or None where /proc is unavailable."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def limit_memory(max_memory_mb: int | None) -> bool:
    """Cap this process's address space at its current size plus ``max_memory_mb`` MiB.

    Relative to the current size, because what a process maps but never touches (thread
    stacks, shared libraries) varies by runner. Returns False (and logs a warning) where
    ``RLIMIT_AS`` or ``/proc`` is unavailable, i.e. outside Linux. Never call it in a Beam
    worker itself: the cap would apply to the whole worker.
    """
    if max_memory_mb is None:
        return False
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        _log.warning("memory guard unavailable on this platform; --max-memory-mb ignored")
        return False
    current = _address_space_bytes()
    if current is None:  # pragma: no cover - macOS and others without /proc
        _log.warning("memory guard unavailable on this platform; --max-memory-mb ignored")
        return False
    soft = current + max_memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return True


class HelperTask(Protocol):
    """The work a helper does: ``setup`` once per helper, ``run`` once per element.

    ``run`` calls ``enter(stage, note)`` when it moves on to stage ``stage`` (1, 2, ...) of
    the element; ``note`` (small, picklable) is handed back with a failure in that stage.
    Tasks are pickled with Beam's pickler, so they must be importable on workers.
    """

    def setup(self) -> None: ...

    def run(self, element: Any, enter: Callable[[int, Any], None]) -> Any: ...


def recv_exact(sock: socket.socket, n: int) -> bytearray | None:
    """``n`` bytes from a blocking socket, or None at end of stream."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return buf


class FrameReader:
    """Frames from a blocking socket, read ahead into one buffer: the worker sends
    documents ahead of the one being chunked, so one ``recv`` usually brings several
    frames (two per frame, header then payload, would be a system call each)."""

    def __init__(self, sock: socket.socket, chunk: int = 1 << 20) -> None:
        self._sock = sock
        self._scratch = bytearray(chunk)
        self._buffer = bytearray()
        self._start = 0

    def next_frame(self) -> bytes | None:
        """The next frame's payload, or None at end of stream (a frame cut short included)."""
        while True:
            buffer, start = self._buffer, self._start
            if len(buffer) - start >= HEADER.size:
                (size,) = HEADER.unpack_from(buffer, start)
                end = start + HEADER.size + size
                if len(buffer) >= end:
                    with memoryview(buffer) as view:
                        payload = bytes(view[start + HEADER.size : end])
                    self._start = end
                    if end == len(buffer):
                        buffer.clear()
                        self._start = 0
                    return payload
            if start:  # keep only the unread part
                del buffer[:start]
                self._start = 0
            received = self._sock.recv_into(self._scratch)
            if not received:
                return None
            buffer += memoryview(self._scratch)[:received]


def die_with(pid: int) -> None:
    """End this process as soon as process ``pid`` (the worker that owns it) has ended.

    Why: the helper's time budget is enforced by the worker; a worker killed outright
    (SIGKILL, the OOM killer) cannot enforce it, and a helper busy on a slow document
    would otherwise run on for minutes. The helper's own parent is the forkserver, not the
    worker, so the kernel's parent-death signal does not apply. A daemon thread waits on a
    pidfd of the worker (Linux 5.3+, no polling, no pid-reuse race), else polls it every
    half second, and exits the process with status 70 without cleanup.
    """
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(_ORPHANED)
    except (AttributeError, OSError):  # not Linux, or an old kernel
        pidfd = None

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        else:  # pragma: no cover - exercised only where pidfd_open is missing
            while True:
                time.sleep(0.5)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
        os._exit(_ORPHANED)

    threading.Thread(target=watch, name="kebab-chunk-watch-worker", daemon=True).start()


#: Exit status of a helper whose worker died (EX_SOFTWARE).
_ORPHANED = 70


def helper_main(
    sock: socket.socket,
    serialized_task: bytes,
    max_memory_mb: int | None,
    worker_pid: int | None = None,
) -> None:
    """The helper's whole life: task setup, memory guard, then one batch after another.

    The first thing on ``sock`` is the descriptor of the progress file (see
    :mod:`kebab_chunk.runtime.protocol`). The guard comes after the setup (which imports
    the parsers and chunkers), so ``max_memory_mb`` is what one document may add, not what
    the code needs to load. Ends when the worker closes its end of the socket, or at once
    when the worker process ``worker_pid`` ends (:func:`die_with`). SIGINT is ignored:
    Ctrl-C reaches every process of the terminal's process group, and the worker's stop
    ends the helper anyway; without this, a helper busy on a document would print a
    ``KeyboardInterrupt`` traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if worker_pid is not None:
        die_with(worker_pid)
    # A Rust extension (pyromark) that runs out of memory under the guard panics; printing a
    # backtrace then needs memory too and can deadlock, turning an out-of-memory document into
    # a hang that only the time budget ends. Without the backtrace it fails at once.
    os.environ["RUST_BACKTRACE"] = "0"
    _, fds, _, _ = socket.recv_fds(sock, 1, 1)
    progress = ProgressWriter(fds[0])
    task: HelperTask = pickle.loads(serialized_task)
    task.setup()
    freeze_process()  # what setup imported lives as long as the helper (gc_freeze.py)
    # Set aside before the guard, given back when memory runs out, so that the helper can
    # still report the document as out of memory instead of dying without a word.
    reserve = bytearray(_RESERVE_BYTES)
    frames = FrameReader(sock)  # its read-ahead buffer is no document's memory either
    limit_memory(max_memory_mb)
    sock.sendall(HEADER.pack(len(READY)) + READY)
    while True:
        try:
            payload = frames.next_frame()
            if payload is None:
                return
            _work_through(task, payload, progress, sock)
            del payload
        except MemoryError:
            del reserve  # given back before anything else is allocated
            gc.collect()
            # The worker reads which document it was from the progress record, fails it
            # with memory_limit, and starts a fresh helper for the rest.
            sock.sendall(_OUT_OF_MEMORY_FRAME)
            return


#: Address space set aside for reporting an out-of-memory document.
_RESERVE_BYTES = 4 * 1024 * 1024
#: Sent when a document runs out of memory; built before the guard exists.
_OUT_OF_MEMORY_FRAME = HEADER.pack(len(OUT_OF_MEMORY)) + OUT_OF_MEMORY


def _work_through(
    task: HelperTask, payload: bytes, progress: ProgressWriter, sock: socket.socket
) -> None:
    """Answer one batch in order; a reply goes out at the end, or earlier when it is full.

    A ``MemoryError`` propagates (what was not sent yet is lost; the worker has it redone).
    """
    documents = decode_batch(payload)
    reply = ReplyWriter()
    last = len(documents) - 1
    for offset, (seq, document) in enumerate(documents):
        status, stage, note, body = _answer(task, document, progress, seq)
        try:
            reply.add(status, stage, note, body)
        except MemoryError:
            raise
        except Exception as exc:  # a result that cannot be pickled fails its document alone
            if reply.count:
                sock.sendall(reply.frame())
            reply = ReplyWriter()  # the broken one's stream is unusable
            reply.add(RAISED_IN_TASK, stage, note, (type(exc).__name__, repr(exc)))
        del body
        if (
            offset == last
            or len(reply) >= REPLY_BYTES
            or time.monotonic() - reply.opened >= REPLY_WAIT_S
        ):
            sock.sendall(reply.frame())  # all or nothing: the frame is built before it is sent
            reply = ReplyWriter()


class _Stages:
    """``enter`` for one document: each stage it enters is written to the progress record."""

    __slots__ = ("_progress", "note", "seq", "stage")

    def __init__(self, progress: ProgressWriter, seq: int) -> None:
        self._progress, self.seq, self.stage, self.note = progress, seq, 0, b""
        progress.write(seq, 0)

    def __call__(self, stage: int, note: Any) -> None:
        pickled = pickle.dumps(note, PROTOCOL)
        self._progress.write(self.seq, stage, pickled)
        self.stage, self.note = stage, pickled


def _answer(
    task: HelperTask, document: memoryview, progress: ProgressWriter, seq: int
) -> tuple[int, int, bytes, Any]:
    """The outcome of document ``seq``: its result, or what escaped the task (class name and
    repr), with the stage it ended in and that stage's pickled note.

    A ``MemoryError`` propagates: the caller then sends the prebuilt out-of-memory frame and
    the helper exits.
    """
    stages = _Stages(progress, seq)
    try:
        return DONE, stages.stage, stages.note, task.run(pickle.loads(document), stages)
    except MemoryError:
        raise
    except Exception as exc:  # reported; the helper stays usable
        return RAISED_IN_TASK, stages.stage, stages.note, (type(exc).__name__, repr(exc))
