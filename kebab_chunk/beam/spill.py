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
is its entries in bytes order, each preceded by its length (4 bytes, little endian).
Every file name is a hash of what defines its content (the rows, or the names of the
files a merge read), so a retried bundle rewrites the same file under the same name.
Everything goes through FileSystems, so ``gs://`` and ``s3://`` outputs work the same.
"""

from __future__ import annotations

import hashlib
import heapq
import struct
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from kebab_chunk.output.layout import TEMP_PREFIX

__all__ = [
    "DEFAULT_FAN_IN",
    "SEP",
    "TEMP_PREFIX",
    "entry_id",
    "entry_record",
    "make_entry",
    "merge_to_fan_in",
    "merged_entries",
    "remove_temp_dir",
    "write_spill",
]

#: Most spill files a merge reads at once; more are first merged in passes.
DEFAULT_FAN_IN = 256
SEP = b"\x00"
_LENGTH = struct.Struct("<I")
_RAW = CompressionTypes.UNCOMPRESSED
_MIME = "application/octet-stream"


def make_entry(chunk_id: str, data: bytes, line: str = "") -> bytes:
    """One spill entry: ``chunk_id``, NUL, the record's chunk index line (ASCII, no NUL:
    kebab_chunk/output/chunk_index.py), NUL, the encoded row. The line is made where the
    chunk is, so the shard writer, whose step holds the most memory, does not hash."""
    return chunk_id.encode() + SEP + line.encode("ascii") + SEP + data


def entry_record(record: bytes) -> tuple[str, bytes]:
    """(index line, encoded row) of what follows an entry's ``chunk_id`` and NUL."""
    cut = record.index(SEP)
    return record[:cut].decode("ascii"), record[cut + 1 :]


def entry_id(entry: bytes) -> bytes:
    """The ``chunk_id`` (UTF-8 bytes) of an entry."""
    return entry[: entry.index(SEP)]


def _name(kind: str, *parts: bytes) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(_LENGTH.pack(len(part)))
        digest.update(part)
    return f"{kind}-{digest.hexdigest()}.bin"


def write_spill(directory: str, label: str, entries: list[bytes]) -> str:
    """Sort ``entries`` (in place) and write them as one spill file; returns its path.

    Named by a hash of the label and the entries, taken in a first pass, so the file is
    written entry by entry without a second in-memory copy of the buffer.
    """
    entries.sort()
    path = f"{directory}/{_name('spill', label.encode(), *entries)}"
    with FileSystems.create(path, mime_type=_MIME, compression_type=_RAW) as f:
        for entry in entries:
            f.write(_LENGTH.pack(len(entry)) + entry)
    return path


def _read(path: str) -> Generator[bytes, None, None]:
    """The entries of one spill file, read as a stream."""
    with FileSystems.open(path, mime_type=_MIME, compression_type=_RAW) as f:
        while header := f.read(_LENGTH.size):
            size = _LENGTH.unpack(header)[0] if len(header) == _LENGTH.size else -1
            entry: bytes = f.read(size) if size >= 0 else b""
            if len(entry) != size:
                raise OSError(f"spill file {path} is truncated; rerun the job with --overwrite.")
            yield entry


def merged_entries(paths: Sequence[str]) -> Iterator[bytes]:
    """Every entry of ``paths`` in bytes order (a k-way merge; one open file per path)."""
    with ExitStack() as stack:  # closes every file when the merge ends or is abandoned
        streams = [stack.enter_context(closing(_read(p))) for p in paths]
        yield from heapq.merge(*streams)


def _write_merged(directory: str, paths: Sequence[str]) -> str:
    path = f"{directory}/{_name('merge', *(p.encode() for p in paths))}"
    with FileSystems.create(path, mime_type=_MIME, compression_type=_RAW) as f:
        for entry in merged_entries(paths):
            f.write(_LENGTH.pack(len(entry)) + entry)
    return path


def merge_to_fan_in(directory: str, paths: Iterable[str], fan_in: int) -> list[str]:
    """Merge ``paths`` in passes of ``fan_in`` files until at most ``fan_in`` remain.

    The result holds the same entries, so a merge over it equals a merge over ``paths``.
    Deterministic: paths are sorted, and a merged file is named after its inputs.
    """
    if fan_in < 2:
        raise ValueError(f"fan_in must be >= 2, got {fan_in}")
    current = sorted(paths)
    while len(current) > fan_in:
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
