"""hierarchical-v1: one chunk per element (scenarios and edge cases)."""

from __future__ import annotations

import inspect

import pytest

from kebab_chunk.chunkers import Chunker, get_chunker
from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.hierarchical_v1 import HierarchicalV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import Chunk, LineSpan, ListBlock, make_policy
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.token_docs import H, Img, Items, P, Table, build, doc_with

CHUNKER = HierarchicalV1Chunker(label("hierarchical-v1"))
TOKENIZERS = ["bytes-3", "hf:all-MiniLM-L6-v2", "tiktoken:cl100k_base"]

PARTS = [
    H(1, "Guide"),
    P("Intro text. Two sentences."),
    H(2, "Setup"),
    Items(("- first item", "- second item\n  continued", "- third item")),
    Table(("a", "b"), (("1", "2"), ("3", "4"))),
    Img("diagram", "d.png", caption="The architecture"),
    H(2, "Empty section"),
    H(2, "Last"),
    P("Closing words."),
]


def _slice_ok(source: str, chunk: Chunk) -> bool:
    (span,) = chunk.source_spans
    assert isinstance(span, LineSpan)
    line_start = 1 + source[: span.char_start].replace("\r\n", "\n").count("\n")
    return source[span.char_start : span.char_end] == chunk.text and line_start == span.line_start


def test_one_chunk_per_element_with_metadata() -> None:
    built = build(PARTS)
    chunks = CHUNKER.chunk(built.doc, make_policy())
    assert [c.text for c in chunks] == [
        "Intro text. Two sentences.",
        "- first item\n- second item\n  continued\n- third item",
        "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |",
        '![diagram](d.png "The architecture")',
        "## Empty section",
        "Closing words.",
    ]
    assert [c.heading_path for c in chunks] == [
        ("Guide",),
        ("Guide", "Setup"),
        ("Guide", "Setup"),
        ("Guide", "Setup"),
        ("Guide",),  # an empty section's heading is its own chunk, under its parents
        ("Guide", "Last"),
    ]
    assert [c.captions for c in chunks] == [(), (), (), ("The architecture",), (), ()]
    assert [c.position for c in chunks] == list(range(6))
    assert all(_slice_ok(built.source, c) for c in chunks)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert all(c.chunker_version == "hierarchical-v1" for c in chunks)


def test_headings_with_content_produce_no_chunk() -> None:
    built = build([H(1, "A"), H(2, "B"), P("text")])
    chunks = CHUNKER.chunk(built.doc, make_policy())
    assert [(c.text, c.heading_path) for c in chunks] == [("text", ("A", "B"))]


def test_trailing_empty_headings_keep_the_deepest() -> None:
    built = build([P("text"), H(1, "A"), H(2, "B")])
    chunks = CHUNKER.chunk(built.doc, make_policy())
    # "A" is carried by B's heading path, so only B needs a chunk.
    assert [(c.text, c.heading_path) for c in chunks] == [("text", ()), ("## B", ("A",))]


def test_merge_list_items_true_makes_one_chunk() -> None:
    built = build([Items(("- a", "- b", "- c"))])
    chunks = CHUNKER.chunk(built.doc, make_policy(merge_list_items=True))
    assert [c.text for c in chunks] == ["- a\n- b\n- c"]


@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_merge_list_items_false_makes_one_chunk_per_item_with_exact_spans(nl: str) -> None:
    items = ("- alpha", "- beta\n  more beta", "- gamma")
    built = build([H(1, "T"), P("before"), Items(items)], nl=nl)
    chunks = CHUNKER.chunk(built.doc, make_policy(merge_list_items=False))
    assert [c.text for c in chunks] == ["before", *(i.replace("\n", nl) for i in items)]
    assert all(_slice_ok(built.source, c) for c in chunks)
    list_id = built.doc.blocks[2].block_id
    assert all(c.block_ids == (list_id,) for c in chunks[1:])
    assert [c.source_spans[0].line_start for c in chunks[1:]] == [5, 6, 8]
    assert chunks[2].source_spans[0].line_end == 7
    assert len({c.chunk_id for c in chunks}) == 4  # slices of one block never collide


def test_items_that_cannot_be_located_keep_the_list_whole_with_a_warning() -> None:
    built = build([Items(("- a", "- b"))])
    block = built.doc.blocks[0]
    odd = block.model_copy(update={"items": ("a", "b", "c")})  # no such shape in the text
    doc = built.doc.model_copy(update={"blocks": (odd,)})
    warnings: list[str] = []
    chunks = list(CHUNKER.iter_chunks(doc, make_policy(merge_list_items=False), warnings))
    assert [c.text for c in chunks] == ["- a\n- b"]
    assert len(warnings) == 1 and "kept as one chunk" in warnings[0]


def test_marker_fallback_locates_items_of_other_renderings() -> None:
    built = build([Items(("- a", "  - nested", "- b"))])
    block = built.doc.blocks[0]
    doc = built.doc.model_copy(
        update={"blocks": (block.model_copy(update={"items": ("a nested", "b")}),)}
    )
    chunks = CHUNKER.chunk(doc, make_policy(merge_list_items=False))
    assert [c.text for c in chunks] == ["- a\n  - nested", "- b"]
    assert all(_slice_ok(built.source, c) for c in chunks)


def test_empty_document_gives_no_chunks() -> None:
    doc = doc_with(())
    assert CHUNKER.chunk(doc, make_policy()) == []
    assert list(CHUNKER.iter_chunks(doc, make_policy())) == []


def test_blank_blocks_give_no_chunks() -> None:
    built = build([P("   ")])
    assert CHUNKER.chunk(built.doc, make_policy()) == []


def test_no_headings_contextualize_returns_text_unchanged() -> None:
    built = build([P("just text"), Items(("- x",))])
    for chunk in CHUNKER.chunk(built.doc, make_policy()):
        assert chunk.heading_path == () and contextualize(chunk) == chunk.text


def test_contextualize_prefixes_headings_then_captions() -> None:
    built = build([H(1, "A"), H(2, "B"), Img("x", "x.png", caption="Cap")])
    (chunk,) = CHUNKER.chunk(built.doc, make_policy())
    assert contextualize(chunk) == 'A\nB\nCap\n![x](x.png "Cap")'


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_token_estimate_is_the_contextualised_count(tokenizer: str) -> None:
    built = build(PARTS)
    tok = get_tokenizer(tokenizer)
    chunks = CHUNKER.chunk(built.doc, make_policy(tokenizer=tokenizer))
    assert chunks
    for chunk in chunks:
        assert chunk.token_estimate == tok.count_tokens(contextualize(chunk))


def test_json_round_trip_is_lossless() -> None:
    built = build(PARTS)
    for chunk in CHUNKER.chunk(built.doc, make_policy(merge_list_items=False)):
        assert Chunk.model_validate_json(chunk.model_dump_json()) == chunk


def test_iter_chunks_is_lazy() -> None:
    built = build([P(f"paragraph {i}") for i in range(2000)])
    stream = CHUNKER.iter_chunks(built.doc, make_policy())
    assert inspect.isgenerator(stream)
    first = next(stream)
    assert first.text == "paragraph 0" and first.position == 0
    assert [c.position for c in stream][-1] == 1999


def test_deterministic_and_policy_sensitive() -> None:
    built = build(PARTS)
    a = CHUNKER.chunk(built.doc, make_policy())
    assert a == CHUNKER.chunk(built.doc, make_policy())
    b = CHUNKER.chunk(built.doc, make_policy(tokenizer="tiktoken:cl100k_base"))
    assert [c.text for c in a] == [c.text for c in b]
    assert {c.policy_hash for c in a}.isdisjoint({c.policy_hash for c in b})


def test_registered_and_satisfies_the_protocol() -> None:
    chunker = get_chunker("hierarchical-v1")
    assert isinstance(chunker, Chunker) and isinstance(chunker, HierarchicalV1Chunker)
    assert chunker.accepts(build([P("x")]).doc)


def test_items_of_a_structured_list_cite_their_own_elements() -> None:
    items = ("first", "nested", "last one")
    spans = tuple(
        ElementSpan(ref=f"/w:p[{i}]", char_start=0, char_end=len(t)) for i, t in enumerate(items)
    )
    block = ListBlock(
        block_id="L", text="- first\n  - nested\n- last one", spans=spans, items=items
    )
    chunks = CHUNKER.chunk(doc_with([block], "x.docx", "x"), make_policy(merge_list_items=False))
    assert [(c.text, c.source_spans) for c in chunks] == [
        (t, (s,)) for t, s in zip(items, spans, strict=True)
    ]
    assert len({c.chunk_id for c in chunks}) == 3  # every span starts at 0: ids still differ


def test_items_of_a_rendered_list_cite_the_list_and_keep_unique_ids() -> None:
    span = LineSpan(line_start=1, line_end=4, char_start=100, char_end=160)  # the markup
    block = ListBlock(
        block_id="L",
        text="- alpha\n- beta\n- gamma",
        spans=(span,),
        items=("alpha", "beta", "gamma"),
    )
    chunks = CHUNKER.chunk(doc_with([block], "x.html", "x"), make_policy(merge_list_items=False))
    assert [c.text for c in chunks] == ["- alpha", "- beta", "- gamma"]
    assert all(c.source_spans == (span,) for c in chunks)
    assert len({c.chunk_id for c in chunks}) == 3
