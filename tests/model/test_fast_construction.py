"""The validation-free constructors build exactly what the validating constructors build.

``trusted`` (behind ``line_span``, ``make_block``, ``make_document`` and ``make_chunk``)
skips pydantic validation on hot internal paths; these tests pin that the records are
indistinguishable: equal, same field order in ``__dict__`` (``model_dump_json`` follows
it), same fields-set, same JSON, same hash, and they survive pickling.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.model import (
    AudioRefBlock,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    LineSpan,
    ListBlock,
    PageSpan,
    ParagraphBlock,
    TableBlock,
)
from kebab_chunk.model.blocks import make_block
from kebab_chunk.model.document import make_document
from kebab_chunk.model.spans import line_span


def assert_same_record(fast: BaseModel, slow: BaseModel) -> None:
    assert type(fast) is type(slow)
    assert fast == slow
    assert list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_dump() == slow.model_dump()
    assert _hash(fast) == _hash(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert repr(fast) == repr(slow)


def _hash(record: BaseModel) -> int | str:
    """The record's hash, or the error hashing raises (a document's metadata is a dict)."""
    try:
        return hash(record)
    except TypeError as exc:
        return str(exc)


_SPAN = LineSpan(line_start=2, line_end=4, char_start=10, char_end=30)


@given(
    st.integers(min_value=-2, max_value=6),
    st.integers(min_value=-2, max_value=6),
    st.integers(min_value=-2, max_value=6),
    st.integers(min_value=-2, max_value=6),
)
def test_line_span_equals_validated_or_fails_the_same(a: int, b: int, c: int, d: int) -> None:
    try:
        slow = LineSpan(line_start=a, line_end=b, char_start=c, char_end=d)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as fast_exc:
            line_span(a, b, c, d)
        assert [(e["loc"], e["msg"]) for e in fast_exc.value.errors()] == [
            (e["loc"], e["msg"]) for e in exc.errors()
        ]
        return
    assert_same_record(line_span(a, b, c, d), slow)


_DETAILS: list[tuple[type[Any], dict[str, Any]]] = [
    (ParagraphBlock, {}),
    (HeadingBlock, {"level": 2, "title": "Intro"}),
    (ListBlock, {"ordered": True, "items": ("1. a", "2. b")}),
    (CodeBlock, {"language": "python"}),
    (CodeBlock, {"language": None}),
    (TableBlock, {"header": ("a", "b"), "rows": (("1", "2"), ("3", "4"))}),
    (ImageRefBlock, {"alt": "x", "src": "y.png", "caption": None}),
    (AudioRefBlock, {"src": "y.mp3", "caption": "z"}),
]


@pytest.mark.parametrize(("cls", "details"), _DETAILS)
def test_make_block_equals_validated(cls: type[Any], details: dict[str, Any]) -> None:
    fast = make_block(cls, "b" * 32, "text", ("A", "B"), (_SPAN,), **details)
    slow = cls(block_id="b" * 32, text="text", heading_path=("A", "B"), spans=(_SPAN,), **details)
    assert_same_record(fast, slow)


def test_make_block_validates_an_incomplete_call() -> None:
    # a missing detail field falls back to the validating constructor (defaults, fields-set)
    fast = make_block(HeadingBlock, "b" * 32, "# x", (), (_SPAN,), level=1)
    slow = HeadingBlock(block_id="b" * 32, text="# x", heading_path=(), spans=(_SPAN,), level=1)
    assert_same_record(fast, slow)
    with pytest.raises(ValidationError):
        make_block(ParagraphBlock, "b" * 32, "x", (), ())


def _doc_values(**overrides: Any) -> dict[str, Any]:
    block = make_block(ParagraphBlock, "b" * 32, "text", (), (_SPAN,))
    values: dict[str, Any] = {
        "doc_id": "d" * 32,
        "source_uri": "a/b.md",
        "media_type": "text/markdown",
        "content_hash": "c" * 64,
        "parser_version": "md-pyromark-v1",
        "title": None,
        "metadata": {},
        "blocks": (block,),
        "warnings": ("w",),
    }
    values.update(overrides)
    return values


@pytest.mark.parametrize(
    "overrides",
    [{}, {"title": "T"}, {"metadata": {"k": [1, "x"]}}, {"warnings": ()}, {"blocks": ()}],
)
def test_make_document_equals_validated(overrides: dict[str, Any]) -> None:
    values = _doc_values(**overrides)
    assert_same_record(make_document(**values), CanonicalDocument(**values))


def test_make_document_still_validates_bad_input() -> None:
    with pytest.raises(ValidationError):
        make_document(**_doc_values(blocks=({"kind": "nope"},)))


class _Str(str):
    """A str subclass: must take the validating path."""


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"is_slice": True},
        {"captions": ["cap"], "heading_path": ["A"]},
        {"text": _Str("hello")},
        {"spans": [PageSpan(page=1, char_start=0, char_end=5)]},
        {"token_estimate": 7},
    ],
)
def test_make_chunk_equals_validated(overrides: dict[str, Any]) -> None:
    doc = make_document(**_doc_values())
    args: dict[str, Any] = {
        "chunker_version": "md-heading-v1",
        "policy": ChunkPolicy(),
        "position": 0,
        "text": "hello",
        "block_ids": ["b" * 32],
        "spans": [_SPAN],
    }
    args.update(overrides)
    fast = make_chunk(doc, **args)
    values = fast.model_dump()
    values["source_spans"] = tuple(args["spans"])
    assert_same_record(fast, Chunk(**values))


def test_make_chunk_still_rejects_a_negative_position() -> None:
    doc = make_document(**_doc_values())
    with pytest.raises(ValidationError):
        make_chunk(
            doc,
            chunker_version="v",
            policy=ChunkPolicy(),
            position=-1,
            text="x",
            block_ids=["b"],
            spans=[_SPAN],
        )
