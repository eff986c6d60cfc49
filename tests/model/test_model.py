"""The data model: lossless JSON round trips for every variant, validation, immutability."""

from __future__ import annotations

import json

import pydantic
import pytest

from kebab_chunk.errors import PolicyError
from kebab_chunk.model import (
    BLOCK_ADAPTER,
    SPAN_ADAPTER,
    AudioRefBlock,
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    CodeBlock,
    ElementSpan,
    HeadingBlock,
    ImageRefBlock,
    LineSpan,
    ListBlock,
    PageSpan,
    ParagraphBlock,
    TableBlock,
    make_policy,
)

LINES = LineSpan(line_start=3, line_end=4, char_start=10, char_end=42)
PAGE = PageSpan(page=2, char_start=0, char_end=120)
ELEMENT = ElementSpan(ref="/w:document/w:body/w:p[3]", page=None, char_start=0, char_end=9)

BLOCKS = [
    HeadingBlock(
        block_id="h",
        text="## Setup",
        heading_path=("Guide", "Setup"),
        spans=(LINES,),
        level=2,
        title="Setup",
    ),
    ParagraphBlock(block_id="p", text="Hello, wörld ✓", spans=(PAGE,)),
    ListBlock(block_id="l", text="1. a\n2. b", spans=(LINES,), ordered=True, items=("a", "b")),
    CodeBlock(block_id="c", text="```py\nx = 1\n```", spans=(LINES,), language="py"),
    CodeBlock(block_id="c2", text="    x = 1", spans=(LINES,), language=None),
    TableBlock(
        block_id="t",
        text="|a|b|\n|-|-|\n|1|2|",
        spans=(LINES,),
        header=("a", "b"),
        rows=(("1", "2"),),
    ),
    ImageRefBlock(
        block_id="i",
        text="![cat](cat.png)",
        spans=(LINES,),
        alt="cat",
        src="cat.png",
        caption="A cat",
    ),
    AudioRefBlock(
        block_id="a", text="![talk](talk.mp3)", spans=(LINES,), src="talk.mp3", caption=None
    ),
]


@pytest.mark.parametrize("span", [LINES, PAGE, ELEMENT], ids=["lines", "page", "element"])
def test_span_round_trip(span: LineSpan | PageSpan | ElementSpan) -> None:
    back = SPAN_ADAPTER.validate_json(SPAN_ADAPTER.dump_json(span))
    assert back == span and type(back) is type(span)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.kind + b.block_id for b in BLOCKS])
def test_block_round_trip_both_directions(block: object) -> None:
    as_json = BLOCK_ADAPTER.dump_json(block)  # type: ignore[arg-type]
    back = BLOCK_ADAPTER.validate_json(as_json)
    assert back == block and type(back) is type(block)
    # JSON -> model -> JSON is stable too.
    assert BLOCK_ADAPTER.dump_json(back) == as_json


def _doc() -> CanonicalDocument:
    return CanonicalDocument(
        doc_id="d" * 32,
        source_uri="docs/guide.md",
        media_type="text/markdown",
        content_hash="0" * 64,
        parser_version="md-mistune-v1",
        title="Guide",
        metadata={"tags": ["a", "b"], "draft": False, "n": 3},
        blocks=tuple(BLOCKS),
        warnings=("invalid UTF-8 at byte 3",),
    )


def test_document_round_trip_keeps_every_block_variant() -> None:
    doc = _doc()
    back = CanonicalDocument.model_validate_json(doc.model_dump_json())
    assert back == doc
    assert [type(b) for b in back.blocks] == [type(b) for b in BLOCKS]
    assert CanonicalDocument.model_validate(json.loads(doc.model_dump_json())) == doc


def test_chunk_round_trip_with_mixed_spans() -> None:
    chunk = Chunk(
        chunk_id="c" * 32,
        doc_id="d" * 32,
        source_uri="a.md",
        chunker_version="md-heading-v1",
        policy_hash="p" * 16,
        parser_version="md-mistune-v1",
        position=0,
        text="x",
        heading_path=("A",),
        captions=("cap",),
        block_ids=("b",),
        source_spans=(LINES, PAGE, ELEMENT),
        token_estimate=1,
        content_hash="0" * 64,
    )
    assert Chunk.model_validate_json(chunk.model_dump_json()) == chunk


def test_policy_round_trip_and_defaults() -> None:
    policy = ChunkPolicy(
        target_tokens=100,
        overlap_tokens=10,
        max_tokens=128,
        tokenizer="tiktoken:cl100k_base",
        merge_peers=False,
    )
    assert ChunkPolicy.model_validate_json(policy.model_dump_json()) == policy


def test_models_are_frozen_and_reject_unknown_fields() -> None:
    with pytest.raises(pydantic.ValidationError):
        LINES.char_start = 5  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError):
        ParagraphBlock(block_id="p", text="x", spans=(LINES,), colour="red")  # type: ignore[call-arg]
    with pytest.raises(pydantic.ValidationError):
        ParagraphBlock(block_id="p", text="x", spans=())  # every block has >= 1 span


def test_spans_reject_reversed_ranges() -> None:
    with pytest.raises(pydantic.ValidationError):
        LineSpan(line_start=2, line_end=1, char_start=0, char_end=1)
    with pytest.raises(pydantic.ValidationError):
        PageSpan(page=1, char_start=5, char_end=4)


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"target_tokens": 0}, "target_tokens must be > 0"),
        ({"overlap_tokens": -1}, "overlap_tokens must be >= 0"),
        ({"target_tokens": 100, "overlap_tokens": 100}, "< target_tokens (100)"),
        ({"max_tokens": 0}, "max_tokens must be > 0"),
        ({"colour": "red"}, "'colour'"),
        ({"target_tokens": "many"}, "'target_tokens'"),
    ],
)
def test_bad_policy_is_one_sentence(fields: dict[str, object], needle: str) -> None:
    with pytest.raises(PolicyError) as info:
        make_policy(**fields)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message and message.endswith(".")


def test_policy_hash_depends_on_every_field() -> None:
    base = ChunkPolicy()
    variants = [
        ChunkPolicy(target_tokens=511),
        ChunkPolicy(overlap_tokens=63),
        ChunkPolicy(max_tokens=9),
        ChunkPolicy(tokenizer="tiktoken:cl100k_base"),
        ChunkPolicy(merge_peers=False),
        ChunkPolicy(merge_list_items=False),
    ]
    hashes = {v.policy_hash for v in variants}
    assert base.policy_hash not in hashes and len(hashes) == len(variants)
