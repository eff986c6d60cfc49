"""The documents table: one row per matched file, agreeing with the manifest.

A real pipeline run over a small corpus with one file of each kind (front matter, an empty
file, a legacy encoding, a PDF, binary data, a file over the size limit, files no parser
reads skipped by ``--skip-unsupported``, a ``.rst`` mapped to plain text by
``--media-type``) is checked row by row against the library's own parse of each file; the
row <-> record conversion, the sharded writer and the classification of records that no
single processing of one file gives are checked on their own. Each row's chunk index is
checked against the chunks table, and a documents file written before that column
existed still reads.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from blake3 import blake3
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.beam.manifest import EQUATION, WriteDocuments, WriteManifest
from kebab_chunk.beam.write import part_name
from kebab_chunk.elements import DocumentOutcome, SourceFile
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.output.chunk_index import IndexEntry, entry_of_chunk, packed_line
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.reader import read_documents
from kebab_chunk.output.records import DocumentFacts, DocumentRow, ErrorRecord
from kebab_chunk.output.schema import (
    DOCUMENT_SCHEMA,
    document_to_row,
    documents_table,
    parquet_bytes,
    row_to_document,
)
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.results import read_documents as api_read_documents
from tests.beam.helpers import CORPUS, output_chunks, quiet_beam
from tests.report.helpers import run_pipeline

quiet_beam()

FRONT_MATTER = (
    b'---\nzeta: 1\ntitle: "Front \\u00e9"\nalpha: {b: 2, a: 1}\nbig: 123456789012345678901\n'
    b"---\n# Heading\n\nBody text.\n"
)
MAX_FILE_BYTES = 4000


def _corpus(root: Path) -> Path:
    root.mkdir()
    (root / "fm.md").write_bytes(FRONT_MATTER)
    (root / "empty.md").write_bytes(b"")
    (root / "latin.txt").write_bytes("Caf\u00e9 cr\u00e8me, na\u00efve.\n".encode("latin-1"))
    (root / "binary.md").write_bytes(b"\x00\x01\x02 not text \x00")
    (root / "big.md").write_bytes(b"# Big\n\n" + b"word " * MAX_FILE_BYTES)
    shutil.copy(CORPUS / "pdf" / "three-page-en.pdf", root / "three.pdf")
    (root / "notes.rst").write_bytes(b"Notes\n=====\n\nPlain text in reStructuredText.\n")
    for unsupported in SKIPPED:  # no parser reads them: skipped, not errors
        (root / unsupported).write_bytes(b"\x1f\x8b\x08 or {} or text")
    return root


SKIPPED = ("copyright", "data.json", "pkg.gz")


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("documents")
    corpus = _corpus(base / "corpus")
    out = run_pipeline(
        corpus,
        base / "out",
        "--max-file-bytes",
        str(MAX_FILE_BYTES),
        "--media-type",
        "rst=text/plain",
        "--skip-unsupported",
    )
    return corpus, out


def _rows(out: Path) -> dict[str, DocumentRow]:
    return {r["source_uri"]: row_to_document(r) for r in read_documents(str(out)).to_pylist()}


def test_one_row_per_matched_file_sorted_and_listed_in_the_manifest(
    output: tuple[Path, Path],
) -> None:
    corpus, out = output
    table = read_documents(str(out))
    uris = table.column("source_uri").to_pylist()
    assert uris == sorted(p.name for p in corpus.iterdir())
    part = out / "documents" / part_name(0, 1)
    assert pq.read_table(part).column("source_uri").to_pylist() == uris  # sorted on disk
    manifest = json.loads((out / "manifest.json").read_text())
    data = part.read_bytes()
    assert manifest["outputs"]["documents"] == [
        {
            "path": f"documents/{part_name(0, 1)}",
            "rows": len(uris),
            "bytes": len(data),
            "blake3": blake3(data).hexdigest(),
        }
    ]
    assert pq.read_schema(part) == DOCUMENT_SCHEMA


def test_status_agrees_with_the_manifest_and_the_other_tables(output: tuple[Path, Path]) -> None:
    _, out = output
    rows = _rows(out)
    manifest = json.loads((out / "manifest.json").read_text())
    by_status: dict[str, set[str]] = {}
    for uri, row in rows.items():
        by_status.setdefault(row.status, set()).add(uri)
    assert by_status == {
        "chunked": {"fm.md", "latin.txt", "three.pdf", "notes.rst"},
        "zero_chunks": {"empty.md"},
        "error": {"binary.md", "big.md"},
        "skipped": set(SKIPPED),
    }
    accounting = manifest["accounting"]
    assert accounting["closes"] is True and accounting["equation"] == EQUATION
    assert accounting["skipped"] == manifest["counts"]["documents_skipped"] == len(SKIPPED)
    assert accounting["skipped_files"] == sorted(SKIPPED)
    assert accounting["files_matched"] == sum(
        accounting[k] for k in ("documents_chunked", "documents_with_zero_chunks", "errors")
    ) + len(SKIPPED)
    assert manifest["options"]["media_types"] == {".rst": "text/plain"}
    assert manifest["options"]["skip_unsupported"] is True
    assert rows["notes.rst"].media_type == "text/plain"
    assert [rows[u].media_type for u in SKIPPED] == [None, "application/json", None]
    assert all(rows[u].errors == () and rows[u].content_hash is None for u in SKIPPED)
    assert sorted(by_status["zero_chunks"]) == accounting["zero_chunk_files"]
    assert len(by_status["chunked"]) == accounting["documents_chunked"]
    assert len(by_status["error"]) == accounting["errors"]
    written: dict[str, dict[str, int]] = {}
    for chunk in output_chunks(out):
        per_label = written.setdefault(chunk.source_uri, {})
        per_label[chunk.chunker_version] = per_label.get(chunk.chunker_version, 0) + 1
    assert {u: dict(r.chunks_by_label) for u, r in rows.items() if r.chunks_by_label} == written
    assert rows["binary.md"].errors == (("parse", "binary_content"),)
    assert [stage for stage, _ in rows["big.md"].errors] == ["read"]
    counts = manifest["counts"]
    assert counts["documents_with_warnings"] == sum(bool(r.warnings) for r in rows.values())


def test_chunk_index_lists_exactly_the_chunk_records_of_each_document(
    output: tuple[Path, Path],
) -> None:
    """Per source_uri: the (label, chunk_id) pairs of the chunks table, sorted, each with
    the digests recomputed from the record read back from its part file."""
    _, out = output
    rows = _rows(out)
    expected: dict[str, list[IndexEntry]] = {}
    for chunk in output_chunks(out):  # read back from the chunks table
        expected.setdefault(chunk.source_uri, []).append(entry_of_chunk(chunk))
    assert sum(map(len, expected.values())) >= 5 and len(expected) == 4
    assert {u: r.chunk_index for u, r in rows.items() if r.chunk_index} == {
        u: tuple(sorted(entries, key=lambda e: (e.label, e.chunk_id)))
        for u, entries in expected.items()
    }
    for row in rows.values():
        assert len(row.chunk_index) == sum(n for _, n in row.chunks_by_label), row.source_uri
        assert all(type(e) is IndexEntry for e in row.chunk_index)
    assert rows["empty.md"].chunk_index == rows["binary.md"].chunk_index == ()
    pdf = rows["three.pdf"].chunk_index
    assert len(pdf) == 3 and len({e.content_digest for e in pdf}) == 3  # one per page
    raw = read_documents(str(out), ["chunk_index"]).column("chunk_index")
    assert raw.null_count == 0 and raw.type == DOCUMENT_SCHEMA.field("chunk_index").type


def test_a_documents_file_without_the_chunk_index_still_reads(
    output: tuple[Path, Path], tmp_path: Path
) -> None:
    """An output written before ``chunk_index`` existed: accepted by every reader's check,
    and its rows come back with an empty index (empty lists, not nulls)."""
    _, out = output
    old = tmp_path / "old"
    shutil.copytree(out, old)
    part = old / "documents" / part_name(0, 1)
    table = pq.read_table(part)
    data = parquet_bytes(table.drop_columns(["chunk_index"]))
    part.write_bytes(data)
    manifest = json.loads((old / "manifest.json").read_text())
    (entry,) = manifest["outputs"]["documents"]
    entry.update(bytes=len(data), blake3=blake3(data).hexdigest())
    (old / "manifest.json").write_text(json.dumps(manifest))
    assert "chunk_index" not in pq.read_schema(part).names
    open_output(str(old), "OUTPUT")  # does not raise
    column = read_documents(str(old)).column("chunk_index")
    assert column.null_count == 0 and column.to_pylist() == [[]] * table.num_rows
    new_rows, old_rows = _rows(out), _rows(old)
    assert {u: r.chunk_index for u, r in old_rows.items()} == dict.fromkeys(new_rows, ())
    assert {u: dataclasses.replace(r, chunk_index=()) for u, r in new_rows.items()} == old_rows
    assert [d.chunk_index for d in api_read_documents(old)] == [()] * len(old_rows)
    assert row_to_document({**table.to_pylist()[0], "chunk_index": None}).chunk_index == ()


def test_parsed_documents_keep_title_front_matter_warnings_pages_and_blocks(
    output: tuple[Path, Path],
) -> None:
    corpus, out = output
    rows = _rows(out)
    for uri in ("fm.md", "empty.md", "latin.txt", "three.pdf"):
        raw = (corpus / uri).read_bytes()
        doc = parse_document(raw, uri)
        row = rows[uri]
        assert row.facts() == DocumentFacts.of(doc), uri
        assert (row.doc_id, row.content_hash, row.size_bytes) == (
            doc_id(uri),
            content_hash(raw),
            len(raw),
        )
    fm = rows["fm.md"]
    assert fm.title == "Front \u00e9"
    # sorted keys at every level, non-ASCII kept, an integer beyond 2**53 kept exactly
    assert fm.front_matter == (
        '{"alpha":{"a":1,"b":2},"big":123456789012345678901,"title":"Front \u00e9","zeta":1}'
    )
    assert rows["latin.txt"].warnings and rows["latin.txt"].front_matter is None
    assert rows["three.pdf"].pages == 3 and rows["fm.md"].pages is None
    assert rows["empty.md"].blocks == 0 and rows["fm.md"].blocks == 2


def test_files_never_parsed_or_never_read_have_null_facts(output: tuple[Path, Path]) -> None:
    corpus, out = output
    rows = _rows(out)
    binary, big = rows["binary.md"], rows["big.md"]
    assert binary.content_hash == content_hash((corpus / "binary.md").read_bytes())
    assert big.content_hash is None  # over --max-file-bytes: never read
    for row in (binary, big):
        assert (row.doc_id, row.parser_version, row.title, row.front_matter) == (None,) * 4
        assert (row.pages, row.blocks, row.warnings, row.chunks_by_label) == (None, None, (), ())
        assert row.media_type == "text/markdown"
    assert big.size_bytes == (corpus / "big.md").stat().st_size


def test_rows_round_trip_and_lone_surrogates_are_stored_as_valid_utf8() -> None:
    doc = parse_document(b'---\ntitle: "bad \\ud800 title"\nk: "\\udc00"\n---\n# H\n', "s.md")
    facts = DocumentFacts.of(doc)
    assert facts.title == "bad \ufffd title"
    assert facts.front_matter is not None
    assert json.loads(facts.front_matter) == doc.metadata  # the escape means the same value
    row = DocumentRow(
        "s.md",
        facts.doc_id,
        facts.media_type,
        facts.parser_version,
        facts.content_hash,
        10,
        facts.title,
        facts.front_matter,
        ("w1", "w2"),
        None,
        facts.blocks,
        (("md-heading-v1", 1),),
        "chunked",
        (("chunk", "Boom"),),
        (IndexEntry("md-heading-v1", "a" * 32, "b" * 16, "c" * 16),),
    )
    data = parquet_bytes(documents_table([row]))  # raises on text that is not UTF-8
    assert data
    assert row_to_document(document_to_row(row)) == row
    assert row_to_document(documents_table([row]).to_pylist()[0]) == row


_TEXT = st.text(max_size=6)
_NAMES = st.text(min_size=1, max_size=6)
_ROWS = st.builds(
    DocumentRow,
    source_uri=_NAMES,
    doc_id=st.none() | _TEXT,
    media_type=st.none() | _TEXT,
    parser_version=st.none() | _TEXT,
    content_hash=st.none() | _TEXT,
    size_bytes=st.integers(0, 2**40),
    title=st.none() | _TEXT,
    front_matter=st.none() | _TEXT,
    warnings=st.lists(_TEXT, max_size=3).map(tuple),
    pages=st.none() | st.integers(0, 10**6),
    blocks=st.none() | st.integers(0, 10**6),
    chunks_by_label=st.lists(st.tuples(_NAMES, st.integers(0, 99)), max_size=3).map(tuple),
    status=_NAMES,
    errors=st.lists(st.tuples(_NAMES, _NAMES), max_size=2).map(tuple),
    chunk_index=st.lists(st.builds(IndexEntry, _NAMES, _NAMES, _NAMES, _NAMES), max_size=3).map(
        tuple
    ),
)


@given(st.lists(_ROWS, max_size=8))
def test_the_table_is_the_one_of_the_rows_as_dicts(rows: list[DocumentRow]) -> None:
    """``documents_table`` builds columns from the rows directly; it writes the bytes of
    the table of :func:`document_to_row`'s dicts (what it did first)."""
    ordered = sorted(rows, key=lambda r: r.source_uri)
    by_dicts = pa.Table.from_pylist([document_to_row(r) for r in ordered], schema=DOCUMENT_SCHEMA)
    assert parquet_bytes(documents_table(rows)) == parquet_bytes(by_dicts)


def _row(uri: str) -> DocumentRow:
    return DocumentRow(
        uri, None, None, None, None, 1, None, None, (), None, None, (), "error", (("read", "x"),)
    )


def test_write_documents_shards_by_doc_id_and_sorts_each_part(tmp_path: Path) -> None:
    rows = [_row(f"d{i:02d}.md") for i in range(23)]
    outputs = []
    for order, out in ((rows, tmp_path / "a"), (rows[::-1], tmp_path / "b")):
        with BeamTestPipeline() as p:
            _ = p | beam.Create(order) | WriteDocuments(str(out), rows_per_file=5)
        outputs.append(out)
    names = [part_name(i, 5) for i in range(5)]
    for out in outputs:
        assert sorted(f.name for f in (out / "documents").iterdir()) == names
        for name in names:
            uris = pq.read_table(out / "documents" / name).column("source_uri").to_pylist()
            assert uris == sorted(uris)
            assert all(int(doc_id(u)[:12], 16) % 5 == names.index(name) for u in uris)
        assert read_documents(str(out)).column("source_uri").to_pylist() == [
            r.source_uri for r in rows
        ]
    a, b = outputs
    assert [(a / "documents" / n).read_bytes() for n in names] == [
        (b / "documents" / n).read_bytes() for n in names
    ]


def test_an_empty_corpus_writes_one_empty_documents_file(tmp_path: Path) -> None:
    with BeamTestPipeline() as p:
        _ = p | beam.Create([]) | WriteDocuments(str(tmp_path))
    assert [f.name for f in (tmp_path / "documents").iterdir()] == [part_name(0, 1)]
    assert read_documents(str(tmp_path)).num_rows == 0


def test_records_no_single_processing_gives_make_the_accounting_fail(tmp_path: Path) -> None:
    """A file listed twice, a read error beside chunks, two read errors, or a skip beside
    an outcome are ``inconsistent``: listed, and the accounting does not close. Chunks of
    one label beside another label's chunk error stay a file with errors (docs/guide/limits.md,
    Isolation), as do a zero-chunk outcome and one chunk error."""
    doc = parse_document(b"# A\n\ntext\n", "x.md")

    def outcome(uri: str) -> DocumentOutcome:
        return DocumentOutcome(uri, DocumentFacts.of(doc), (("md-heading-v2", 1),))

    uris = ("twice.md", "read-and-chunked.md", "two-reads.md", "skip-and-parsed.md", "ok.md")
    files = [SourceFile(u, "text/markdown", 10) for u in (*uris, "twice.md")]
    errors = [
        ErrorRecord("read-and-chunked.md", "read", "broken_symlink", "gone"),
        ErrorRecord("two-reads.md", "read", "broken_symlink", "gone"),
        ErrorRecord("two-reads.md", "read", "PermissionError", "denied"),
        ErrorRecord("ok.md", "chunk", "Boom", "one label failed", chunker_version="hybrid-v3"),
    ]
    outcomes = [outcome(u) for u in ("twice.md", "read-and-chunked.md", "skip-and-parsed.md")]
    outcomes.append(outcome("ok.md"))

    def one_chunk(uri: str) -> tuple[str, tuple[str, int, str]]:
        entry = IndexEntry("md-heading-v2", doc_id(uri), "c" * 16, "r" * 16)
        return uri, ("md-heading-v2", 1, packed_line(entry))

    chunk_counts = [one_chunk(u) for u in ("twice.md", "read-and-chunked.md", "ok.md")]
    with BeamTestPipeline() as p:
        inputs = {
            "files": p | "files" >> beam.Create(files),
            "skipped": p | "skipped" >> beam.Create([SourceFile("skip-and-parsed.md", None, 1)]),
            "outcomes": p | "outcomes" >> beam.Create(outcomes),
            "chunk_counts": p | "chunks" >> beam.Create(chunk_counts),
            "errors": p | "errors" >> beam.Create(errors),
            "written": p | "written" >> beam.Create([]),
        }
        _ = inputs | WriteManifest(str(tmp_path), {"manifest_version": 1}, {})
    acc = json.loads((tmp_path / "manifest.json").read_text())["accounting"]
    wrong = ["read-and-chunked.md", "skip-and-parsed.md", "twice.md", "two-reads.md"]
    assert acc["closes"] is False
    assert acc["inconsistent_files"] == wrong and acc["inconsistent"] == len(wrong)
    assert (acc["files_matched"], acc["errors"], acc["documents_chunked"]) == (5, 1, 0)
    statuses = {r["source_uri"]: r["status"] for r in read_documents(str(tmp_path)).to_pylist()}
    assert statuses == {**dict.fromkeys(wrong, "inconsistent"), "ok.md": "error"}
