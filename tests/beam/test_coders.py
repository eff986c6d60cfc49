"""The compact Chunk coder round-trips every valid Chunk exactly and deterministically,
and the row tuples it decodes to give the same Parquet bytes as the Chunks themselves."""

from __future__ import annotations

import pyarrow as pa
import pytest
from apache_beam import coders
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.beam.coders import (
    ChunkCoder,
    decode_chunk,
    decode_row,
    encode_chunk,
    row_of,
)
from kebab_chunk.model import Chunk, ElementSpan, LineSpan, PageSpan
from kebab_chunk.output.schema import (
    BATCH_ROWS,
    CHUNK_FILE_SCHEMA,
    chunks_table,
    parquet_bytes,
    rows_table,
)

_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
_ANY_TEXT = st.text(max_size=20)  # lone surrogates included: the JSON form must carry them
_INDEX = st.integers(min_value=0, max_value=2**40)
_BIG = st.integers(min_value=0, max_value=2**80)  # beyond int64


@st.composite
def _spans(draw: st.DrawFn) -> LineSpan | PageSpan | ElementSpan:
    start = draw(_INDEX)
    end = start + draw(_INDEX)
    kind = draw(st.sampled_from(["lines", "page", "element"]))
    if kind == "lines":
        first = draw(st.integers(min_value=1, max_value=10**6))
        return LineSpan(
            line_start=first,
            line_end=first + draw(st.integers(0, 100)),
            char_start=start,
            char_end=end,
        )
    if kind == "page":
        return PageSpan(page=draw(st.integers(1, 10**4)), char_start=start, char_end=end)
    page = draw(st.none() | st.integers(1, 10**4))
    ref = draw(_TEXT.filter(bool))
    return ElementSpan(ref=ref, page=page, char_start=start, char_end=end)


@st.composite
def _chunks(draw: st.DrawFn, text: st.SearchStrategy[str] = _TEXT) -> Chunk:
    strings = st.lists(text, max_size=4).map(tuple)
    return Chunk(
        chunk_id=draw(st.text("0123456789abcdef", min_size=12, max_size=32)),
        doc_id=draw(text),
        source_uri=draw(text),
        chunker_version=draw(text),
        policy_hash=draw(text),
        parser_version=draw(text),
        position=draw(_INDEX),
        text=draw(text),
        heading_path=draw(strings),
        captions=draw(strings),
        block_ids=draw(strings),
        source_spans=tuple(draw(st.lists(_spans(), min_size=1, max_size=4))),
        token_estimate=draw(_INDEX),
        content_hash=draw(text),
        embed_text=draw(text),
        embed_tokens=draw(_INDEX),
    )


@given(_chunks())
def test_chunks_round_trip_exactly_and_deterministically(chunk: Chunk) -> None:
    data = encode_chunk(chunk)
    assert decode_chunk(data) == chunk
    assert decode_row(data) == row_of(chunk)
    # Equal values, separately built objects: equal bytes (nothing depends on identity).
    assert encode_chunk(Chunk.model_validate_json(chunk.model_dump_json())) == data


@given(_chunks(text=_ANY_TEXT), _BIG)
def test_lone_surrogates_and_huge_integers_still_round_trip(chunk: Chunk, big: int) -> None:
    chunk = chunk.model_copy(update={"position": big})
    assert decode_chunk(encode_chunk(chunk)) == chunk


def test_the_coder_is_registered_for_the_chunk_type_and_deterministic() -> None:
    coder = coders.registry.get_coder(Chunk)
    assert isinstance(coder, ChunkCoder)
    assert coder.is_deterministic()
    span = LineSpan(line_start=1, line_end=2, char_start=0, char_end=9)
    chunk = Chunk(
        chunk_id="ab" * 16,
        doc_id="d",
        source_uri="a.md",
        chunker_version="md-heading-v1",
        policy_hash="p",
        parser_version="md-v0",
        position=0,
        text="# A\n\nalpha",
        block_ids=("b",),
        source_spans=(span,),
        token_estimate=4,
        content_hash="c",
    )
    assert coder.decode(coder.encode(chunk)) == chunk
    assert len(coder.encode(chunk)) < len(coders.PickleCoder().encode(chunk))


def test_bytes_not_made_by_the_coder_are_refused_in_one_sentence() -> None:
    with pytest.raises(ValueError, match="not an encoded chunk"):
        decode_row(b"\x80\x04garbage")


@given(st.lists(_chunks(), min_size=1, max_size=6, unique_by=lambda c: c.chunk_id))
def test_rows_table_writes_the_bytes_chunks_table_writes(chunks: list[Chunk]) -> None:
    rows = sorted((row_of(c) for c in chunks), key=lambda r: str(r[0]))
    assert parquet_bytes(rows_table(rows)) == parquet_bytes(chunks_table(chunks))


def test_a_table_built_in_batches_writes_the_bytes_of_one_built_whole() -> None:
    """rows_table's chunked columns must not change the Parquet bytes (parquet_bytes)."""
    rows = [
        (
            f"{i:032x}",
            "d",
            f"doc{i % 97}.md",
            "md-heading-v1",
            "p",
            "md-v0",
            i % 13,
            f"text {i} " * (i % 50),
            ("H",) * (i % 3),
            (),
            (f"b{i}",),
            (("lines", 1 + i, 2 + i, None, None, 0, i),),
            i % 400,
            "c",
            f"H\ntext {i}",
            i % 400 + 1,
        )
        for i in range(2 * BATCH_ROWS + 123)
    ]
    table = rows_table(rows)
    assert table.column(0).num_chunks == 3
    assert table.schema == CHUNK_FILE_SCHEMA
    assert parquet_bytes(table) == parquet_bytes(table.combine_chunks())
    assert rows_table([]).equals(pa.Table.from_pylist([], schema=CHUNK_FILE_SCHEMA))


def test_list_columns_past_their_dictionary_limit_write_the_bytes_of_one_piece() -> None:
    """Shards of tens of thousands of rows overflow the list columns' dictionaries; the
    writer cuts list columns by leaf values, so rows_table must not chunk them."""
    rows = [
        (
            f"{i:032x}",
            "d",
            "doc.md",
            "md-heading-v1",
            "p",
            "md-v0",
            i,
            f"text {i}",
            tuple(f"h{i}-{j}" for j in range(i % 7)),
            (),
            tuple(f"{i:016x}{j:016x}" for j in range(1 + i % 40)),  # ~2.6 MB of distinct ids
            tuple(("lines", 1 + j, 2 + j, None, None, j, j + i) for j in range(i % 5)),
            i,
            "c",
            f"text {i}",
            i,
        )
        for i in range(3 * BATCH_ROWS + 7)
    ]
    table = rows_table(rows)
    assert table.column("text").num_chunks > 1  # flat columns stay in batches
    assert parquet_bytes(table) == parquet_bytes(table.combine_chunks())
