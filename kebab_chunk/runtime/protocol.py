"""What the worker and an isolation helper send each other, and the helper's progress record.

Both sides of one socket (:mod:`kebab_chunk.runtime.supervisor` is the worker's,
:mod:`kebab_chunk.runtime.helper` the helper's). Every frame is an 8-byte length and a
payload. Worker to helper: a *batch*, documents each with its number (``seq``) and pickled
on its own (so one that cannot be read fails alone). Helper to worker: ``READY`` once,
then *replies*, each the outcomes of the next documents of a batch (their results written
by one pickler, see :class:`ReplyWriter`), and ``OUT_OF_MEMORY`` as a helper's last word.
An outcome carries the stage it ended in and the note of that stage, so a result the
worker cannot rebuild still fails with them.

Why batches, not one frame per document: each frame costs both processes a pickle, a
system call and a wake-up, about 60-90 µs of CPU per document, which for the small
documents that dominate real corpora is a third of the work itself
(benchmarks/experiments/isolation_batching/).

The progress record is how a batch keeps each document's own time budget: before a
document and at each of its stages the helper overwrites one record in a small in-memory
file it shares with the worker (``seq``, ``stage``, when it started by the system's
monotonic clock, and the stage's note), a store into a shared mapping: no system call, no
wake-up. The worker
reads it only when a budget may have run out and after a helper died, so it names the very
document and stage that hung, crashed or ran out of memory, with its note.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import struct
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DONE",
    "HEADER",
    "OUT_OF_MEMORY",
    "PROTOCOL",
    "RAISED_IN_TASK",
    "READY",
    "REPLY",
    "Outcome",
    "Progress",
    "ProgressWriter",
    "ReplyReader",
    "ReplyWriter",
    "decode_batch",
    "decode_reply",
    "encode_batch",
    "progress_file",
    "read_progress",
]

HEADER = struct.Struct("!Q")  # every frame: 8-byte length, then the payload
PROTOCOL = pickle.HIGHEST_PROTOCOL

#: First byte of a helper's frame.
READY, REPLY, OUT_OF_MEMORY = b"R", b"D", b"M"
#: ``Outcome.status``: the task returned (body: its pickled result) or raised (body: the
#: pickled exception class name and repr).
DONE, RAISED_IN_TASK = 0, 1

_COUNT = struct.Struct("<I")
_INDEXED = struct.Struct("<qQ")  # seq, length
_OUTCOME = struct.Struct("<BIIQ")  # status, stage, note length, body length


# ------------------------------------------------------------------ batches


def encode_batch(seqs: Sequence[int], payloads: Sequence[bytes]) -> bytes:
    """The frame (header included) of the documents numbered ``seqs``, in that order."""
    index = b"".join(_INDEXED.pack(q, len(p)) for q, p in zip(seqs, payloads, strict=True))
    body = b"".join((_COUNT.pack(len(payloads)), index, *payloads))
    return HEADER.pack(len(body)) + body


def decode_batch(payload: bytes) -> list[tuple[int, memoryview]]:
    """``(seq, document)`` pairs of a batch frame's payload (views into it)."""
    (count,) = _COUNT.unpack_from(payload)
    view = memoryview(payload)
    at = _COUNT.size + count * _INDEXED.size
    found = []
    for i in range(count):
        seq, size = _INDEXED.unpack_from(payload, _COUNT.size + i * _INDEXED.size)
        found.append((seq, view[at : at + size]))
        at += size
    return found


# ------------------------------------------------------------------ replies


@dataclass(frozen=True)
class Outcome:
    """One document's end as the helper reported it: ``body`` (the result, or the exception
    class name and repr) still pickled, at ``body`` .. ``end`` of the reply; ``note`` too."""

    status: int
    stage: int
    note: memoryview
    body: int
    end: int


class _Appender:
    """A file for the pickler that appends to a bytearray."""

    __slots__ = ("write",)

    def __init__(self, buffer: bytearray) -> None:
        self.write = buffer.extend


class ReplyWriter:
    """Collects the outcomes of documents of a batch, in its order, into one reply frame.

    Their bodies are written by one pickler, so a class or string that several results
    share is written once per reply: about half the pickling on both sides (results hold
    a handful of classes and many small strings). The reader needs the same stream
    whole, so a body that fails to pickle ends the writer: ``add`` removes what it wrote,
    raises, and leaves :attr:`broken` set; the caller sends what it has and starts a new one.
    """

    def __init__(self) -> None:
        self.count = 0
        self.opened = time.monotonic()
        self.broken = False
        self._buffer = bytearray(HEADER.size + 1 + _COUNT.size)
        self._pickler = pickle.Pickler(_Appender(self._buffer), PROTOCOL)

    def __len__(self) -> int:
        return len(self._buffer)

    def add(self, status: int, stage: int, note: bytes, body: Any) -> None:
        buffer = self._buffer
        mark = len(buffer)
        buffer += _OUTCOME.pack(status, stage, len(note), 0)
        buffer += note
        start = len(buffer)
        try:
            self._pickler.dump(body)
        except BaseException:
            del buffer[mark:]
            self.broken = True
            raise
        _OUTCOME.pack_into(buffer, mark, status, stage, len(note), len(buffer) - start)
        self.count += 1

    def frame(self) -> bytearray:
        """The whole frame, header included (built in place: no copy of the outcomes)."""
        buffer = self._buffer
        HEADER.pack_into(buffer, 0, len(buffer) - HEADER.size)
        buffer[HEADER.size : HEADER.size + 1] = REPLY
        _COUNT.pack_into(buffer, HEADER.size + 1, self.count)
        return buffer


def decode_reply(payload: bytes) -> list[Outcome]:
    """The outcomes of a reply frame's payload, in the order the documents were sent."""
    (count,) = _COUNT.unpack_from(payload, 1)
    view = memoryview(payload)
    at = 1 + _COUNT.size
    found = []
    for _ in range(count):
        status, stage, note_size, body_size = _OUTCOME.unpack_from(payload, at)
        at += _OUTCOME.size
        note = view[at : at + note_size]
        at += note_size
        found.append(Outcome(status, stage, note, at, at + body_size))
        at += body_size
    return found


class ReplyReader:
    """Rebuilds the bodies of one reply, in order, with one unpickler (see ReplyWriter).

    After a body fails to load, the unpickler's memo may no longer match the stream, so
    :meth:`load` refuses every later body of the reply (``broken``).
    """

    def __init__(self, payload: bytes) -> None:
        self._file = io.BytesIO(payload)
        self._unpickler = pickle.Unpickler(self._file)
        self.broken = False

    def load(self, outcome: Outcome) -> Any:
        if self.broken:
            raise RuntimeError("an earlier result of this reply could not be rebuilt")
        self._file.seek(outcome.body)
        try:
            body = self._unpickler.load()
            if self._file.tell() != outcome.end:
                raise pickle.UnpicklingError("a result did not end where its length said")
        except BaseException:
            self.broken = True
            raise
        return body


# ------------------------------------------------------------------ progress

# version, seq, stage, started (monotonic seconds), note length, version again: a reader
# that sees two different versions read the record while it was being written.
_PROGRESS = struct.Struct("<QqIdQQ")


@dataclass(frozen=True)
class Progress:
    """What the helper last said it was doing: document ``seq`` in ``stage`` since ``started``."""

    seq: int
    stage: int
    started: float
    note: Any = None


#: The part of the progress file the helper maps (a longer note is written past it).
_MAPPED = 64 * 1024


def progress_file() -> int:
    """A new in-memory file for one helper's progress record (its descriptor): zeros, so
    it reads as no record until the helper writes one."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("kebab-chunk-progress", os.MFD_CLOEXEC)
    else:  # pragma: no cover - not Linux
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    os.ftruncate(fd, _MAPPED)  # sparse: no memory until written
    return fd


class ProgressWriter:
    """The helper's side of the record, written through a shared mapping of the file.

    Why a mapping: a ``pwrite`` per document start and per stage cost 6 µs each here (a
    system call in a VM); a store into the mapping costs no call at all.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._map = mmap.mmap(fd, _MAPPED)
        self._version = 0

    def write(self, seq: int, stage: int, note: bytes = b"") -> None:
        self._version += 1
        v = self._version
        head = _PROGRESS.pack(v, seq, stage, time.monotonic(), len(note), v)
        if _PROGRESS.size + len(note) <= _MAPPED:
            self._map[: _PROGRESS.size + len(note)] = head + note if note else head
        else:  # the note first, so a record never points at a note not written yet
            os.pwrite(self._fd, note, _PROGRESS.size)
            self._map[: _PROGRESS.size] = head


def read_progress(fd: int, *, with_note: bool) -> Progress | None:
    """The record (None before the first document); its note only if ``with_note``.

    The header is read again while it is being overwritten; read the note only from a
    helper that has stopped, when the record can no longer change.
    """
    for _ in range(100):
        head = os.pread(fd, _PROGRESS.size, 0)
        if len(head) < _PROGRESS.size:
            return None
        version, seq, stage, started, note_size, again = _PROGRESS.unpack(head)
        if version == 0:  # nothing written yet
            return None
        if version == again:
            break
    else:  # pragma: no cover - a writer would have to rewrite it 100 times in a row
        return None
    note = None
    if with_note and note_size:
        try:
            note = pickle.loads(os.pread(fd, note_size, _PROGRESS.size))
        except Exception:  # a note the worker cannot rebuild: the failure goes without it
            note = None
    return Progress(seq, stage, started, note)
