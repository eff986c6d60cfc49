# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``WriteChunks`` and ``WriteErrors``: deterministic Parquet files through FileSystems.

Why not ``WriteToParquet``: it writes rows in bundle order under runner-chosen shard names,
so two runs of the same input give different files. Here each label's chunks are hashed
by ``chunk_id`` into ``n = ceil(rows / rows_per_file)`` shards, each shard is sorted by
``chunk_id`` and written as ``chunks/chunker_version=<label>/part-<i>-of-<n>.parquet``.
Same input, same files, byte for byte, on any runner; a retried bundle rewrites the
identical file. Every label of the run gets at least one (possibly empty) part file, so
readers never miss a partition.

Memory (an external sort, kebab_chunk/beam/spill.py): no step groups the rows. Each worker
buffers its chunks as compact encoded rows (kebab_chunk/beam/coders.py) up to
``spill_bytes`` per bundle and writes them, sorted, as spill files under
``OUTPUT/_tmp-<run token>/``; only ``(label, spill path, rows)`` travels on. The label's
row count (the sum of its spills' counts) gives ``n``. Its spill files are then cut into
at most ``fan_in`` groups of at most ``fan_in`` files (merged in passes first in the rare
case of more than ``fan_in`` squared); one work item per group merges its files and
splits them by shard into run files, and only segment references (path, offset, length)
travel on, grouped by shard. One work item per (label, shard) then streams a k-way merge
of its segments and writes the part file. Each spilled byte is read twice, however many
shards there are (a writer that read the label's whole merge to keep one shard made the
job quadratic: ~25 s per part file at 1,000,000 documents). The Parquet writer needs
the whole shard to give the same bytes as one ``write_table`` call (pyarrow starts a row
group per call), so the writer holds one shard as Arrow columns, bounded by
``rows_per_file``, not by the corpus. The temporary directory is deleted once
every part file is written, before ``written`` is emitted (so before the manifest).

The writer also enforces one record per (label, chunk_id): every duplicate of an id lands
in the same shard and, after the merge, next to each other. ``rows`` in the shard count is
the number of records offered, before identical duplicates collapse (they only arise from
a chunker bug).

Per source and shard the writer emits the rows it wrote and their chunk index entries
(kebab_chunk/output/chunk_index.py: id and two digests, computed from the decoded row it
already holds), which the documents table lists; the chunk records themselves never travel.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import PCollection
from apache_beam.transforms import combiners
from apache_beam.transforms.window import GlobalWindows

from kebab_chunk.beam import metrics
from kebab_chunk.beam.coders import ROW_FIELDS, decode_chunk, decode_row
from kebab_chunk.beam.spill import (
    DEFAULT_FAN_IN,
    SPILL_HEADER,
    TEMP_PREFIX,
    Segment,
    entry_id,
    entry_record,
    merge_to_fan_in,
    merged_segments,
    remove_temp_dir,
    split_by_shard,
    write_spill,
)
from kebab_chunk.beam.validate import conflict_errors
from kebab_chunk.elements import EncodedChunks, WrittenFile
from kebab_chunk.model import Chunk
from kebab_chunk.output.digest import DigestSink, digest_bytes
from kebab_chunk.output.layout import CHUNK_ROWS_PER_FILE, part_name, shard_count
from kebab_chunk.output.part_rows import PartRows, core_part_rows
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.output.schema import (
    PARTITION_COLUMN,
    errors_table,
    parquet_bytes,
    rows_table,
    write_parquet,
)
from kebab_chunk.output.spill_entry import row_entry, row_of

__all__ = [
    "CHUNK_COUNTS",
    "DEFAULT_ROWS_PER_FILE",
    "DEFAULT_SPILL_BYTES",
    "WriteChunks",
    "WriteErrors",
    "part_name",
]

DEFAULT_ROWS_PER_FILE = CHUNK_ROWS_PER_FILE
#: Encoded row bytes a worker buffers per bundle before it writes them as spill files.
DEFAULT_SPILL_BYTES = 16 * 1024 * 1024
#: Output tag of WriteChunks: ``(source_uri, (label, rows written, lines))`` per shard and
#: source, ``lines`` the chunk index of those rows as one packed text, in chunk_id order
#: (kebab_chunk/output/chunk_index.py, ``Packed``).
CHUNK_COUNTS = "chunk_counts"
ERRORS = "errors"

_SOURCE = ROW_FIELDS.index("source_uri")
#: A spill as it travels: (label, spill path, rows in it, its bytes).
_Spill = tuple[str, str, int, int]
#: A split work item: (label, shard count, group number, the group's spill paths).
_SplitTask = tuple[str, int, int, tuple[str, ...]]
#: A shard: (label, shard index, shard count).
_Shard = tuple[str, int, int]
#: Where a shard's rows are: (group number, run number, segment); None marks the shard.
_Located = tuple[int, int, Segment] | None
#: Output tag of the planner: every shard of every label, so an empty one gets its file.
_SHARDS = "shards"
#: Bytes a split buffers before it writes a run file, as a multiple of ``spill_bytes``:
#: larger runs mean fewer files and fewer segment references per shard.
_RUN_SPILLS = 4


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


_MALLOC_TRIM = _malloc_trim()


def _return_free_memory() -> None:
    """Give the C heap's free pages back to the OS (glibc's ``malloc_trim``; else nothing).

    Why: the rows of a whole bundle pass through the spill buffers, and glibc keeps the
    freed pages; without this the shard writer builds its table on top of that high-water
    mark instead of reusing it (measured: 46 MB returned before the first shard at 10,000
    documents). Only the process's footprint changes, never a file.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _write(output: str, relative: str, data: bytes) -> None:
    with FileSystems.create(f"{output}/{relative}", mime_type="application/octet-stream") as f:
        f.write(data)


class _SpillFn(beam.DoFn):
    """Buffers encoded rows per label; writes them as sorted spill files when full."""

    def __init__(self, temp_dir: str, spill_bytes: int) -> None:
        self._temp_dir = temp_dir
        self._spill_bytes = spill_bytes
        self._buffers: dict[str, list[bytes]] = defaultdict(list)
        self._size = 0

    def start_bundle(self) -> None:
        self._buffers = defaultdict(list)
        self._size = 0

    def process(self, chunks: Chunk | EncodedChunks) -> Iterator[_Spill]:
        if isinstance(chunks, EncodedChunks):  # a document's rows, encoded in the helper
            self._buffers[chunks.label].extend(chunks.entries)
            self._size += sum(map(len, chunks.entries))
        else:
            entry = row_entry(row_of(chunks))
            self._buffers[chunks.chunker_version].append(entry)
            self._size += len(entry)
        if self._size >= self._spill_bytes:
            yield from self._flush()

    def finish_bundle(self) -> Iterator[Any]:
        for spill in self._flush():
            yield GlobalWindows.windowed_value(spill)

    def _flush(self) -> Iterator[_Spill]:
        buffers, self._buffers, self._size = self._buffers, defaultdict(list), 0
        for label in sorted(buffers):
            entries = buffers.pop(label)
            size = sum(map(len, entries)) + SPILL_HEADER * len(entries)
            yield label, write_spill(self._temp_dir, label, entries), len(entries), size
            del entries
        _return_free_memory()


class _PlanShardsFn(beam.DoFn):
    """Per label: the shard count from its spills' rows, one split task per group of
    spill files, and (tagged ``shards``) a marker per shard.

    A label with one part file and at most ``fan_in`` spill files skips the split pass:
    each spill file (sorted) is a chain of its own for the part writer, tagged ``shards``
    as the split would have located it (the same entries merged in the same order, one
    read and write pass over them fewer).
    """

    def __init__(self, temp_dir: str, rows_per_file: int, fan_in: int) -> None:
        self._temp_dir = temp_dir
        self._rows_per_file = rows_per_file
        self._fan_in = fan_in

    def process(self, element: tuple[str, Iterable[tuple[str, int, int] | None]]) -> Iterator[Any]:
        label, spills = element
        listed = [s for s in spills if s is not None]
        n = shard_count(sum(rows for _, rows, _ in listed), self._rows_per_file)
        fan_in = self._fan_in
        sizes = {path: size for path, _, size in listed}
        paths = merge_to_fan_in(self._temp_dir, sizes, fan_in, fan_in**2)
        groups = -(-len(paths) // fan_in)
        if n == 1 and groups == 1:  # one part file: its writer merges the spills themselves
            for i, path in enumerate(paths):
                located = (i, 0, (path, 0, sizes[path]))
                yield pvalue.TaggedOutput(_SHARDS, ((label, 0, 1), located))
            groups = 0
        for g in range(groups):  # near-equal groups, so the splits take similar time
            cut = slice(g * len(paths) // groups, (g + 1) * len(paths) // groups)
            yield label, n, g, tuple(paths[cut])
        for i in range(n):
            yield pvalue.TaggedOutput(_SHARDS, ((label, i, n), None))


class _SplitFn(beam.DoFn):
    """Merges one group of a label's spill files and splits it by shard into run files."""

    def __init__(self, temp_dir: str, run_bytes: int) -> None:
        self._temp_dir = temp_dir
        self._run_bytes = run_bytes

    def process(self, task: _SplitTask) -> Iterator[tuple[_Shard, _Located]]:
        label, count, group, paths = task
        for shard, run, segment in split_by_shard(
            self._temp_dir, label, paths, count, self._run_bytes
        ):
            yield (label, shard, count), (group, run, segment)
        _return_free_memory()


def _unique_rows(
    label: str,
    entries: Iterable[bytes],
    per_source: dict[str, list[str]],
    errors: list[ErrorRecord],
) -> Iterator[tuple[Any, ...]]:
    """Decoded rows of ``entries`` (sorted), one per id; conflicts go to ``errors``.

    A generator, so the table is built while the spill files are read: only one batch of
    decoded rows is alive at a time. Appends each row's chunk index line (made when it was
    spilled) to its source's list in ``per_source`` (so in chunk_id order).
    """
    for key, group in itertools.groupby(entries, key=entry_id):
        start = len(key) + 1
        variants = sorted({entry[start:] for entry in group})
        if len(variants) == 1:
            line, data = entry_record(variants[0])
            row = decode_row(data)
            per_source[row[_SOURCE]].append(line)
            yield row
        else:  # different records under one id: none is written
            chunk_id = key.decode()
            chunks = (decode_chunk(entry_record(v)[1]) for v in variants)
            errors.extend(conflict_errors(label, chunk_id, chunks))


def _core_rows(chains: list[list[Segment]]) -> PartRows | None:
    """The compiled core's table of a shard (kebab_chunk/output/part_rows.py) when its
    segments are local files; None for the Python path."""
    if any(FileSystems.get_scheme(path) is not None for chain in chains for path, _, _ in chain):
        return None
    return core_part_rows(chains)


class _WritePartFn(beam.DoFn):
    """Merges one shard's segments, checks ids and writes the part file."""

    def __init__(self, output: str, prefix: str = "") -> None:
        self._output = output
        self._prefix = prefix

    def process(self, element: tuple[_Shard, Iterable[_Located]]) -> Iterator[Any]:
        (label, index, count), located = element
        _return_free_memory()  # whatever earlier stages freed, before this shard's table
        chains: dict[int, list[tuple[int, Segment]]] = defaultdict(list)
        for group, run, segment in filter(None, located):
            chains[group].append((run, segment))
        ordered = [[segment for _, segment in sorted(chains[g])] for g in sorted(chains)]
        errors: list[ErrorRecord] = []
        fast = _core_rows(ordered)
        if fast is not None:
            table, counts = fast
        else:
            per_source: dict[str, list[str]] = defaultdict(list)
            rows = _unique_rows(label, merged_segments(ordered), per_source, errors)
            table = rows_table(rows)
            counts = [
                (uri, len(lines), "\n".join(lines)) for uri, lines in sorted(per_source.items())
            ]
            del per_source
        _return_free_memory()  # the decoded rows' pages, before the Parquet writer's
        relative = f"chunks/{PARTITION_COLUMN}={label}/{self._prefix}{part_name(index, count)}"
        path = f"{self._output}/{relative}"
        with FileSystems.create(path, mime_type="application/octet-stream") as f:
            sink = DigestSink(f)
            write_parquet(table, sink)
        rows = table.num_rows
        del table
        _return_free_memory()
        metrics.inc(metrics.keyed("chunks", label), rows)
        yield WrittenFile(relative, rows, sink.size, sink.digest)
        for uri, n, lines in counts:  # lines in chunk_id order
            yield pvalue.TaggedOutput(CHUNK_COUNTS, (uri, (label, n, lines)))
        for error in errors:
            yield pvalue.TaggedOutput(ERRORS, error)


class _RemoveTempDirFn(beam.DoFn):
    """Once every part file is written: delete the spills, then pass the files on."""

    def __init__(self, temp_dir: str) -> None:
        self._temp_dir = temp_dir

    def process(self, written: list[WrittenFile]) -> Iterator[WrittenFile]:
        remove_temp_dir(self._temp_dir)
        yield from written


#: What WriteChunks takes: one PCollection of chunks (Chunk or EncodedChunks elements), or
#: several (e.g. fresh and carried).
_Chunks = PCollection[Chunk] | PCollection[EncodedChunks]
ChunkSources = _Chunks | tuple[_Chunks, ...]


class WriteChunks(beam.PTransform[ChunkSources, dict[str, PCollection[Any]]]):
    """Write chunks under ``OUTPUT/chunks/chunker_version=<label>/``, one record per id.

    The input is one PCollection or a tuple of them: each is spilled where it is made and
    only the spill references are merged, because merging the chunks themselves first
    would make an in-memory runner hold all of them at once (a Flatten of producers in
    different stages is materialised there).
    ``labels`` are the run's labels (each gets a partition even when it has no chunks).
    Identical records under one (label, chunk_id) are written once; different records
    under one id are all refused, as ValidateChunks does. Outputs (a dict): ``written``
    (one WrittenFile per part file, emitted after the temporary spill directory is
    deleted), ``errors`` (stage ``validate``, one row per source of a conflict) and
    ``chunk_counts`` (``(source_uri, (label, rows, entries))`` per shard and source, which
    the manifest adds up: ``entries`` are the IndexEntry of those rows, in chunk_id order,
    for the documents table's ``chunk_index``). ``spill_bytes`` and ``fan_in`` tune the
    external sort (module docstring); they never change the files. ``prefix`` starts
    every file name (an update's ``s<n>-``, so its files never replace those of the
    snapshots it builds on).
    """

    def __init__(
        self,
        output: str,
        labels: Sequence[str],
        *,
        rows_per_file: int = DEFAULT_ROWS_PER_FILE,
        spill_bytes: int = DEFAULT_SPILL_BYTES,
        fan_in: int = DEFAULT_FAN_IN,
        prefix: str = "",
    ) -> None:
        super().__init__()
        self._prefix = prefix
        if rows_per_file <= 0:
            raise ValueError(f"rows_per_file must be > 0, got {rows_per_file}")
        if spill_bytes <= 0:
            raise ValueError(f"spill_bytes must be > 0, got {spill_bytes}")
        if fan_in < 2:
            raise ValueError(f"fan_in must be >= 2, got {fan_in}")
        self._output = output.rstrip("/")
        self._labels = tuple(labels)
        self._rows_per_file = rows_per_file
        self._spill_bytes = spill_bytes
        self._fan_in = fan_in
        # Run-private: a concurrent or crashed run's spills never mix with this run's.
        self._temp_dir = f"{self._output}/{TEMP_PREFIX}{uuid.uuid4().hex}"

    def expand(self, chunks: ChunkSources) -> dict[str, PCollection[Any]]:
        sources = chunks if isinstance(chunks, tuple) else (chunks,)
        spilled = [
            source
            | ("Spill sorted rows" + (f" ({i + 1})" if i else ""))
            >> beam.ParDo(_SpillFn(self._temp_dir, self._spill_bytes))
            for i, source in enumerate(sources)
        ]
        merged = (
            spilled[0]
            if len(spilled) == 1
            else tuple(spilled) | "Merge spills of every source" >> beam.Flatten()
        )
        spills = merged | "Key spills by label" >> beam.Map(lambda s: (s[0], s[1:]))
        markers = (
            sources[0].pipeline
            | "Run labels" >> beam.Create(self._labels)
            | "Label markers" >> beam.Map(lambda label: (label, None))
        )
        planned = (
            (spills, markers)
            | "Merge spills and markers" >> beam.Flatten()
            | "Spills per label" >> beam.GroupByKey()
            | "Plan shards"
            >> beam.ParDo(
                _PlanShardsFn(self._temp_dir, self._rows_per_file, self._fan_in)
            ).with_outputs(_SHARDS, main="splits")
        )
        segments = (
            planned.splits
            | "Spread splits" >> beam.Reshuffle()
            | "Split spills by shard"
            >> beam.ParDo(_SplitFn(self._temp_dir, _RUN_SPILLS * self._spill_bytes))
        )
        written = (
            (planned[_SHARDS], segments)
            | "Merge shards and segments" >> beam.Flatten()
            | "Segments per shard" >> beam.GroupByKey()
            | "Check ids and write part files"
            >> beam.ParDo(_WritePartFn(self._output, self._prefix)).with_outputs(
                CHUNK_COUNTS, ERRORS, main="written"
            )
        )
        files = (
            written.written
            | "Wait for every part file" >> combiners.ToList()
            | "Remove spill files" >> beam.ParDo(_RemoveTempDirFn(self._temp_dir))
        )
        return {"written": files, ERRORS: written[ERRORS], CHUNK_COUNTS: written[CHUNK_COUNTS]}


class _WriteErrorsFn(beam.DoFn):
    def __init__(self, output: str, prefix: str) -> None:
        self._output = output
        self._prefix = prefix

    def process(self, errors: list[ErrorRecord]) -> Iterator[WrittenFile]:
        relative = f"errors/{self._prefix}{part_name(0, 1)}"
        data = parquet_bytes(errors_table(errors))
        _write(self._output, relative, data)
        for error in errors:
            metrics.inc(metrics.keyed("errors", f"{error.stage}/{error.error_type}"))
        yield WrittenFile(relative, len(errors), *digest_bytes(data))


class WriteErrors(beam.PTransform[PCollection[ErrorRecord], PCollection[WrittenFile]]):
    """Write every dead-letter row to ``OUTPUT/errors/part-00000-of-00001.parquet``.

    Error rows are one per failed input, so one sorted file is enough; the file exists
    (empty) when nothing failed. Output: one WrittenFile. ``prefix``: as WriteChunks'.
    """

    def __init__(self, output: str, *, prefix: str = "") -> None:
        super().__init__()
        self._output = output.rstrip("/")
        self._prefix = prefix

    def expand(self, errors: PCollection[ErrorRecord]) -> PCollection[WrittenFile]:
        written: PCollection[WrittenFile] = (
            errors
            | "Gather error rows" >> combiners.ToList()
            | "Write error file" >> beam.ParDo(_WriteErrorsFn(self._output, self._prefix))
        )
        return written
