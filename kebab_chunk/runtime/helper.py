"""The isolation helper process itself: memory guard, then one element after another.

Beam-free on purpose (see :mod:`kebab_chunk.runtime.supervisor` for the worker side): the
forkserver preloads only this module, and a helper imports only what its task needs (the
parsers and chunkers), so a helper starts in a fraction of the time and memory of a Beam
worker. Messages both ways are an 8-byte length and a standard pickle.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from kebab_chunk.runtime.gc_freeze import freeze_process

__all__ = [
    "HEADER",
    "MSG_DONE",
    "MSG_RAISED",
    "MSG_READY",
    "MSG_STAGE",
    "PROTOCOL",
    "HelperTask",
    "helper_main",
    "limit_memory",
    "recv_exact",
]

_log = logging.getLogger(__name__)
HEADER = struct.Struct("!Q")  # every message: 8-byte length, then a pickle
PROTOCOL = pickle.HIGHEST_PROTOCOL

# Messages from the helper: (MSG_READY,), (MSG_STAGE, stage, note), (MSG_DONE, result),
# (MSG_RAISED, exception class name, repr, whether the helper exits after this message).
MSG_READY, MSG_STAGE, MSG_DONE, MSG_RAISED = range(4)


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


def send_frame(sock: socket.socket, payload: bytes) -> None:
    header = HEADER.pack(len(payload))
    if len(payload) < 65536:
        sock.sendall(header + payload)
    else:
        sock.sendall(header)
        sock.sendall(payload)


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
    """The helper's whole life: task setup, memory guard, then one element after another.

    The guard comes after the setup (which imports the parsers and chunkers), so
    ``max_memory_mb`` is what one document may add, not what the code needs to load. Ends
    when the worker closes its end of the socket, or at once when the worker process
    ``worker_pid`` ends (:func:`die_with`). SIGINT is ignored: Ctrl-C reaches every process
    of the terminal's process group, and the worker's stop ends the helper anyway; without
    this, a helper busy on a document would print a ``KeyboardInterrupt`` traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if worker_pid is not None:
        die_with(worker_pid)
    # A Rust extension (pyromark) that runs out of memory under the guard panics; printing a
    # backtrace then needs memory too and can deadlock, turning an out-of-memory document into
    # a hang that only the time budget ends. Without the backtrace it fails at once.
    os.environ["RUST_BACKTRACE"] = "0"
    task: HelperTask = pickle.loads(serialized_task)
    task.setup()
    freeze_process()  # what setup imported lives as long as the helper (gc_freeze.py)
    # Set aside before the guard, given back when memory runs out, so that the helper can
    # still report the document as out of memory instead of dying without a word.
    reserve = bytearray(_RESERVE_BYTES)
    frames = FrameReader(sock)  # its read-ahead buffer is no document's memory either
    limit_memory(max_memory_mb)

    def enter(stage: int, note: Any) -> None:
        send_frame(sock, pickle.dumps((MSG_STAGE, stage, note), PROTOCOL))

    send_frame(sock, pickle.dumps((MSG_READY,), PROTOCOL))
    while True:
        try:
            payload = frames.next_frame()
            if payload is None:
                return
            message = _answer(task, payload, enter)
            del payload
            send_frame(sock, message)  # all or nothing: the frame is built before it is sent
        except MemoryError:
            del reserve  # given back before anything else is allocated
            gc.collect()
            # The worker fails the document with memory_limit and starts a fresh helper.
            sock.sendall(_OUT_OF_MEMORY_FRAME)
            return


#: Address space set aside for reporting an out-of-memory document.
_RESERVE_BYTES = 4 * 1024 * 1024
_OUT_OF_MEMORY = pickle.dumps((MSG_RAISED, "MemoryError", "MemoryError()", True), PROTOCOL)
#: Sent when even reporting a failure runs out of memory; built before the guard exists.
_OUT_OF_MEMORY_FRAME = HEADER.pack(len(_OUT_OF_MEMORY)) + _OUT_OF_MEMORY


def _answer(
    task: HelperTask, payload: bytes | bytearray, enter: Callable[[int, Any], None]
) -> bytes:
    """The pickled reply for one element: its result, or what escaped the task.

    A ``MemoryError`` (from the task, or while writing the reply) propagates: the caller
    then sends the prebuilt out-of-memory reply and the helper exits.
    """
    try:
        return pickle.dumps((MSG_DONE, task.run(pickle.loads(payload), enter)), PROTOCOL)
    except MemoryError:
        raise
    except Exception as exc:  # reported; the helper stays usable
        raised = (type(exc).__name__, repr(exc))
    return pickle.dumps((MSG_RAISED, *raised, False), PROTOCOL)
