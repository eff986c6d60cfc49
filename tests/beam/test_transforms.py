"""Transform-level tests: TestPipeline + assert_that over whole records.

Chunk and document ids are content-addressed, so expected records are computed by calling
the library directly (parsers, chunkers) and compared field for field with what the
transforms emit.
"""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.beam import (
    ChunkDocuments,
    DocumentOutcome,
    ErrorRecord,
    ParseDocuments,
    RawDocument,
    ReadCorpus,
    SourceFile,
    ValidateChunks,
    WriteChunks,
    WriteErrors,
    WriteManifest,
)
from kebab_chunk.beam._testing import EXPLODING_ROW, hostile_parse
from kebab_chunk.beam.write import part_name
from kebab_chunk.chunkers import registry as chunker_registry
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import ParseError, UnknownChunkerError
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.chunk_index import entry_of_chunk
from kebab_chunk.output.reader import read_documents
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.output.schema import row_to_document
from kebab_chunk.parsers.registry import detect_media_type, parse_document
from tests.beam.helpers import CORPUS, chunk_sort_key, output_chunks, quiet_beam, records

quiet_beam()
POLICY = ChunkPolicy()


def _raw(uri: str, raw: bytes) -> RawDocument:
    return RawDocument(uri, detect_media_type(uri, raw[:8]), content_hash(raw), raw)


def _fixture(uri: str) -> RawDocument:
    return _raw(uri, (CORPUS / uri).read_bytes())


def _error_key(e: ErrorRecord) -> tuple[object, ...]:
    return (e.source_uri, e.stage, e.error_type, e.content_hash, e.media_type, e.chunker_version)


# ---------------------------------------------------------------- ReadCorpus


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nalpha\n")
    (root / "sub" / "b.txt").write_text("bravo\n")
    (root / "sub" / "deeper" / "c.md").write_text("# C\n\ncharlie\n")
    (root / "sub" / "big.txt").write_text("x" * 500)
    return root


def _expected_read(root: Path, uris: list[str]) -> list[RawDocument]:
    return [_raw(uri, (root / uri).read_bytes()) for uri in uris]


def test_read_corpus_directory_is_recursive_with_relative_uris(small_corpus: Path) -> None:
    all_files = ["a.md", "sub/b.txt", "sub/big.txt", "sub/deeper/c.md"]
    with BeamTestPipeline() as p:
        out = p | ReadCorpus(str(small_corpus), max_file_bytes=100)
        assert_that(
            out["documents"],
            equal_to(_expected_read(small_corpus, ["a.md", "sub/b.txt", "sub/deeper/c.md"])),
            label="documents",
        )
        assert_that(
            out["files"],
            equal_to(
                [
                    SourceFile(u, detect_media_type(u), (small_corpus / u).stat().st_size)
                    for u in all_files
                ]
            ),
            label="every matched file",
        )
        assert_that(
            out["errors"]
            | beam.Map(
                lambda e: (
                    e.source_uri,
                    e.stage,
                    e.error_type,
                    e.content_hash,
                    e.media_type,
                    "--max-file-bytes=100" in e.message and "500 bytes" in e.message,
                )
            ),
            # content_hash None: the file was refused from its metadata, never read whole.
            equal_to([("sub/big.txt", "read", "limit_exceeded", None, "text/plain", True)]),
            label="the oversized file",
        )


def test_read_corpus_glob_and_single_file_roots(small_corpus: Path) -> None:
    with BeamTestPipeline() as p:
        by_glob = p | "glob" >> ReadCorpus(str(small_corpus / "sub" / "*.txt"), max_file_bytes=1000)
        assert_that(
            by_glob["documents"],
            equal_to([_raw("b.txt", b"bravo\n"), _raw("big.txt", b"x" * 500)]),
            label="glob root is its directory",
        )
        one = p | "one file" >> ReadCorpus(
            str(small_corpus / "sub" / "deeper" / "c.md"), max_file_bytes=1000
        )
        assert_that(
            one["documents"],
            equal_to([_raw("c.md", b"# C\n\ncharlie\n")]),
            label="a single file is its own corpus",
        )


# ---------------------------------------------------------------- ParseDocuments


def test_parse_documents_emits_documents_and_error_rows() -> None:
    uris = [
        "guides/installation.md",
        "notes/release-notes-2.4.txt",
        "pdf/three-page-en.pdf",
        "blob.md",
        "pdf/broken-truncated.pdf",
        "pdf/encrypted-real-password.pdf",
    ]
    raws = [_fixture(u) for u in uris]
    expected_docs: list[CanonicalDocument] = []
    expected_errors: list[ErrorRecord] = []
    for r in raws:
        try:
            expected_docs.append(parse_document(r.raw, r.source_uri))
        except ParseError as exc:
            expected_errors.append(
                ErrorRecord(
                    r.source_uri, "parse", exc.error_type, str(exc), r.content_hash, r.media_type
                )
            )
    assert len(expected_errors) == 3  # blob.md, the truncated and the encrypted PDF
    with BeamTestPipeline() as p:
        out = p | beam.Create(raws) | ParseDocuments(timeout_s=30)
        assert_that(out["documents"], equal_to(expected_docs), label="documents")
        assert_that(out["errors"], equal_to(expected_errors), label="errors")


def test_parse_documents_survives_hangs_crashes_and_surprises() -> None:
    good = [_fixture("guides/configuration.md"), _fixture("notes/adr-0007-parquet-exports.md")]
    bad = [
        _raw("hang.md", b"HANG forever"),
        _raw("crash.md", b"CRASH the process"),
        _raw("raise.md", b"RAISE something odd"),
    ]
    with BeamTestPipeline() as p:
        out = p | beam.Create(bad + good) | ParseDocuments(timeout_s=2, parse_fn=hostile_parse)
        assert_that(
            out["documents"],
            equal_to([parse_document(r.raw, r.source_uri) for r in good]),
            label="good documents all parsed",
        )
        assert_that(
            out["errors"] | beam.Map(_error_key),
            equal_to(
                [
                    ("hang.md", "parse", "timeout", bad[0].content_hash, "text/markdown", None),
                    (
                        "crash.md",
                        "parse",
                        "worker_crash",
                        bad[1].content_hash,
                        "text/markdown",
                        None,
                    ),
                    (
                        "raise.md",
                        "parse",
                        "RuntimeError",
                        bad[2].content_hash,
                        "text/markdown",
                        None,
                    ),
                ]
            ),
            label="one error row per hostile document",
        )


# ---------------------------------------------------------------- ChunkDocuments


def _docs(*uris: str) -> list[CanonicalDocument]:
    return [parse_document((CORPUS / u).read_bytes(), u) for u in uris]


def test_chunk_documents_applies_the_default_label_per_media_type() -> None:
    docs = _docs(
        "guides/installation.md",
        "notes/release-notes-2.4.txt",
        "pdf/one-long-page.pdf",
        "notes/empty.txt",
    )
    expected: list[Chunk] = []
    outcomes = []
    for doc, label in zip(
        docs, ["md-heading-v3", "md-heading-v3", "pdf-page-v3", "md-heading-v3"], strict=True
    ):
        chunks = records(label, doc, POLICY)
        expected.extend(chunks)
        outcomes.append(
            DocumentOutcome(doc.source_uri, DocumentFacts.of(doc), ((label, len(chunks)),))
        )
    assert any(o.chunks_by_label == (("md-heading-v3", 0),) for o in outcomes)  # empty.txt
    with BeamTestPipeline() as p:
        out = p | beam.Create(docs) | ChunkDocuments(None, POLICY)
        assert_that(out["chunks"], equal_to(expected), label="chunks")
        assert_that(out["outcomes"], equal_to(outcomes), label="outcomes")
        assert_that(out["errors"], equal_to([]), label="no errors")


def test_chunk_documents_reports_documents_no_requested_chunker_accepts() -> None:
    md, pdf = _docs("ops/runbook-disk-pressure.md", "pdf/three-page-en.pdf")
    with BeamTestPipeline() as p:
        out = p | beam.Create([md, pdf]) | ChunkDocuments(["pdf-page-v1"], POLICY)
        assert_that(
            out["chunks"],
            equal_to(records("pdf-page-v1", pdf, POLICY)),
            label="only the PDF is chunked",
        )
        assert_that(
            out["errors"] | beam.Map(_error_key),
            equal_to(
                [
                    (
                        md.source_uri,
                        "chunk",
                        "no_accepting_chunker",
                        md.content_hash,
                        "text/markdown",
                        None,
                    )
                ]
            ),
            label="the Markdown document is an error, not silently skipped",
        )


def test_chunk_documents_turns_chunker_exceptions_into_error_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(chunker_registry._BY_NAME, "exploding-test-v0", EXPLODING_ROW)
    boom = parse_document(b"# Title\n\nBOOM goes the chunker\n", "boom.md")
    calm = _docs("guides/configuration.md")[0]
    labels = ["md-heading-v1", "exploding-test-v0"]
    with BeamTestPipeline() as p:
        out = p | beam.Create([boom, calm]) | ChunkDocuments(labels, POLICY)
        md = get_chunker("md-heading-v1")
        assert_that(
            out["chunks"],
            equal_to(records(md, boom, POLICY) + records(md, calm, POLICY)),
            label="the other label still chunks both",
        )
        assert_that(
            out["errors"] | beam.Map(_error_key),
            equal_to(
                [
                    (
                        "boom.md",
                        "chunk",
                        "ValueError",
                        boom.content_hash,
                        "text/markdown",
                        "exploding-test-v0",
                    )
                ]
            ),
            label="one error row naming the label",
        )


def test_chunk_documents_rejects_unknown_labels_at_construction() -> None:
    with pytest.raises(UnknownChunkerError, match="registered labels are"):
        ChunkDocuments(["md-heading-v9"], POLICY)


# ---------------------------------------------------------------- ValidateChunks


def test_validate_chunks_collapses_identical_and_refuses_conflicting_duplicates() -> None:
    doc_a, doc_b = _docs("guides/installation.md", "reference/http-api.md")
    md = get_chunker("md-heading-v1")
    chunks_a, chunks_b = records(md, doc_a, POLICY), records(md, doc_b, POLICY)
    clash = chunks_b[0]
    forged = clash.model_copy(update={"text": clash.text + " (edited)"})
    inputs = chunks_a + chunks_a[:2] + chunks_b + [forged]
    with BeamTestPipeline() as p:
        out = p | beam.Create(inputs) | ValidateChunks()
        assert_that(out["chunks"], equal_to(chunks_a + chunks_b[1:]), label="unique records")
        assert_that(
            out["errors"]
            | beam.Map(
                lambda e: (
                    e.source_uri,
                    e.stage,
                    e.error_type,
                    e.chunker_version,
                    clash.chunk_id in e.message,
                )
            ),
            equal_to([(doc_b.source_uri, "validate", "chunk_id_conflict", "md-heading-v1", True)]),
            label="conflict reported",
        )


# ---------------------------------------------------------------- WriteChunks / WriteErrors


def test_write_chunks_shards_sorts_and_partitions(tmp_path: Path) -> None:
    docs = _docs("guides/installation.md", "guides/configuration.md", "pdf/one-long-page.pdf")
    chunks = [
        c
        for d in docs
        for label in ("md-heading-v1", "pdf-page-v1")
        if get_chunker(label).accepts(d)
        for c in records(label, d, POLICY)
    ]
    md_rows = sum(c.chunker_version == "md-heading-v1" for c in chunks)
    with BeamTestPipeline() as p:
        _ = (
            p
            | beam.Create(chunks)
            | WriteChunks(
                str(tmp_path), ["md-heading-v1", "pdf-page-v1", "never-used-v1"], rows_per_file=4
            )
        )
    assert output_chunks(tmp_path) == sorted(chunks, key=chunk_sort_key)
    md_dir = tmp_path / "chunks" / "chunker_version=md-heading-v1"
    n = -(-md_rows // 4)
    assert sorted(p.name for p in md_dir.iterdir()) == [part_name(i, n) for i in range(n)]
    for part in md_dir.iterdir():
        ids = pq.read_table(part).column("chunk_id").to_pylist()
        assert ids == sorted(ids)
    empty = tmp_path / "chunks" / "chunker_version=never-used-v1" / part_name(0, 1)
    assert pq.read_table(empty).num_rows == 0


def test_write_errors_writes_one_sorted_file_even_when_empty(tmp_path: Path) -> None:
    with BeamTestPipeline() as p:
        _ = p | beam.Create([]) | WriteErrors(str(tmp_path / "none"))
    assert pq.read_table(tmp_path / "none" / "errors" / part_name(0, 1)).num_rows == 0
    errors = [
        ErrorRecord("z.md", "parse", "binary_content", "z"),
        ErrorRecord("a.pdf", "parse", "encrypted", "a"),
    ]
    with BeamTestPipeline() as p:
        _ = p | beam.Create(errors) | WriteErrors(str(tmp_path / "some"))
    table = pq.read_table(tmp_path / "some" / "errors" / part_name(0, 1))
    assert table.column("source_uri").to_pylist() == ["a.pdf", "z.md"]


# ---------------------------------------------------------------- WriteManifest


def test_manifest_accounting_does_not_close_when_a_document_goes_missing(tmp_path: Path) -> None:
    """A file with no outcome must surface as unaccounted, not as a zero-chunk document."""
    import json

    files = [SourceFile(u, "text/markdown", 10) for u in ("a.md", "b.md", "c.md", "d.md")]
    doc_a = parse_document(b"# A\n\nalpha text\n", "a.md")
    chunks = records("md-heading-v1", doc_a, POLICY)
    doc_b = parse_document(b"", "b.md").model_copy(update={"warnings": ("one warning",)})
    outcomes = [
        DocumentOutcome("a.md", DocumentFacts.of(doc_a), (("md-heading-v1", len(chunks)),)),
        DocumentOutcome("b.md", DocumentFacts.of(doc_b), (("md-heading-v1", 0),)),
    ]
    errors = [ErrorRecord("d.md", "parse", "binary_content", "d is binary")]
    with BeamTestPipeline() as p:
        inputs = {
            "files": p | "files" >> beam.Create(files),
            "outcomes": p | "outcomes" >> beam.Create(outcomes),
            "chunks": p | "chunks" >> beam.Create(chunks),
            "errors": p | "errors" >> beam.Create(errors),
            "written": p | "written" >> beam.Create([]),
        }
        _ = inputs | WriteManifest(str(tmp_path), {"manifest_version": 1}, {"note": "test"})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    acc = manifest["accounting"]
    assert (
        acc["files_matched"],
        acc["documents_chunked"],
        acc["documents_with_zero_chunks"],
        acc["errors"],
    ) == (4, 1, 1, 1)
    assert acc["closes"] is False and acc["unaccounted_files"] == ["c.md"]
    assert manifest["counts"]["chunks_by_label"] == {"md-heading-v1": len(chunks)}
    assert manifest["counts"]["errors_by_stage"] == {"parse": {"binary_content": 1}}
    assert manifest["counts"]["documents_with_warnings"] == 1
    assert manifest["run_info"]["note"] == "test"
    # Given chunks rather than WriteChunks' counts, the documents rows index them all the same.
    index = {
        r["source_uri"]: row_to_document(r).chunk_index
        for r in read_documents(str(tmp_path)).to_pylist()
    }
    assert len(chunks) > 0 and index == {
        "a.md": tuple(sorted(map(entry_of_chunk, chunks))),
        "b.md": (),
        "c.md": (),
        "d.md": (),
    }


def test_read_corpus_groups_a_long_listing_and_reads_each_file_once(tmp_path: Path) -> None:
    """Past its first entries a listing travels in groups (fewer elements to shuffle); each
    file is still read exactly once, whatever group it travelled in."""
    from kebab_chunk.beam.locations import resolve_corpora
    from kebab_chunk.beam.read import _ENTRIES_PER_GROUP, _SINGLE_ENTRIES, _ListFn
    from kebab_chunk.corpus import CorpusFilter

    count = _SINGLE_ENTRIES + 2 * _ENTRIES_PER_GROUP + 5
    for i in range(count):
        (tmp_path / f"doc-{i:04d}.md").write_text(f"# Doc {i}\n\nBody {i}.\n", encoding="utf-8")
    location = resolve_corpora([str(tmp_path)])
    listing = _ListFn(location, CorpusFilter())
    groups = [g for part in location.inputs for g in listing.process(part)]
    assert [len(g) for g in groups] == [1] * _SINGLE_ENTRIES + [_ENTRIES_PER_GROUP] * 2 + [5]
    with BeamTestPipeline() as p:
        out = p | ReadCorpus(str(tmp_path))
        assert_that(
            out["documents"] | beam.Map(lambda d: d.source_uri),
            equal_to([f"doc-{i:04d}.md" for i in range(count)]),
        )
