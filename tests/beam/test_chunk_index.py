"""The chunk index entry of a record: the recipe of both digests, checked against RFC 8785
itself (the ``rfc8785`` package, not the fast path), the same entry from a Chunk and from
the row tuple the shard writer holds, and which changes move which digest."""

from __future__ import annotations

import pytest
import rfc8785
from blake3 import blake3

from kebab_chunk.beam.coders import decode_row, encode_chunk, row_of
from kebab_chunk.model import Chunk, ElementSpan, LineSpan, PageSpan
from kebab_chunk.output.chunk_index import (
    CONTENT_FIELDS,
    RECORD_FIELDS,
    IndexEntry,
    content_digest,
    entry_of_chunk,
    entry_of_row,
    record_digest,
    row_of_chunk,
)
from kebab_chunk.output.diff import _CONTENT
from kebab_chunk.output.schema import CHUNK_SCHEMA
from tests.beam.helpers import CORPUS, reference_run


@pytest.fixture(scope="module")
def corpus_chunks() -> list[Chunk]:
    chunks = reference_run(CORPUS).chunks
    assert len(chunks) > 30
    return chunks


def _reference(value: object) -> str:
    """blake3 of RFC 8785 by the reference package, tuples as arrays, 16 hex chars."""

    def plain(v: object) -> object:
        return [plain(x) for x in v] if isinstance(v, (list, tuple)) else v

    return blake3(rfc8785.dumps(plain(value))).hexdigest()[:16]


def test_digests_follow_the_documented_recipe_on_every_corpus_chunk(
    corpus_chunks: list[Chunk],
) -> None:
    for chunk in corpus_chunks:
        entry = entry_of_chunk(chunk)
        record = [getattr(chunk, name) for name in CHUNK_SCHEMA.names]
        record[RECORD_FIELDS.index("source_spans")] = [
            [s.model_dump().get(f) for f in ("kind", "line_start", "line_end", "page", "ref")]
            + [s.char_start, s.char_end]
            for s in chunk.source_spans
        ]
        content = [chunk.text, chunk.heading_path, chunk.captions, chunk.token_estimate]
        assert entry == IndexEntry(
            chunk.chunker_version, chunk.chunk_id, _reference(content), _reference(record)
        ), chunk.chunk_id


def test_a_chunk_and_its_encoded_row_give_the_same_entry(corpus_chunks: list[Chunk]) -> None:
    for chunk in corpus_chunks:
        row = decode_row(encode_chunk(chunk))  # what _WritePartFn holds
        assert row_of_chunk(chunk) == row_of(chunk) == row
        assert entry_of_row(row) == entry_of_row(row, chunk.chunker_version)
        assert entry_of_row(row) == entry_of_chunk(chunk)


def test_diff_and_the_index_use_one_set_of_content_fields() -> None:
    assert _CONTENT is CONTENT_FIELDS
    assert CONTENT_FIELDS == ("text", "heading_path", "captions", "token_estimate")
    assert tuple(CHUNK_SCHEMA.names) == RECORD_FIELDS


def test_position_and_spans_move_the_record_digest_only(corpus_chunks: list[Chunk]) -> None:
    chunk = next(c for c in corpus_chunks if isinstance(c.source_spans[0], LineSpan))
    span = chunk.source_spans[0]
    moved = chunk.model_copy(
        update={
            "position": chunk.position + 3,
            "source_spans": (
                span.model_copy(
                    update={
                        "line_start": span.line_start + 2,
                        "line_end": span.line_end + 2,
                        "char_start": span.char_start + 40,
                        "char_end": span.char_end + 40,
                    }
                ),
            ),
        }
    )
    before, after = entry_of_chunk(chunk), entry_of_chunk(moved)
    assert (after.label, after.chunk_id) == (before.label, before.chunk_id)
    assert after.content_digest == before.content_digest
    assert after.record_digest != before.record_digest
    for field, value in (
        ("position", chunk.position + 1),
        ("content_hash", "0" * 64),
        ("embed_tokens", (chunk.embed_tokens or 0) + 1),
        ("parser_version", "other-parser-v9"),
    ):
        changed = entry_of_chunk(chunk.model_copy(update={field: value}))
        assert changed.content_digest == before.content_digest, field
        assert changed.record_digest != before.record_digest, field


def test_content_changes_move_both_digests(corpus_chunks: list[Chunk]) -> None:
    chunk = corpus_chunks[0]
    before = entry_of_chunk(chunk)
    for field, value in (
        ("text", chunk.text + "!"),
        ("heading_path", (*chunk.heading_path, "New heading")),
        ("captions", ("a caption",)),
        ("token_estimate", chunk.token_estimate + 1),
    ):
        changed = entry_of_chunk(chunk.model_copy(update={field: value}))
        assert changed.content_digest != before.content_digest, field
        assert changed.record_digest != before.record_digest, field


def _row() -> tuple[object, ...]:
    chunk = Chunk(
        chunk_id="c" * 32,
        doc_id="d" * 32,
        source_uri="dir/caf\u00e9 \"q\".md",
        chunker_version="test-v0",
        policy_hash="p" * 16,
        parser_version="test-parser-v0",
        position=0,
        text='tab\there "quote" \\ \x01 \x7f \u2028 \U0001f600',
        heading_path=("H\u00e9",),
        block_ids=("b1", "b2"),
        source_spans=(
            LineSpan(line_start=1, line_end=2, char_start=0, char_end=5),
            PageSpan(page=3, char_start=0, char_end=1),
            ElementSpan(ref="#/texts/0", page=2, char_start=0, char_end=1),
            ElementSpan(ref="#/texts/1", char_start=1, char_end=2),
        ),
        token_estimate=3,
        content_hash="h" * 64,
        embed_text="H\u00e9\ntext",
        embed_tokens=4,
    )
    return row_of(chunk)


def test_escapes_and_every_span_kind_match_rfc8785() -> None:
    row = _row()
    assert record_digest(row) == _reference(row)
    assert content_digest(row) == _reference([row[7], row[8], row[9], row[12]])


def test_values_rfc8785_refuses_have_no_digest() -> None:
    row = list(_row())
    row[RECORD_FIELDS.index("position")] = 2**60  # beyond IEEE-754 precision
    with pytest.raises(rfc8785.IntegerDomainError):
        record_digest(row)
    row = list(_row())
    row[RECORD_FIELDS.index("text")] = "lone \ud800 surrogate"
    with pytest.raises(rfc8785.CanonicalizationError):
        content_digest(row)
    with pytest.raises(rfc8785.CanonicalizationError):
        record_digest(row)


def test_a_chunk_without_embed_text_is_never_indexed(corpus_chunks: list[Chunk]) -> None:
    with pytest.raises(ValueError, match="embed_text"):
        entry_of_chunk(corpus_chunks[0].model_copy(update={"embed_text": None}))
