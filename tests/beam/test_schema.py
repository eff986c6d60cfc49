"""The one Arrow schema: it covers the model, and rows round-trip to identical records."""

from __future__ import annotations

import typing

import pyarrow as pa
import pytest

from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import (
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    LineSpan,
    PageSpan,
    SourceSpan,
)
from kebab_chunk.model.ids import doc_id
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.output.schema import (
    CHUNK_FILE_SCHEMA,
    CHUNK_SCHEMA,
    ERROR_SCHEMA,
    PARTITION_COLUMN,
    SPAN_TYPE,
    chunk_to_row,
    chunks_table,
    error_to_row,
    errors_table,
    row_to_chunk,
    row_to_error,
)


def _doc(uri: str) -> CanonicalDocument:
    return CanonicalDocument(
        doc_id=doc_id(uri),
        source_uri=uri,
        media_type="text/markdown",
        content_hash="c" * 64,
        parser_version="test-parser-v0",
    )


def _chunk(uri: str, text: str, spans: tuple[SourceSpan, ...], position: int = 0) -> Chunk:
    policy = ChunkPolicy()
    # md-heading-v2 embeds by the shared recipe ("first-line" headings), as any label without
    # a rule of its own does.
    chunker = get_chunker("md-heading-v2")
    return with_embedding([_made(uri, text, spans, position)], chunker, policy)[0]


def _made(uri: str, text: str, spans: tuple[SourceSpan, ...], position: int) -> Chunk:
    return make_chunk(
        _doc(uri),
        chunker_version="test-v0",
        policy=ChunkPolicy(),
        position=position,
        text=text,
        block_ids=[f"b{position}"],
        spans=spans,
        heading_path=("Guide", "Setup"),
        captions=("Figure 1",) if position else (),
    )


def _span_kinds() -> list[type]:
    union = typing.get_args(typing.get_args(SourceSpan)[0])
    return list(union)


def test_chunk_schema_has_exactly_the_chunk_fields() -> None:
    assert CHUNK_SCHEMA.names == list(Chunk.model_fields)
    assert PARTITION_COLUMN not in CHUNK_FILE_SCHEMA.names
    assert CHUNK_FILE_SCHEMA.names == [n for n in CHUNK_SCHEMA.names if n != PARTITION_COLUMN]


@pytest.mark.parametrize("kind", _span_kinds(), ids=lambda k: k.__name__)
def test_span_struct_covers_every_span_kind(kind: type) -> None:
    """A new span kind in the model must come with its columns in SPAN_TYPE."""
    struct_fields = {f.name for f in SPAN_TYPE}
    assert set(kind.model_fields) <= struct_fields  # type: ignore[attr-defined]


def test_chunks_round_trip_through_parquet_rows() -> None:
    chunks = [
        _chunk(
            "guide.md",
            "# Setup\n\nRun it.",
            (LineSpan(line_start=1, line_end=3, char_start=0, char_end=17),),
        ),
        _chunk(
            "manual.pdf",
            "Page two text",
            (
                PageSpan(page=2, char_start=5, char_end=18),
                PageSpan(page=3, char_start=0, char_end=4),
            ),
            1,
        ),
    ]
    element_kinds = [k for k in _span_kinds() if k not in (LineSpan, PageSpan)]
    for kind in element_kinds:  # any further span kind (e.g. DOCX elements) round-trips too
        span = kind.model_validate(  # type: ignore[attr-defined]
            {"ref": "/w:document/w:body/w:p[3]", "char_start": 0, "char_end": 4}
        )
        chunks.append(_chunk("report.docx", "Text", (span,), 2))
    table = pa.Table.from_pylist([chunk_to_row(c) for c in chunks], schema=CHUNK_SCHEMA)
    assert [row_to_chunk(r) for r in table.to_pylist()] == chunks


def test_line_span_row_has_nulls_for_page_fields() -> None:
    chunk = _chunk("a.md", "x", (LineSpan(line_start=2, line_end=2, char_start=4, char_end=5),))
    [span] = chunk_to_row(chunk)["source_spans"]
    assert span["kind"] == "lines" and span["page"] is None and span["line_start"] == 2


def test_part_table_is_sorted_by_chunk_id_without_partition_column() -> None:
    chunks = [
        _chunk(
            f"doc{i}.md",
            f"text {i}",
            (LineSpan(line_start=1, line_end=1, char_start=0, char_end=6),),
            i,
        )
        for i in range(6)
    ]
    table = chunks_table(reversed(chunks))
    assert table.schema.equals(CHUNK_FILE_SCHEMA)
    ids = table.column("chunk_id").to_pylist()
    assert ids == sorted(c.chunk_id for c in chunks)


def test_error_rows_round_trip_and_sort() -> None:
    errors = [
        ErrorRecord("b.pdf", "parse", "encrypted", "b is encrypted", "h1", "application/pdf"),
        ErrorRecord("a.md", "chunk", "ValueError", "boom", "h2", "text/markdown", "x-v1"),
        ErrorRecord("a.md", "read", "limit_exceeded", "too big"),
    ]
    table = errors_table(errors)
    assert table.schema.equals(ERROR_SCHEMA)
    back = [row_to_error(r) for r in table.to_pylist()]
    assert back == sorted(errors, key=ErrorRecord.sort_key)
    assert [error_to_row(e) for e in back] == table.to_pylist()
