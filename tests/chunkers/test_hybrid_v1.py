"""hybrid-v1: splitting, merging, budgets and context, its edge cases, and issue 5's promises."""

from __future__ import annotations

import inspect
import itertools
import re

import pytest

from kebab_chunk.chunkers import Chunker, get_chunker
from kebab_chunk.chunkers import _hybrid as hybrid_module
from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import (
    CanonicalDocument,
    Chunk,
    ImageRefBlock,
    LineSpan,
    PageSpan,
    TableBlock,
    make_policy,
)
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.tokenizers import ByteProxyTokenizer, get_tokenizer
from tests.chunkers.token_docs import (
    H,
    Img,
    Items,
    P,
    Table,
    build,
    check_chunks,
    doc_with,
    element_doc,
    page_doc,
    rendered_doc,
)

CHUNKER = HybridChunker(label("hybrid-v1"))
TOKENIZERS = ["bytes-3", "hf:all-MiniLM-L6-v2", "tiktoken:cl100k_base"]


def words(n: int, stem: str = "word") -> str:
    """``n`` distinct words in sentences of eight."""
    out = []
    for i in range(n):
        out.append(f"{stem}{i}" + ("." if i % 8 == 7 else ""))
    return " ".join(out)


def run(built_or_doc: object, **policy: object) -> list[Chunk]:
    doc = getattr(built_or_doc, "doc", built_or_doc)
    assert isinstance(doc, CanonicalDocument)
    return CHUNKER.chunk(doc, make_policy(**policy))


# -- scenario 2: the contextualised form never exceeds max_tokens ----------------------


def test_minilm_512_contextualised_chunks_fit() -> None:
    built = build([H(1, "Doc"), H(2, "Part"), P(words(900)), P("short"), P(words(300, "x"))])
    chunks = run(built, tokenizer="hf:all-MiniLM-L6-v2", max_tokens=512)
    check_chunks(chunks, "hf:all-MiniLM-L6-v2", 512, built.source)
    assert len(chunks) > 2
    assert max(c.token_estimate for c in chunks) > 256  # the user's 512 is used, not 256


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_max_tokens_10_is_still_respected(tokenizer: str) -> None:
    built = build(
        [
            H(1, "Top"),
            P(words(60)),
            Items(("- one two three four five six", "- seven")),
            Table(("k", "v"), (("a", "1"), ("b", "2"))),
        ]
    )
    chunks = run(built, tokenizer=tokenizer, max_tokens=10, overlap_tokens=0)
    check_chunks(chunks, tokenizer, 10, built.source)
    for i in range(60):  # no word is lost
        assert any(re.search(rf"\bword{i}\b", c.text) for c in chunks)


# -- scenarios 3 and 4: merge_peers ----------------------------------------------------


def test_merge_peers_merges_small_consecutive_chunks_with_the_same_headings() -> None:
    built = build([H(1, "A"), P("one."), P("two."), P("three."), H(1, "B"), P("four.")])
    chunks = run(built, merge_peers=True)
    assert [c.text for c in chunks] == ["one.\n\ntwo.\n\nthree.", "four."]
    assert chunks[0].block_ids == tuple(b.block_id for b in built.doc.blocks[1:4])
    assert chunks[0].heading_path == ("A",) and chunks[1].heading_path == ("B",)
    check_chunks(chunks, "bytes-3", 512, built.source)


def test_merge_peers_false_keeps_every_element_apart() -> None:
    built = build([H(1, "A"), P("one."), P("two."), P("three.")])
    chunks = run(built, merge_peers=False)
    assert [c.text for c in chunks] == ["one.", "two.", "three."]


def test_merge_stops_at_the_budget() -> None:
    built = build([P("a" * 30), P("b" * 30), P("c" * 30)])
    chunks = run(built, tokenizer="bytes-3", max_tokens=22)  # two fit (62 bytes), not three
    assert [c.text for c in chunks] == ["a" * 30 + "\n\n" + "b" * 30, "c" * 30]
    check_chunks(chunks, "bytes-3", 22, built.source)


def test_peers_with_different_captions_stay_apart() -> None:
    built = build([P("text"), Img("alt", "i.png", caption="cap"), P("more")])
    assert len(run(built)) == 3


def test_merge_list_items_false_items_merge_back_as_peers() -> None:
    built = build([Items(("- a", "- b", "- c"))])
    assert [c.text for c in run(built, merge_list_items=False)] == ["- a\n- b\n- c"]
    assert len(run(built, merge_list_items=False, merge_peers=False)) == 3


@pytest.mark.parametrize(
    ("nl", "seps", "merged"),
    [
        ("\r\n", None, True),  # CRLF gaps are rebuilt in the style the blocks show
        ("\n", ["\n\n---\n\n", "\n\n"], False),  # a dropped thematic break: gap unknown
        ("\n", ["\n  \n", "\n\n"], False),  # spaces on the blank line: gap unknown
    ],
)
def test_peers_join_only_over_known_gaps(nl: str, seps: list[str] | None, merged: bool) -> None:
    built = build([P("one\nline"), P("two"), P("three")], nl=nl, seps=seps)
    chunks = run(built)
    check_chunks(chunks, "bytes-3", 512, built.source)
    assert ("two" in chunks[0].text) is merged


def test_crlf_gaps_are_not_guessed_without_evidence() -> None:
    built = build([P("one"), P("two")], nl="\r\n")  # no block shows its line breaks
    assert len(run(built)) == 2


def test_mixed_line_endings_never_join() -> None:
    built = build([P("a\nb"), P("c\r\nd"), P("e")])
    chunks = run(built)
    assert len(chunks) == 3
    check_chunks(chunks, "bytes-3", 512, built.source)


# -- scenario 5: oversized elements are split into exact slices ------------------------


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_oversized_paragraph_is_split_into_exact_slices(tokenizer: str) -> None:
    built = build([H(1, "Title"), P(words(400))])
    chunks = run(built, tokenizer=tokenizer, max_tokens=64, overlap_tokens=0)
    check_chunks(chunks, tokenizer, 64, built.source)
    assert len(chunks) > 3
    block = built.doc.blocks[1]
    assert all(c.block_ids == (block.block_id,) for c in chunks)
    # without overlap the pieces tile the paragraph: only whitespace lies between them
    spans = [c.source_spans[0] for c in chunks]
    assert spans[0].char_start == block.spans[0].char_start
    assert spans[-1].char_end == block.spans[0].char_end
    for a, b in itertools.pairwise(spans):
        assert built.source[a.char_end : b.char_start].isspace()
    # pieces end at sentence ends when a sentence fits
    assert all(c.text.endswith(".") for c in chunks[:-1])


def test_code_block_is_split_at_line_breaks() -> None:
    body = "\n".join(f"print('line {i}')" for i in range(80))
    built = build([P(f"```\n{body}\n```")])
    chunks = run(built, max_tokens=40, overlap_tokens=0)
    check_chunks(chunks, "bytes-3", 40, built.source)
    assert len(chunks) > 5
    for chunk in chunks:
        start = chunk.source_spans[0].char_start
        assert start == 0 or built.source[start - 1] == "\n"


def test_overlap_repeats_a_tail_that_fits_overlap_tokens() -> None:
    built = build([P(words(300))])
    chunks = run(built, max_tokens=50, overlap_tokens=12)
    check_chunks(chunks, "bytes-3", 50, built.source)
    spans = [c.source_spans[0] for c in chunks]
    overlaps = 0
    for a, b in itertools.pairwise(spans):
        assert a.char_start < b.char_start < a.char_end + 2
        if b.char_start < a.char_end:
            overlaps += 1
            tail = built.source[b.char_start : a.char_end].rstrip()
            assert get_tokenizer("bytes-3").count_tokens(tail) <= 12
    assert overlaps == len(chunks) - 1


def test_tables_split_between_rows_with_the_header_repeated() -> None:
    rows = tuple((f"r{i}", f"value number {i}") for i in range(40))
    built = build([H(1, "Data"), Table(("key", "value"), rows)])
    chunks = run(built, max_tokens=60)
    check_chunks(chunks, "bytes-3", 60, built.source)
    assert len(chunks) > 3
    header = "| key | value |\n|---|---|"
    assert chunks[0].text.startswith(header) and chunks[0].captions == ()
    seen = []
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])
        if chunk is not chunks[0]:
            assert chunk.captions == (header,)
            assert contextualize(chunk).startswith("Data\n" + header + "\n| r")
            seen += lines
        else:
            seen += lines[2:]
    assert seen == [f"| r{i} | value number {i} |" for i in range(40)]  # no row lost/split


def test_a_row_larger_than_the_budget_is_split_as_a_last_resort() -> None:
    built = build([Table(("k",), (("small",), (words(80),), ("tail",)))])
    chunks = run(built, max_tokens=40, overlap_tokens=0)
    check_chunks(chunks, "bytes-3", 40, built.source)
    assert "".join(c.text for c in chunks).count("word79") == 1


def test_list_is_split_between_items_first() -> None:
    items = tuple(f"- item {i} " + "x" * 20 for i in range(30))
    built = build([Items(items)])
    chunks = run(built, max_tokens=40)
    check_chunks(chunks, "bytes-3", 40, built.source)
    assert all(c.text.startswith("- item") for c in chunks)


# -- headings that do not fit ----------------------------------------------------------


def test_headings_alone_over_budget_keep_inner_headings_and_warn() -> None:
    long = [f"Heading level {i} " + "z" * 40 for i in range(1, 4)]
    built = build([H(1, long[0]), H(2, long[1]), H(3, long[2]), P(words(30))])
    warnings: list[str] = []
    chunks = list(CHUNKER.iter_chunks(built.doc, make_policy(max_tokens=40), warnings))
    check_chunks(chunks, "bytes-3", 40, built.source)
    assert warnings and "left out" in warnings[0]
    for chunk in chunks:
        path = chunk.heading_path
        assert tuple(long[3 - len(path) :]) == path  # a suffix: the innermost are kept
    text = " ".join(c.text for c in chunks)
    assert all(f"word{i}" in text for i in range(30))  # content never dropped


def test_a_character_over_the_budget_is_kept_with_a_warning() -> None:
    built = build([P("ab \U0001d11e cd")])  # the G clef is 4 UTF-8 bytes = 2 proxy tokens
    warnings: list[str] = []
    chunks = list(CHUNKER.iter_chunks(built.doc, make_policy(max_tokens=1), warnings))
    assert "".join(c.text for c in chunks) == "ab\U0001d11ecd"
    assert any("one character" in w for w in warnings)
    assert [c.token_estimate for c in chunks if c.text == "\U0001d11e"] == [2]


# -- edge cases ----------------------------------------------------------------------


def test_empty_document_gives_no_chunks() -> None:
    doc = doc_with(())
    assert run(doc) == []


def test_no_headings_contextualize_returns_the_text() -> None:
    built = build([P(words(100))])
    chunks = run(built, max_tokens=30)
    assert len(chunks) > 1
    assert all(c.heading_path == () and contextualize(c) == c.text for c in chunks)


def test_user_max_tokens_over_the_tokenizer_limit_wins() -> None:
    tok = get_tokenizer("hf:all-MiniLM-L6-v2")
    assert tok.max_tokens == 256
    built = build([P(words(250))])
    (chunk,) = run(built, tokenizer=tok.name, max_tokens=1000)
    assert 256 < chunk.token_estimate <= 1000
    default = run(built, tokenizer=tok.name)  # no max_tokens: the model's 256
    assert len(default) > 1
    check_chunks(default, tok.name, 256, built.source)


def test_budget_resolution_order() -> None:
    minilm = get_tokenizer("hf:all-MiniLM-L6-v2")
    assert resolve_max_tokens(make_policy(max_tokens=100), minilm) == 100
    assert resolve_max_tokens(make_policy(), minilm) == 256
    assert resolve_max_tokens(make_policy(target_tokens=300), ByteProxyTokenizer()) == 300


# -- other span kinds and rendered text --------------------------------------------------


def test_page_spans_split_exactly_and_never_merge_across_pages() -> None:
    pages = [words(200), "short page two.", "short page three."]
    doc = page_doc(pages)
    chunks = run(doc, max_tokens=50)
    check_chunks(chunks, "bytes-3", 50)
    for chunk in chunks:
        (span,) = chunk.source_spans
        assert isinstance(span, PageSpan)
        assert pages[span.page - 1][span.char_start : span.char_end] == chunk.text
    assert [c.text for c in chunks[-2:]] == pages[1:]


def test_element_spans_get_exact_sub_spans_and_join_with_newlines() -> None:
    texts = [words(120), "b", "c"]
    doc = element_doc(texts)
    chunks = run(doc, max_tokens=40)
    check_chunks(chunks, "bytes-3", 40)
    assert len(chunks) > 2
    for chunk in chunks:
        span = chunk.source_spans[0]
        assert isinstance(span, ElementSpan) and span.ref == "#/texts/0"
        assert chunk.text.startswith(texts[0][span.char_start : span.char_end])
    # structured sources have no text between elements: peers join with a newline, and
    # the tail of the split element joins them as well
    last = chunks[-1]
    assert last.text.endswith(".\nb\nc")
    assert last.source_spans[1:] == doc.blocks[1].spans + doc.blocks[2].spans


def test_an_element_cut_by_a_page_break_cites_both_parts() -> None:
    text = words(40)
    cut = text.index("word20")
    parts = (
        ElementSpan(ref="#/texts/3", page=1, char_start=0, char_end=cut),
        ElementSpan(ref="#/texts/3", page=2, char_start=cut, char_end=len(text)),
    )
    doc = element_doc([text])
    block = doc.blocks[0].model_copy(update={"spans": parts})
    doc = doc.model_copy(update={"blocks": (block,)})
    chunks = run(doc, max_tokens=60, overlap_tokens=0)
    check_chunks(chunks, "bytes-3", 60)
    straddling = [c for c in chunks if len(c.source_spans) == 2]
    assert len(straddling) == 1
    for chunk in chunks:
        pages = [s.page for s in chunk.source_spans if isinstance(s, ElementSpan)]
        assert "".join(text[s.char_start : s.char_end] for s in chunk.source_spans) == chunk.text
        assert pages == sorted(pages)


def test_rendered_text_splits_with_unique_ids_and_merges_with_newlines() -> None:
    doc = rendered_doc([words(150), "tiny one", "tiny two"])
    chunks = run(doc, max_tokens=40)
    check_chunks(chunks, "bytes-3", 40)
    block = doc.blocks[0]
    pieces = [c for c in chunks if c.block_ids == (block.block_id,)]
    assert len(pieces) > 2 and all(c.source_spans == block.spans for c in pieces)
    assert chunks[-1].text == "tiny one\ntiny two"
    assert chunks[-1].source_spans == doc.blocks[1].spans + doc.blocks[2].spans


# -- records, laziness, registry -----------------------------------------------------------


def test_json_round_trip_is_lossless() -> None:
    built = build([H(1, "T"), P(words(200)), Table(("a",), (("1",), ("2",)))])
    for chunk in run(built, max_tokens=40, tokenizer="tiktoken:cl100k_base"):
        assert Chunk.model_validate_json(chunk.model_dump_json()) == chunk


def test_deterministic() -> None:
    built = build([H(1, "T"), P(words(300)), Items(("- a", "- b"))])
    assert run(built, max_tokens=30) == run(built, max_tokens=30)


class _CountingTokenizer:
    name = "bytes-3"
    max_tokens = None

    def __init__(self) -> None:
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        self.calls += 1
        return ByteProxyTokenizer().count_tokens(text)


def test_iter_chunks_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _CountingTokenizer()
    monkeypatch.setattr(hybrid_module, "get_tokenizer", lambda name: counting)
    built = build([P(f"paragraph number {i}.") for i in range(3000)])
    stream = CHUNKER.iter_chunks(built.doc, make_policy(max_tokens=40))
    assert inspect.isgenerator(stream)
    first = next(stream)
    assert first.position == 0
    assert counting.calls < 50  # only the first few elements were looked at
    assert sum(1 for _ in stream) > 100


def test_registered_and_satisfies_the_protocol() -> None:
    chunker = get_chunker("hybrid-v1")
    assert isinstance(chunker, Chunker) and isinstance(chunker, HybridChunker)


def test_spans_are_line_spans_for_text_sources() -> None:
    built = build([P(words(50))])
    assert all(isinstance(c.source_spans[0], LineSpan) for c in run(built, max_tokens=20))


def test_record_spans_of_a_csv_table_give_the_row_cuts() -> None:
    rows = [f'r{i},"cell\r\nwrapped {i}"' for i in range(12)]
    source = "key,value\r\n" + "\r\n".join(rows)
    spans, offset, line = [], 0, 1
    for record_text in ["key,value", *rows]:
        breaks = record_text.count("\r\n")
        spans.append(
            LineSpan(
                line_start=line,
                line_end=line + breaks,
                char_start=offset,
                char_end=offset + len(record_text),
            )
        )
        offset += len(record_text) + 2
        line += breaks + 1
    block = TableBlock(
        block_id="T",
        text=source,
        spans=tuple(spans),
        header=("key", "value"),
        rows=tuple((f"r{i}", f"cell\r\nwrapped {i}") for i in range(12)),
    )
    doc = doc_with([block], "t.csv", "text/csv")
    chunks = run(doc, max_tokens=40)
    check_chunks(chunks, "bytes-3", 40, source)
    assert len(chunks) > 2
    assert chunks[0].text.startswith("key,value\r\nr0,")
    for chunk in chunks[1:]:
        assert chunk.captions == ("key,value",)
        assert chunk.text.startswith("r") and chunk.text.endswith('"')  # whole records


def test_a_caption_alone_over_budget_is_kept_trimmed_not_dropped() -> None:
    caption = words(60)
    block = ImageRefBlock(
        block_id="I",
        text=" ",
        caption=caption,
        heading_path=("A",),
        spans=(LineSpan(line_start=1, line_end=1, char_start=0, char_end=1),),
    )
    doc = doc_with([block], "i.md")
    warnings: list[str] = []
    chunks = list(CHUNKER.iter_chunks(doc, make_policy(max_tokens=30), warnings))
    assert len(chunks) == 1 and chunks[0].captions == () and warnings
    assert chunks[0].token_estimate <= 30
