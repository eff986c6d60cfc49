"""Size and blake3 digest of the part files an output lists in its manifest.

Why: an incremental run (``--previous``) carries records out of a previous output's part
files without parsing again, so it must know those files are the ones that run wrote
(docs/guide/limits.md, "Completeness of an output"). The writers pass their bytes through a
:class:`DigestSink` on the way to the file (no second read, no extra copy) and the
manifest lists each file's ``bytes`` and ``blake3``; :func:`digest_stream` recomputes
both from a file being read.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from blake3 import blake3

__all__ = ["READ_BLOCK", "DigestSink", "digest_bytes", "digest_stream"]

#: Bytes read at a time when a file is hashed (memory stays bounded by this).
READ_BLOCK = 1 << 20


class DigestSink:
    """A writable file object that hashes and counts what it forwards to ``sink``.

    Only ``write`` is forwarded (what pyarrow's writer calls); closing stays with whoever
    opened ``sink``.
    """

    def __init__(self, sink: Any) -> None:
        self._sink = sink
        self._hash = blake3()
        self.size = 0
        self.closed = False

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self._hash.update(view)
        self.size += len(view)
        self._sink.write(data)
        return len(view)

    def flush(self) -> None:
        """Nothing to do: the sink is flushed when its owner closes it."""

    def close(self) -> None:
        self.closed = True

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()


def digest_bytes(data: bytes) -> tuple[int, str]:
    """(size, blake3 hex) of ``data``."""
    return len(data), blake3(data).hexdigest()


def digest_stream(stream: BinaryIO) -> tuple[int, str]:
    """(size, blake3 hex) of everything left in ``stream``, read ``READ_BLOCK`` at a time."""
    h, size = blake3(), 0
    while block := stream.read(READ_BLOCK):
        h.update(block)
        size += len(block)
    return size, h.hexdigest()
