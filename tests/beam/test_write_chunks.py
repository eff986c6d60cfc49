"""WriteChunks: the documented shard layout byte for byte, one record per (label, chunk_id)
enforced inside the shard groups, and per-source counts and chunk index entries the
manifest adds up."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.beam import DocumentOutcome, SourceFile, WriteChunks, WriteManifest
from kebab_chunk.beam.write import part_name
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.chunk_index import IndexEntry, entry_of_chunk, packed_line, unpack
from kebab_chunk.output.reader import read_documents
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.output.schema import chunks_table, parquet_bytes, row_to_document
from kebab_chunk.parsers.registry import parse_document
from tests.beam.helpers import CORPUS, chunk_sort_key, output_chunks, quiet_beam, records

quiet_beam()
POLICY = ChunkPolicy()
LABEL = "md-heading-v1"


def _chunks(uri: str) -> list[Chunk]:
    doc = parse_document((CORPUS / uri).read_bytes(), uri)
    return records(LABEL, doc, POLICY)


def test_part_files_are_the_documented_shards_byte_for_byte(tmp_path: Path) -> None:
    """Shard i of n holds the chunks with int(chunk_id[:12], 16) % n == i, sorted by id."""
    chunks = _chunks("guides/installation.md") + _chunks("reference/http-api.md")
    rows_per_file = 3
    n = -(-len(chunks) // rows_per_file)
    with BeamTestPipeline() as p:
        _ = p | beam.Create(chunks) | WriteChunks(str(tmp_path), [LABEL], rows_per_file=3)
    folder = tmp_path / "chunks" / f"chunker_version={LABEL}"
    assert sorted(f.name for f in folder.iterdir()) == [part_name(i, n) for i in range(n)]
    for i in range(n):
        shard = [c for c in chunks if int(c.chunk_id[:12], 16) % n == i]
        expected = parquet_bytes(chunks_table(shard))
        assert (folder / part_name(i, n)).read_bytes() == expected, part_name(i, n)


def test_duplicates_collapse_and_conflicts_are_refused_with_error_rows(tmp_path: Path) -> None:
    chunks_a = _chunks("guides/installation.md")
    chunks_b = _chunks("reference/http-api.md")
    clash = chunks_b[0]
    forged = clash.model_copy(update={"text": clash.text + " (edited)"})
    inputs = chunks_a + chunks_a[:2] + chunks_b + [forged]
    with BeamTestPipeline() as p:
        out = p | beam.Create(inputs) | WriteChunks(str(tmp_path), [LABEL], rows_per_file=4)
        assert_that(
            out["errors"]
            | beam.Map(
                lambda e: (
                    e.source_uri,
                    e.stage,
                    e.error_type,
                    e.chunker_version,
                    e.content_hash,
                    clash.chunk_id in e.message and "2 times" in e.message,
                )
            ),
            equal_to(
                [
                    (
                        clash.source_uri,
                        "validate",
                        "chunk_id_conflict",
                        LABEL,
                        clash.content_hash,
                        True,
                    )
                ]
            ),
            label="one conflict row",
        )
        totals = (
            out["chunk_counts"]
            | beam.MapTuple(lambda uri, label_rows: (uri, label_rows[1]))
            | beam.CombinePerKey(sum)  # several shards per source add up
        )
        # Per shard and source: rows == lines, one packed text in chunk_id order.
        assert_that(
            out["chunk_counts"]
            | beam.MapTuple(
                lambda uri, c: (
                    c[0] == LABEL
                    and c[1] == len(c[2].split("\n"))
                    and [e.chunk_id for e in unpack([(c[0], c[2])])]
                    == [line.split("\t")[0] for line in c[2].split("\n")]
                )
            )
            | beam.CombineGlobally(all),
            equal_to([True]),
            label="entries per shard",
        )
        entries = out["chunk_counts"] | beam.FlatMapTuple(
            lambda uri, c: [(uri, e) for e in unpack([(c[0], c[2])])]
        )
        written_chunks = chunks_a + chunks_b[1:]  # the conflicting id is refused
        assert_that(
            entries,
            equal_to([(c.source_uri, entry_of_chunk(c)) for c in written_chunks]),
            label="one entry per written record",
        )
        assert_that(
            totals,
            equal_to(
                [(chunks_a[0].source_uri, len(chunks_a)), (clash.source_uri, len(chunks_b) - 1)]
            ),
            label="rows written per source",
        )
        assert_that(
            out["written"] | beam.Map(lambda w: w.rows) | beam.CombineGlobally(sum),
            equal_to([len(chunks_a) + len(chunks_b) - 1]),
            label="rows in the part files",
        )
    assert output_chunks(tmp_path) == sorted(chunks_a + chunks_b[1:], key=chunk_sort_key)


def test_manifest_adds_up_per_shard_chunk_counts(tmp_path: Path) -> None:
    files = [SourceFile(u, "text/markdown", 10) for u in ("a.md", "b.md")]
    outcomes = [
        DocumentOutcome(u, DocumentFacts.of(parse_document(b"# T\n", u)), ((LABEL, n),))
        for u, n in (("a.md", 5), ("b.md", 0))
    ]
    made = [IndexEntry(LABEL, f"{i:032x}", f"c{i:015x}", f"r{i:015x}") for i in range(5)]
    # a.md's rows in two shards, each shard's entries in chunk_id order
    counts = [
        ("a.md", (LABEL, 2, "\n".join(packed_line(e) for e in (made[1], made[4])))),
        ("a.md", (LABEL, 3, "\n".join(packed_line(e) for e in (made[0], made[2], made[3])))),
    ]
    with BeamTestPipeline() as p:
        inputs = {
            "files": p | "files" >> beam.Create(files),
            "outcomes": p | "outcomes" >> beam.Create(outcomes),
            "chunk_counts": p | "counts" >> beam.Create(counts),
            "errors": p | "errors" >> beam.Create([]),
            "written": p | "written" >> beam.Create([]),
        }
        _ = inputs | WriteManifest(str(tmp_path), {"manifest_version": 1}, {})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"]["chunks_by_label"] == {LABEL: 5}
    assert manifest["counts"]["documents_chunked"] == 1
    assert manifest["counts"]["documents_with_zero_chunks"] == 1
    assert manifest["accounting"]["closes"] is True
    rows = {r["source_uri"]: row_to_document(r) for r in read_documents(str(tmp_path)).to_pylist()}
    assert rows["a.md"].chunk_index == tuple(made)  # gathered, sorted by (label, chunk_id)
    assert rows["b.md"].chunk_index == ()
