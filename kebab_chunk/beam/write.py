# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``WriteChunks`` and ``WriteErrors``: deterministic Parquet files through FileSystems.

Why not ``WriteToParquet``: it writes rows in bundle order under runner-chosen shard names,
so two runs of the same input give different files. Here each label's chunks are hashed
by ``chunk_id`` into ``n = ceil(rows / rows_per_file)`` shards, each shard is grouped on
one worker, sorted by ``chunk_id`` and written as
``chunks/chunker_version=<label>/part-<i>-of-<n>.parquet``. Same input, same files, byte
for byte, on any runner; a retried bundle rewrites the identical file. Every label of the
run gets at least one (possibly empty) part file, so readers never miss a partition.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsDict, PCollection
from apache_beam.transforms import combiners

from kebab_chunk.beam import metrics
from kebab_chunk.beam.records import ErrorRecord, WrittenFile
from kebab_chunk.beam.schema import PARTITION_COLUMN, chunks_table, errors_table, parquet_bytes
from kebab_chunk.model import Chunk

__all__ = ["DEFAULT_ROWS_PER_FILE", "WriteChunks", "WriteErrors", "part_name"]

DEFAULT_ROWS_PER_FILE = 50_000

_ShardKey = tuple[str, int, int]  # (label, shard index, shard count)


def part_name(index: int, count: int) -> str:
    return f"part-{index:05d}-of-{count:05d}.parquet"


def _shard_count(rows: int, rows_per_file: int) -> int:
    return max(1, math.ceil(rows / rows_per_file))


def _write(output: str, relative: str, data: bytes) -> None:
    with FileSystems.create(f"{output}/{relative}", mime_type="application/octet-stream") as f:
        f.write(data)


class _AssignShardFn(beam.DoFn):
    def __init__(self, rows_per_file: int) -> None:
        self._rows_per_file = rows_per_file

    def process(
        self, chunk: Chunk, counts: Mapping[str, int]
    ) -> Iterator[tuple[_ShardKey, Chunk | None]]:
        label = chunk.chunker_version
        n = _shard_count(counts[label], self._rows_per_file)
        yield (label, int(chunk.chunk_id[:12], 16) % n, n), chunk


def _shard_markers(
    label: str, counts: Mapping[str, int], rows_per_file: int
) -> Iterator[tuple[_ShardKey, Chunk | None]]:
    """One empty marker per shard, so every shard file exists even with no rows."""
    n = _shard_count(counts.get(label, 0), rows_per_file)
    for i in range(n):
        yield (label, i, n), None


class _WritePartFn(beam.DoFn):
    def __init__(self, output: str) -> None:
        self._output = output

    def process(self, element: tuple[_ShardKey, Iterable[Chunk | None]]) -> Iterator[WrittenFile]:
        (label, index, count), items = element
        chunks = [c for c in items if c is not None]
        relative = f"chunks/{PARTITION_COLUMN}={label}/{part_name(index, count)}"
        _write(self._output, relative, parquet_bytes(chunks_table(chunks)))
        metrics.inc(metrics.keyed("chunks", label), len(chunks))
        yield WrittenFile(relative, len(chunks))


class WriteChunks(beam.PTransform[PCollection[Chunk], PCollection[WrittenFile]]):
    """Write validated chunks under ``OUTPUT/chunks/chunker_version=<label>/``.

    ``labels`` are the run's labels (each gets a partition even when it has no chunks).
    Output: one WrittenFile per part file.
    """

    def __init__(
        self, output: str, labels: Sequence[str], *, rows_per_file: int = DEFAULT_ROWS_PER_FILE
    ) -> None:
        super().__init__()
        if rows_per_file <= 0:
            raise ValueError(f"rows_per_file must be > 0, got {rows_per_file}")
        self._output = output.rstrip("/")
        self._labels = tuple(labels)
        self._rows_per_file = rows_per_file

    def expand(self, chunks: PCollection[Chunk]) -> PCollection[WrittenFile]:
        counts = AsDict(
            chunks
            | "Label of each chunk" >> beam.Map(lambda c: c.chunker_version)
            | "Count chunks per label" >> combiners.Count.PerElement()
        )
        keyed = chunks | "Assign shards" >> beam.ParDo(_AssignShardFn(self._rows_per_file), counts)
        markers = (
            chunks.pipeline
            | "Run labels" >> beam.Create(self._labels)
            | "Shard markers" >> beam.FlatMap(_shard_markers, counts, self._rows_per_file)
        )
        written: PCollection[WrittenFile] = (
            (keyed, markers)
            | "Merge shards and markers" >> beam.Flatten()
            | "Group shards" >> beam.GroupByKey()
            | "Write part files" >> beam.ParDo(_WritePartFn(self._output))
        )
        return written


class _WriteErrorsFn(beam.DoFn):
    def __init__(self, output: str) -> None:
        self._output = output

    def process(self, errors: list[ErrorRecord]) -> Iterator[WrittenFile]:
        relative = f"errors/{part_name(0, 1)}"
        _write(self._output, relative, parquet_bytes(errors_table(errors)))
        for error in errors:
            metrics.inc(metrics.keyed("errors", f"{error.stage}/{error.error_type}"))
        yield WrittenFile(relative, len(errors))


class WriteErrors(beam.PTransform[PCollection[ErrorRecord], PCollection[WrittenFile]]):
    """Write every dead-letter row to ``OUTPUT/errors/part-00000-of-00001.parquet``.

    Error rows are one per failed input, so one sorted file is enough; the file exists
    (empty) when nothing failed. Output: one WrittenFile.
    """

    def __init__(self, output: str) -> None:
        super().__init__()
        self._output = output.rstrip("/")

    def expand(self, errors: PCollection[ErrorRecord]) -> PCollection[WrittenFile]:
        written: PCollection[WrittenFile] = (
            errors
            | "Gather error rows" >> combiners.ToList()
            | "Write error file" >> beam.ParDo(_WriteErrorsFn(self._output))
        )
        return written
