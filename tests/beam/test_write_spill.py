"""WriteChunks' external sort: however rows are spilled and merged, the files are the same.

The reference is the single-buffer path: every chunk of a shard in memory, sorted and
written with ``parquet_bytes(chunks_table(...))`` (kebab_chunk/output/schema.py), which
never touches spill files.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.beam import WriteChunks
from kebab_chunk.beam.coders import row_of
from kebab_chunk.beam.locations import RunSetupError, prepare_output, resolve_corpus
from kebab_chunk.beam.spill import (
    TEMP_PREFIX,
    entry_id,
    merge_to_fan_in,
    merged_entries,
    merged_segments,
    split_by_shard,
    write_spill,
)
from kebab_chunk.beam.write import part_name
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.layout import chunk_shard
from kebab_chunk.output.schema import chunks_table, parquet_bytes
from kebab_chunk.output.spill_entry import row_entry
from kebab_chunk.parsers.registry import parse_document
from tests.beam.helpers import CORPUS, chunk_sort_key, output_chunks, quiet_beam, records

quiet_beam()
POLICY = ChunkPolicy(target_tokens=60, overlap_tokens=0)
LABELS = ("md-heading-v1", "md-header-chars-v1")
#: Every row its own spill file, and merges of 3 files at a time (several passes).
TINY = {"spill_bytes": 1, "fan_in": 3}


def _corpus_chunks() -> list[Chunk]:
    chunks = []
    for path in sorted(CORPUS.rglob("*.md")):
        uri = path.relative_to(CORPUS).as_posix()
        if b"\x00" in path.read_bytes():
            continue  # blob.md: binary content on purpose (a parse error, no chunks)
        doc = parse_document(path.read_bytes(), uri)
        for label in LABELS:
            chunks.extend(records(label, doc, POLICY))
    random.Random(7).shuffle(chunks)  # arrival order must not matter
    return chunks


CHUNKS = _corpus_chunks()


def _write(output: Path, chunks: list[Chunk], labels: tuple[str, ...], **options: Any) -> None:
    with BeamTestPipeline() as p:
        _ = p | beam.Create(chunks) | WriteChunks(str(output), labels, **options)


def _files(output: Path) -> dict[str, bytes]:
    return {
        p.relative_to(output).as_posix(): p.read_bytes() for p in output.rglob("*") if p.is_file()
    }


def _reference(
    chunks: list[Chunk], labels: tuple[str, ...], rows_per_file: int, offered: int | None = None
) -> dict[str, bytes]:
    """The single-buffer path: each shard's Chunks in memory, one parquet_bytes call.

    ``offered`` is the number of records given to the writer when it differs from the
    number written (duplicates and conflicts): the shard count is of records offered.
    """
    files = {}
    for label in labels:
        mine = [c for c in chunks if c.chunker_version == label]
        n = max(1, -(-(len(mine) if offered is None else offered) // rows_per_file))
        for i in range(n):
            shard = [c for c in mine if int(c.chunk_id[:12], 16) % n == i]
            path = f"chunks/chunker_version={label}/{part_name(i, n)}"
            files[path] = parquet_bytes(chunks_table(shard))
    return files


def test_many_spills_many_shards_and_merge_passes_give_the_single_buffer_bytes(
    tmp_path: Path,
) -> None:
    assert len(CHUNKS) > 60  # enough rows for several shards and merge passes per label
    rows_per_file = 7
    _write(tmp_path / "tiny", CHUNKS, LABELS, rows_per_file=rows_per_file, **TINY)
    _write(tmp_path / "default", CHUNKS, LABELS, rows_per_file=rows_per_file)
    expected = _reference(CHUNKS, LABELS, rows_per_file)
    assert sum(1 for name in expected if name.startswith("chunks/")) > 2 * len(LABELS)
    assert _files(tmp_path / "tiny") == expected
    assert _files(tmp_path / "default") == expected


@pytest.mark.parametrize("mode", ["python", "auto"], ids=["python-writer", "core-writer"])
def test_one_part_file_merged_from_its_spill_files_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A label with one part file and at most ``fan_in`` spill files skips the split
    pass: the part writer merges the spill files themselves, each its own chain. Here a
    spill per row (dozens of chains per label, duplicates among them) gives the bytes of
    the single-buffer write, with the Python writer and (when built) the core's."""
    monkeypatch.setenv("KEBAB_CORE", mode)
    inputs = [*CHUNKS, *CHUNKS[::7]]  # identical duplicates in other spill files
    _write(tmp_path, inputs, LABELS, rows_per_file=10_000, spill_bytes=1, fan_in=256)
    assert _files(tmp_path) == _reference(CHUNKS, LABELS, 10_000)


def test_labels_without_chunks_get_one_empty_part_file(tmp_path: Path) -> None:
    _write(tmp_path, [], ("md-heading-v1",), **TINY)
    assert _files(tmp_path) == _reference([], ("md-heading-v1",), 10)


@pytest.mark.parametrize("options", [{}, TINY], ids=["one-spill", "spill-per-row"])
def test_duplicates_and_conflicts_in_different_spill_files(
    tmp_path: Path, options: dict[str, int]
) -> None:
    label = "md-heading-v1"
    mine = sorted((c for c in CHUNKS if c.chunker_version == label), key=chunk_sort_key)
    clash = mine[0]
    forged = clash.model_copy(update={"text": clash.text + " (edited)"})
    # Copies far apart in the input: with one row per spill they are in different files.
    inputs = [*mine, *mine[1:4], forged]
    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create(inputs)
            | WriteChunks(str(tmp_path), [label], rows_per_file=5, **options)
        )
        assert_that(
            out["errors"] | beam.Map(lambda e: (e.source_uri, e.error_type, e.content_hash)),
            equal_to([(clash.source_uri, "chunk_id_conflict", clash.content_hash)]),
            label="one conflict row",
        )
        assert_that(
            out["written"] | beam.Map(lambda w: w.rows) | beam.CombineGlobally(sum),
            equal_to([len(mine) - 1]),
            label="duplicates collapse, the conflicting id is dropped",
        )
    assert output_chunks(tmp_path) == mine[1:]
    assert _files(tmp_path) == _reference(mine[1:], (label,), 5, offered=len(inputs))


def test_the_temporary_spill_directory_is_gone_after_the_run(tmp_path: Path) -> None:
    _write(tmp_path, CHUNKS, LABELS, rows_per_file=11, **TINY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks"]


def test_merge_passes_keep_every_entry_in_order(tmp_path: Path) -> None:
    """Bounded fan-in: 20 spill files, 3 at a time, still one sorted stream of all rows."""
    entries = [_entry(c) for c in CHUNKS[:40]]
    entries += entries[:5]  # duplicates across files
    paths = [
        write_spill(str(tmp_path), "md-heading-v1", entries[i : i + 2])
        for i in range(0, len(entries), 2)
    ]
    assert len(paths) > 9
    merged = merge_to_fan_in(str(tmp_path), paths, fan_in=3)
    assert len(merged) <= 3
    assert list(merged_entries(merged)) == sorted(entries)
    assert merge_to_fan_in(str(tmp_path), paths, fan_in=3) == merged  # named by inputs


def test_overwrite_replaces_an_output_left_with_a_killed_runs_spills(tmp_path: Path) -> None:
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n")
    out = tmp_path / "out"
    leftover = out / f"{TEMP_PREFIX}0123" / "spill-x.bin"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"partial")
    (out / "chunks").mkdir()
    location = resolve_corpus(str(corpus))
    assert prepare_output(str(out), overwrite=True, corpus=location) == str(out)
    assert not out.exists()
    (out / "notes").mkdir(parents=True)
    with pytest.raises(RunSetupError, match="not kebab-chunk output"):
        prepare_output(str(out), overwrite=True, corpus=location)


def test_several_chunk_sources_give_the_one_source_bytes_and_are_never_merged_first(
    tmp_path: Path,
) -> None:
    # Fresh and carried chunks of an incremental run arrive as two PCollections. Merged
    # before the spill, the in-memory runner held every chunk of the merge at once; each
    # source is spilled where it is made instead, and only spill references are merged.
    half = len(CHUNKS) // 2
    output = tmp_path / "two"
    with BeamTestPipeline() as p:
        sources = (
            p | "First" >> beam.Create(CHUNKS[:half]),
            p | "Second" >> beam.Create(CHUNKS[half:]),
        )
        _ = sources | WriteChunks(str(output), LABELS, rows_per_file=7, **TINY)
        inputs_of_flattens = [
            t.inputs for t in _transforms(p) if isinstance(t.transform, beam.Flatten)
        ]
    assert _files(output) == _reference(CHUNKS, LABELS, 7)
    assert inputs_of_flattens  # the spill references are merged ...
    for inputs in inputs_of_flattens:  # ... but no Flatten takes the chunks themselves
        assert not set(inputs) & set(sources)


def _transforms(p: beam.Pipeline) -> list[Any]:
    found: list[Any] = []

    class _Visitor(beam.pipeline.PipelineVisitor):
        def visit_transform(self, node: Any) -> None:
            found.append(node)

    p.visit(_Visitor())
    return found


class _CountingFile:
    """A read-only file that adds every byte it returns to ``counter``."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner, self._counter = inner, counter

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._inner.read(size)
        self._counter[0] += len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> _CountingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()


def test_the_part_writers_read_each_spilled_byte_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shard reads its own rows, not the whole label's: the reads of the temporary
    files stay a small multiple of what was spilled, whatever the number of shards (the
    1,000,000-document run spent ~25 s per part file re-reading every row of its label)."""
    from apache_beam.io.filesystems import FileSystems

    read = [0]
    opened = FileSystems.open

    def counting_open(path: str, *args: Any, **kwargs: Any) -> Any:
        handle = opened(path, *args, **kwargs)
        return _CountingFile(handle, read) if TEMP_PREFIX in path else handle

    monkeypatch.setattr(FileSystems, "open", staticmethod(counting_open))
    rows_per_file = 3  # dozens of shards per label
    _write(tmp_path, CHUNKS, LABELS, rows_per_file=rows_per_file)  # one spill per label
    spilled = sum(len(_entry(c)) for c in CHUNKS)
    assert _files(tmp_path) == _reference(CHUNKS, LABELS, rows_per_file)
    assert 0 < read[0] < 4 * spilled


def _entry(chunk: Chunk) -> bytes:
    """The spill entry WriteChunks makes of ``chunk``."""
    return row_entry(row_of(chunk))


@pytest.mark.parametrize("budget", [1, 500, 10**9], ids=["run-per-entry", "small", "one-run"])
def test_split_by_shard_gives_each_shard_its_entries_and_nothing_else(
    tmp_path: Path, budget: int
) -> None:
    entries = [_entry(c) for c in CHUNKS[:60]]
    entries += entries[:4]  # duplicates stay next to each other in their shard
    paths = [write_spill(str(tmp_path), "x", entries[i : i + 7]) for i in range(0, 64, 7)]
    count = 5
    located = list(split_by_shard(str(tmp_path), "x", paths, count, budget))
    assert list(split_by_shard(str(tmp_path), "x", paths, count, budget)) == located
    runs = sorted({run for _, run, _ in located})
    assert runs == list(range(len(runs)))
    assert (len(runs) == 1) == (budget == 10**9)
    for shard in range(count):
        mine = sorted((run, seg) for s, run, seg in located if s == shard)
        assert list(merged_segments([[seg for _, seg in mine]])) == sorted(
            e for e in entries if chunk_shard(entry_id(e), count) == shard
        )
    # The segments tile the run files: no byte is read by two shards.
    assert sum(length for _, _, (_, _, length) in located) == sum(4 + len(e) for e in entries)
