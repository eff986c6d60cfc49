# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: FileSystems is untyped.)
"""Sorted spill files: the external sort behind WriteChunks (no Beam transforms here).

Why: a runner that keeps PCollections in memory (the in-memory DirectRunner) would hold
every chunk row of a job at a grouping by shard. Instead WriteChunks writes each worker's
rows, sorted, to spill files in a run-private temporary directory inside the output, and
each shard writer streams a k-way merge of them. Memory is then one spill buffer per
worker and one read buffer per open spill file, whatever the corpus size.

An entry is one row: ``chunk_id`` (UTF-8), NUL, the encoded row (kebab_chunk/beam/coders.py),
so bytes order is ``chunk_id`` order and equal entries are identical records. A spill file
is its entries in bytes order, each preceded by its length (4 bytes, little endian). A
run file is the same, ordered by shard first: each shard's entries are one contiguous
segment, in bytes order.
Every file name is a hash of what defines its content (the rows, or the names of the
files a merge read), so a retried bundle rewrites the same file under the same name.
Everything goes through FileSystems, so ``gs://`` and ``s3://`` outputs work the same.
"""

from __future__ import annotations

import heapq
import struct
from collections import defaultdict
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from blake3 import blake3

from kebab_chunk.output.layout import TEMP_PREFIX, chunk_shard
from kebab_chunk.output.spill_entry import SEP, entry_id, entry_record, make_entry

__all__ = [
    "DEFAULT_FAN_IN",
    "SEP",
    "TEMP_PREFIX",
    "Segment",
    "entry_id",
    "entry_record",
    "make_entry",
    "merge_to_fan_in",
    "merged_entries",
    "merged_segments",
    "remove_temp_dir",
    "split_by_shard",
    "write_spill",
]

#: Most spill files a merge reads at once; more are first merged in passes.
DEFAULT_FAN_IN = 256
_LENGTH = struct.Struct("<I")
#: Bytes before each entry in a spill or run file (its length).
SPILL_HEADER = _LENGTH.size
_RAW = CompressionTypes.UNCOMPRESSED
_MIME = "application/octet-stream"
#: One shard's entries in a run file: (path, byte offset, byte length).
Segment = tuple[str, int, int]


def _name(kind: str, *parts: bytes) -> str:
    return _file_name(kind, _hasher(parts))


def _hasher(parts: Sequence[bytes]) -> blake3:
    """blake3 (the ids' hash, and several times blake2b's speed on a spill's megabytes)
    of the length-prefixed ``parts``."""
    return blake3(_framed(parts))


def _file_name(kind: str, digest: blake3) -> str:
    return f"{kind}-{digest.hexdigest(length=16)}.bin"


def write_spill(directory: str, label: str, entries: list[bytes]) -> str:
    """Sort ``entries`` (in place) and write them as one spill file; returns its path.

    Named by a hash of the label and the entries, taken in a first pass, so the file is
    written a block of entries at a time without a second in-memory copy of the buffer.
    """
    entries.sort()
    # the file's bytes are the length-prefixed entries, which is also what the name hashes
    # after the label: both passes frame them a block at a time (no second copy of the
    # buffer, and a few calls per block rather than per entry)
    digest = _hasher([label.encode()])
    for block in _blocks(entries):
        digest.update(block)
    path = f"{directory}/{_file_name('spill', digest)}"
    with FileSystems.create(path, mime_type=_MIME, compression_type=_RAW) as f:
        for block in _blocks(entries):
            f.write(block)
    return path


def _framed(parts: Sequence[bytes]) -> bytes:
    pack = _LENGTH.pack
    return b"".join([pack(len(part)) + part for part in parts])


def _blocks(entries: Sequence[bytes], size: int = 1024) -> Iterator[bytes]:
    for start in range(0, len(entries), size):
        yield _framed(entries[start : start + size])


def _read(path: str, offset: int = 0, length: int | None = None) -> Generator[bytes, None, None]:
    """The entries of one file (or of its ``length`` bytes from ``offset``), as a stream."""
    with FileSystems.open(path, mime_type=_MIME, compression_type=_RAW) as f:
        if offset:
            f.seek(offset)
        left = length
        while left is None or left > 0:
            header = f.read(_LENGTH.size)
            if not header and left is None:
                return
            size = _LENGTH.unpack(header)[0] if len(header) == _LENGTH.size else -1
            entry: bytes = f.read(size) if size >= 0 else b""
            if len(entry) != size or (left is not None and size + _LENGTH.size > left):
                raise OSError(f"spill file {path} is truncated; rerun the job with --overwrite.")
            if left is not None:
                left -= _LENGTH.size + size
            yield entry


def merged_entries(paths: Sequence[str]) -> Iterator[bytes]:
    """Every entry of ``paths`` in bytes order (a k-way merge; one open file per path)."""
    return _merge([_read(p) for p in paths])


def merged_segments(chains: Sequence[Sequence[Segment]]) -> Iterator[bytes]:
    """Every entry of ``chains`` in bytes order: a k-way merge of the chains, each chain
    a list of segments whose concatenation is sorted (one open file per chain)."""
    return _merge([_chain(segments) for segments in chains])


def _chain(segments: Sequence[Segment]) -> Generator[bytes, None, None]:
    for path, offset, length in segments:
        yield from _read(path, offset, length)


def _merge(streams: list[Generator[bytes, None, None]]) -> Iterator[bytes]:
    with ExitStack() as stack:  # closes every file when the merge ends or is abandoned
        for stream in streams:
            stack.enter_context(closing(stream))
        yield from heapq.merge(*streams)


def split_by_shard(
    directory: str, label: str, paths: Sequence[str], count: int, budget: int
) -> Iterator[tuple[int, int, Segment]]:
    """Merge ``paths`` and split the stream by ``chunk_shard(chunk_id, count)``.

    Entries are buffered up to ``budget`` bytes, then written as one run file (shard by
    shard); yields ``(shard, run number, segment)`` for every non-empty segment. A shard's
    segments, in run order, hold its entries of ``paths`` in bytes order. Run files are
    named after the label, the inputs and the run number, so a retry rewrites them.
    """
    buffers: dict[int, list[bytes]] = defaultdict(list)
    size = run = 0
    for entry in merged_entries(paths):
        buffers[chunk_shard(entry_id(entry), count)].append(entry)
        size += len(entry)
        if size >= budget:
            yield from _write_run(directory, (label, *paths, str(run)), run, buffers)
            buffers, size, run = defaultdict(list), 0, run + 1
    if buffers:
        yield from _write_run(directory, (label, *paths, str(run)), run, buffers)


def _write_run(
    directory: str, names: Sequence[str], run: int, buffers: dict[int, list[bytes]]
) -> list[tuple[int, int, Segment]]:
    path = f"{directory}/{_name('run', *(n.encode() for n in names))}"
    segments = []
    offset = 0
    with FileSystems.create(path, mime_type=_MIME, compression_type=_RAW) as f:
        for shard in sorted(buffers):
            start = offset
            for entry in buffers[shard]:
                f.write(_LENGTH.pack(len(entry)) + entry)
                offset += _LENGTH.size + len(entry)
            segments.append((shard, run, (path, start, offset - start)))
    return segments


def _write_merged(directory: str, paths: Sequence[str]) -> str:
    path = f"{directory}/{_name('merge', *(p.encode() for p in paths))}"
    with FileSystems.create(path, mime_type=_MIME, compression_type=_RAW) as f:
        for entry in merged_entries(paths):
            f.write(_LENGTH.pack(len(entry)) + entry)
    return path


def merge_to_fan_in(
    directory: str, paths: Iterable[str], fan_in: int, most: int | None = None
) -> list[str]:
    """Merge ``paths`` in passes of ``fan_in`` files until at most ``most`` (default
    ``fan_in``) remain.

    The result holds the same entries, so a merge over it equals a merge over ``paths``.
    Deterministic: paths are sorted, and a merged file is named after its inputs.
    """
    if fan_in < 2:
        raise ValueError(f"fan_in must be >= 2, got {fan_in}")
    current = sorted(paths)
    while len(current) > (fan_in if most is None else most):
        current = sorted(
            _write_merged(directory, current[i : i + fan_in])
            for i in range(0, len(current), fan_in)
        )
    return current


def remove_temp_dir(directory: str) -> None:
    """Delete a run's temporary directory and everything in it (no error if absent)."""
    if FileSystems.get_scheme(directory) is None:
        if FileSystems.exists(directory):
            FileSystems.delete([directory])
        return
    found = FileSystems.match([directory.rstrip("/") + "/**"])[0].metadata_list
    if found:
        FileSystems.delete([m.path for m in found])
