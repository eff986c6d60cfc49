"""md-mistune-v1: every Markdown construct, exact offsets, front matter, limits, goldens."""

from __future__ import annotations

import re
from bisect import bisect_right
from pathlib import Path

import pytest

from kebab_chunk.errors import BinaryContentError, LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import (
    AudioRefBlock,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
)
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers import markdown as markdown_module
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.markdown import MarkdownParser
from kebab_chunk.parsers.registry import parse_document
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"


def parse(source: str | bytes, uri: str = "doc.md", **limits: int) -> CanonicalDocument:
    raw = source.encode("utf-8") if isinstance(source, str) else source
    doc = MarkdownParser().parse(raw, uri, ParseLimits(**limits))
    assert_exact(doc, raw)
    return doc


def decoded(raw: bytes) -> str:
    return raw.decode("utf-8-sig", errors="replace")


def assert_exact(doc: CanonicalDocument, raw: bytes) -> None:
    """The source-location convention, checked independently of the parser's code."""
    text = decoded(raw) if not raw.startswith((b"\xff\xfe", b"\xfe\xff")) else None
    # offsets just after each line break (CRLF, LF or a lone CR)
    breaks = [m.end() for m in re.finditer(r"\r\n?|\n", text)] if text is not None else []
    previous_end = 0
    for block in doc.blocks:
        assert len(block.spans) == 1
        span = block.spans[0]
        assert isinstance(span, LineSpan)
        assert span.char_start >= previous_end, "blocks overlap or are out of order"
        previous_end = span.char_end
        if text is None:
            continue
        assert text[span.char_start : span.char_end] == block.text
        assert block.text == block.text.rstrip(" \t\r\n\f\v"), "trailing blanks in a block"
        assert block.text.strip(), "empty block"
        assert span.line_start == bisect_right(breaks, span.char_start) + 1
        assert span.line_end == bisect_right(breaks, span.char_end - 1) + 1


def kinds(doc: CanonicalDocument) -> list[str]:
    return [block.kind for block in doc.blocks]


# --- headings ---------------------------------------------------------------------------


def test_atx_headings_levels_titles_and_closing_hashes() -> None:
    doc = parse("# One #\n## Two ##   \n### Three\n#### Four\n##### Five\n###### Six ###\n")
    headings = [b for b in doc.blocks if isinstance(b, HeadingBlock)]
    assert [(h.level, h.title) for h in headings] == [
        (1, "One"),
        (2, "Two"),
        (3, "Three"),
        (4, "Four"),
        (5, "Five"),
        (6, "Six"),
    ]
    assert headings[0].text == "# One #"


def test_seven_hashes_and_missing_space_are_paragraphs() -> None:
    assert kinds(parse("####### seven\n\n#hashtag\n")) == ["paragraph", "paragraph"]


def test_setext_headings_include_their_underline() -> None:
    doc = parse("Title\n=====\n\nSub title\n---\n")
    first, second = doc.blocks
    assert isinstance(first, HeadingBlock) and isinstance(second, HeadingBlock)
    assert (first.level, first.title, first.text) == (1, "Title", "Title\n=====")
    assert (second.level, second.title, second.text) == (2, "Sub title", "Sub title\n---")
    assert first.spans[0].line_end == 2


def test_multi_line_setext_title_is_one_line_with_collapsed_spaces() -> None:
    (heading,) = parse("A long\n  title   here\n===\n").blocks
    assert isinstance(heading, HeadingBlock)
    assert heading.title == "A long title here"
    assert heading.text == "A long\n  title   here\n==="


def test_heading_title_keeps_inline_markdown() -> None:
    (heading,) = parse("## The `code` and **bold** part\n").blocks
    assert isinstance(heading, HeadingBlock)
    assert heading.title == "The `code` and **bold** part"


def test_heading_path_nests_and_pops() -> None:
    doc = parse("# A\n\npa\n\n## B\n\npb\n\n### C\n\npc\n\n## D\n\npd\n\n# E\n\npe\n")
    paths = {b.text: b.heading_path for b in doc.blocks}
    assert paths["# A"] == ("A",)
    assert paths["pa"] == ("A",)
    assert paths["## B"] == ("A", "B")
    assert paths["pc"] == ("A", "B", "C")
    assert paths["## D"] == ("A", "D")
    assert paths["pd"] == ("A", "D")
    assert paths["pe"] == ("E",)


def test_heading_path_after_skipped_level() -> None:
    doc = parse("# A\n\n### C\n\n## B\n\ntext\n")
    assert doc.blocks[-1].heading_path == ("A", "B")


def test_blocks_before_any_heading_have_empty_path() -> None:
    assert parse("intro\n\n# A\n").blocks[0].heading_path == ()


# --- paragraphs, quotes, html, breaks -----------------------------------------------------


def test_paragraph_spans_lines_without_trailing_break() -> None:
    doc = parse("first line\nsecond line\n\n\nnext\n")
    assert [b.text for b in doc.blocks] == ["first line\nsecond line", "next"]
    assert all(isinstance(b, ParagraphBlock) for b in doc.blocks)
    assert doc.blocks[1].spans[0].line_start == 5


def test_leading_indentation_is_kept_in_the_span() -> None:
    (block,) = parse("   indented paragraph\n").blocks
    assert block.text == "   indented paragraph"
    assert block.spans[0].char_start == 0


def test_whitespace_only_line_separates_paragraphs() -> None:
    # five spaces would be an indented-code line to mistune's fast path
    assert [b.text for b in parse("one\n     \ntwo\n").blocks] == ["one", "two"]
    assert [b.text for b in parse("one\n\t\ntwo\n").blocks] == ["one", "two"]


def test_block_quote_is_a_paragraph_with_markers_and_lazy_lines() -> None:
    doc = parse("> quoted\n> - list in quote\n\n> lazy\ncontinued\n\nafter\n")
    assert kinds(doc) == ["paragraph", "paragraph", "paragraph"]
    assert doc.blocks[0].text == "> quoted\n> - list in quote"
    assert doc.blocks[1].text == "> lazy\ncontinued"


def test_block_quote_ended_by_a_list_or_fence() -> None:
    doc = parse("> quote\n- item\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [("paragraph", "> quote"), ("list", "- item")]
    doc = parse("> quote\n```\ncode\n```\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "> quote"),
        ("code", "```\ncode\n```"),
    ]


def test_html_blocks_are_paragraphs() -> None:
    doc = parse('<div class="x">\n  <b>hi</b>\n</div>\n\n<!-- one\ntwo -->\n')
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", '<div class="x">\n  <b>hi</b>\n</div>'),
        ("paragraph", "<!-- one\ntwo -->"),
    ]


def test_thematic_breaks_blank_lines_and_link_definitions_make_no_block() -> None:
    source = 'a\n\n***\n\n- - -\n\n[ref]: https://example.com "T"\n[other]:\n  /x\n\nb [ref]\n'
    doc = parse(source)
    assert [b.text for b in doc.blocks] == ["a", "b [ref]"]


# --- lists -------------------------------------------------------------------------------


def test_nested_list_is_one_block_with_top_level_items() -> None:
    source = "- a\n- b\n  - b1\n    - b11\n  - b2\n- c\n\n  c para\n"
    (block,) = parse(source).blocks
    assert isinstance(block, ListBlock)
    assert not block.ordered
    assert block.text == source.rstrip("\n")
    assert block.items == ("- a", "- b\n  - b1\n    - b11\n  - b2", "- c\n\n  c para")


def test_ordered_lists_and_marker_changes() -> None:
    doc = parse("1. one\n2. two\n\n3) x\n4) y\n\n* s\n+ p\n")
    blocks = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert [(b.ordered, b.items) for b in blocks] == [
        (True, ("1. one", "2. two")),
        (True, ("3) x", "4) y")),
        (False, ("* s",)),
        (False, ("+ p",)),
    ]


def test_list_items_with_blank_lines_and_crlf() -> None:
    doc = parse(b"- a\r\n\r\n- b\r\n  more\r\n")
    (block,) = doc.blocks
    assert isinstance(block, ListBlock)
    assert block.items == ("- a", "- b\r\n  more")


def test_list_item_containing_a_marker_like_line_in_code() -> None:
    source = "- item\n\n      - not an item (code)\n- real\n"
    (block,) = parse(source).blocks
    assert isinstance(block, ListBlock)
    assert len(block.items) == 2
    assert block.items[1] == "- real"


# --- code -------------------------------------------------------------------------------


def test_fenced_code_language_is_first_word_of_info() -> None:
    doc = parse("```python title=x.py\nx = 1\n```\n\n~~~ {.rust}\ny\n~~~\n\n```\nplain\n```\n")
    assert [b.language for b in doc.blocks if isinstance(b, CodeBlock)] == [
        "python",
        "{.rust}",
        None,
    ]
    assert doc.blocks[0].text == "```python title=x.py\nx = 1\n```"


def test_heading_like_lines_inside_code_are_code() -> None:
    doc = parse("```\n# not a heading\n\n- nor a list\n```\n")
    assert kinds(doc) == ["code"]


def test_indented_code_has_no_language_and_keeps_indentation() -> None:
    doc = parse("para\n\n    code one\n\n    code two\n\nafter\n")
    code = doc.blocks[1]
    assert isinstance(code, CodeBlock)
    assert code.language is None
    assert code.text == "    code one\n\n    code two"


def test_unclosed_fence_runs_to_the_end() -> None:
    doc = parse("text\n\n```js\nlet a\n\n# still code\n")
    assert kinds(doc) == ["paragraph", "code"]
    assert doc.blocks[1].text == "```js\nlet a\n\n# still code"


# --- tables -----------------------------------------------------------------------------


def test_gfm_table_header_rows_and_stripped_cells() -> None:
    source = "| Name |  Value |\n|:-----|------:|\n|  a  | 1 |\n| b |  22  |\n"
    (table,) = parse(source).blocks
    assert isinstance(table, TableBlock)
    assert table.header == ("Name", "Value")
    assert table.rows == (("a", "1"), ("b", "22"))
    assert table.text == source.rstrip("\n")


def test_table_without_edge_pipes() -> None:
    (table,) = parse("a | b\n--|--\n1 | 2\n").blocks
    assert isinstance(table, TableBlock)
    assert (table.header, table.rows) == (("a", "b"), (("1", "2"),))


def test_pipes_without_delimiter_row_are_a_paragraph() -> None:
    assert kinds(parse("| a | b |\n| c | d |\n")) == ["paragraph"]


# --- images and audio ---------------------------------------------------------------------


def test_image_only_paragraph() -> None:
    (block,) = parse('![A diagram](img/d.png "The caption")\n').blocks
    assert isinstance(block, ImageRefBlock)
    assert (block.alt, block.src, block.caption) == ("A diagram", "img/d.png", "The caption")
    assert block.text == '![A diagram](img/d.png "The caption")'


def test_image_variants() -> None:
    doc = parse(
        "![](<a b.png>)\n\n![x\\]y](p.png 'single')\n\n![z](q.png (paren))\n\n![w](r(1).png)\n"
    )
    got = [(b.alt, b.src, b.caption) for b in doc.blocks if isinstance(b, ImageRefBlock)]
    assert got == [
        ("", "a b.png", None),
        ("x]y", "p.png", "single"),
        ("z", "q.png", "paren"),
        ("w", "r(1).png", None),
    ]


def test_image_with_text_or_two_images_is_a_paragraph() -> None:
    doc = parse("see ![a](a.png)\n\n![a](a.png) ![b](b.png)\n\n![ref][r]\n\n[r]: x.png\n")
    assert kinds(doc) == ["paragraph", "paragraph", "paragraph"]


def test_audio_reference_captions() -> None:
    doc = parse(
        '![Talk](talk.MP3)\n\n![](a/b.wav "Title only")\n\n![](x.flac)\n\n'
        "![s](y.ogg?dl=1#t=3)\n\n![m](z.m4a)\n"
    )
    audio = [b for b in doc.blocks if isinstance(b, AudioRefBlock)]
    assert [(b.src, b.caption) for b in audio] == [
        ("talk.MP3", "Talk"),
        ("a/b.wav", "Title only"),
        ("x.flac", None),
        ("y.ogg?dl=1#t=3", "s"),
        ("z.m4a", "m"),
    ]


# --- front matter and title -------------------------------------------------------------


def test_front_matter_becomes_metadata_not_a_block() -> None:
    source = "---\ntitle: My doc\ndate: 2024-01-02\nwhen: 2024-01-02 03:04:05\nn: 3\n---\n# H\n"
    doc = parse(source)
    assert doc.metadata == {
        "title": "My doc",
        "date": "2024-01-02",
        "when": "2024-01-02T03:04:05",
        "n": 3,
    }
    assert doc.title == "My doc"
    assert [b.text for b in doc.blocks] == ["# H"]
    assert doc.blocks[0].spans[0].line_start == 7
    assert doc.warnings == ()


def test_front_matter_with_dots_closer_crlf_and_odd_values() -> None:
    source = b"---\r\ntitle: 5\r\n1: one\r\nraw: !!binary aGk=\r\nf: .nan\r\n...\r\n# Real\r\n"
    doc = parse(source)
    assert doc.metadata == {"title": 5, "1": "one", "raw": "aGk=", "f": "nan"}
    assert doc.title == "Real"  # a non-string front matter title falls back to the H1
    assert doc.blocks[0].text == "# Real"


def test_invalid_yaml_front_matter_is_kept_raw_with_a_warning() -> None:
    doc = parse("---\ntitle: [oops\n---\n# From H1\n")
    assert doc.metadata == {"front_matter_raw": "title: [oops\n"}
    assert len(doc.warnings) == 1 and "front matter" in doc.warnings[0]
    assert doc.title == "From H1"
    assert [b.text for b in doc.blocks] == ["# From H1"]


def test_empty_front_matter() -> None:
    doc = parse("---\n---\ntext\n")
    assert doc.metadata == {} and [b.text for b in doc.blocks] == ["text"]


def test_yaml_alias_bomb_is_kept_raw() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    doc = parse("---\n" + "\n".join(lines) + "\n---\nbody\n")
    assert set(doc.metadata) == {"front_matter_raw"}
    assert doc.warnings


def test_thematic_break_then_text_is_not_front_matter() -> None:
    doc = parse("---\n\nJust text\n---\n")
    assert doc.metadata == {}
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "Just text\n---")]


def test_scalar_yaml_between_rules_is_markdown() -> None:
    doc = parse("---\nSome words\n---\n")
    assert doc.metadata == {}
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "Some words\n---")]


def test_title_from_first_h1_or_none() -> None:
    assert parse("## two\n\n# First\n\n# Second\n").title == "First"
    assert parse("Setext\n===\n").title == "Setext"
    assert parse("## only two\n").title is None


# --- encodings and offsets ----------------------------------------------------------------


def test_crlf_offsets_are_exact_and_structure_matches_lf() -> None:
    lf = "# T\n\npara one\nline two\n\n- a\n- b\n\n```\ncode\n```\n\nSub\n---\n"
    lf_doc = parse(lf)
    crlf_doc = parse(lf.replace("\n", "\r\n").encode())
    cr_doc = parse(lf.replace("\n", "\r").encode())
    assert "\r\n" in crlf_doc.blocks[1].text
    for other in (crlf_doc, cr_doc):
        assert kinds(other) == kinds(lf_doc)
        assert [(s.line_start, s.line_end) for b in other.blocks for s in b.spans] == [
            (s.line_start, s.line_end) for b in lf_doc.blocks for s in b.spans
        ]


def test_bom_is_not_counted() -> None:
    raw = b"\xef\xbb\xbf# Title\n\nbody\n"
    doc = parse(raw)
    assert doc.blocks[0].spans[0].char_start == 0
    assert doc.blocks[1].spans[0].char_start == 9
    assert doc.content_hash == content_hash(raw)


def test_offsets_are_code_points_with_cjk_emoji_and_tabs() -> None:
    source = "# 東京 😀\n\n\tcode\n\ncafé\tbar 日本語\n"
    doc = parse(source)
    para = doc.blocks[-1]
    assert para.text == "café\tbar 日本語"
    assert para.spans[0].char_start == source.index("café")
    assert doc.blocks[1].kind == "code"


def test_invalid_utf8_is_replaced_with_a_warning() -> None:
    doc = parse(b"# ok\n\nbad \xff\xfe byte\n")
    assert doc.blocks[1].text == "bad \ufffd\ufffd byte"
    assert any("invalid UTF-8" in w for w in doc.warnings)


def test_utf16_with_bom_is_decoded() -> None:
    raw = "# Titel\n\nÄrger\n".encode("utf-16")
    doc = MarkdownParser().parse(raw, "u.md")
    assert [b.text for b in doc.blocks] == ["# Titel", "Ärger"]
    assert doc.warnings and "utf-16" in doc.warnings[0]


def test_nul_bytes_are_binary() -> None:
    with pytest.raises(BinaryContentError):
        MarkdownParser().parse(b"# x\x00\x01\x02", "bin.md")


def test_empty_and_blank_documents() -> None:
    for source in ("", "\n\n", "  \n\t\n", "\r\n"):
        doc = parse(source)
        assert doc.blocks == () and doc.title is None


def test_no_final_newline() -> None:
    doc = parse("# T\n\nlast line")
    assert doc.blocks[-1].text == "last line"
    assert parse("***").blocks == ()


# --- identity ---------------------------------------------------------------------------


def test_document_fields() -> None:
    raw = b"# T\n"
    doc = MarkdownParser().parse(raw, "dir/a.md")
    assert doc.doc_id == doc_id("dir/a.md")
    assert doc.source_uri == "dir/a.md"
    assert doc.media_type == "text/markdown"
    assert doc.parser_version == "md-mistune-v1" == MarkdownParser.version
    assert doc.content_hash == content_hash(raw)


def test_block_ids_count_occurrences_and_are_content_addressed() -> None:
    doc = parse("same\n\nsame\n\nother\n")
    ids = [b.block_id for b in doc.blocks]
    assert len(set(ids)) == 3
    edited = parse("same\n\nsame\n\nother, edited\n")
    assert [b.block_id for b in edited.blocks][:2] == ids[:2]
    assert parse("same\n\nsame\n\nother\n") == doc


def test_registry_reaches_this_parser_by_version() -> None:
    doc = parse_document(b"# T\n", "notes/a.markdown", parser_version="md-mistune-v1")
    assert doc.parser_version == "md-mistune-v1"


# --- robustness -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "- " * 10_000 + "deep\n",
        "> " * 10_000 + "deep\n",
        "> - " * 5_000 + "deep\n",
        "".join(">" * i + " x\n" for i in range(1, 200)),
        "".join("  " * i + "- x\n" for i in range(300)),
        "[" * 20_000 + "\n",
        "`" * 20_000 + "\n",
        "<div>\n" * 5_000,
    ],
    ids=["list", "quote", "mixed", "quote-lines", "indented-list", "brackets", "ticks", "html"],
)
def test_pathological_nesting_parses_and_keeps_text(source: str) -> None:
    doc = parse(source)
    covered = "".join(b.text for b in doc.blocks)
    assert "".join(covered.split()) == "".join(source.split())


def test_huge_single_line() -> None:
    source = "word " * 1_000_000
    (block,) = parse(source).blocks
    assert block.text == source.rstrip()


def test_many_headings() -> None:
    source = "".join(f"## h{i}\n" for i in range(20_000))
    doc = parse(source)
    assert len(doc.blocks) == 20_000
    assert doc.blocks[-1].spans[0].line_start == 20_000
    assert doc.blocks[-1].heading_path == ("h19999",)


def test_hundred_thousand_headings_hit_max_blocks_fast() -> None:
    source = "".join(f"# h{i}\n" for i in range(100_000)).encode()
    with pytest.raises(LimitExceededError, match="max_blocks") as info:
        MarkdownParser().parse(source, "big.md", ParseLimits(max_blocks=50_000))
    assert "\n" not in str(info.value)


def test_max_blocks_exact_boundary() -> None:
    assert len(parse("a\n\nb\n", max_blocks=2).blocks) == 2
    with pytest.raises(LimitExceededError):
        parse("a\n\nb\n\nc\n", max_blocks=2)


def test_recursion_becomes_a_limit_error() -> None:
    with pytest.raises(LimitExceededError, match="max_nesting"):
        MarkdownParser().parse(
            ("> " * 5_000 + "x").encode(), "q.md", ParseLimits(max_nesting=5_000)
        )


def test_time_budget_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([0.0, 100.0, 200.0])
    monkeypatch.setattr(markdown_module, "_clock", lambda: next(ticks))
    with pytest.raises(LimitExceededError, match="time_budget_s"):
        MarkdownParser().parse(b"# x\n", "slow.md", ParseLimits(time_budget_s=50))


# --- golden snapshots ---------------------------------------------------------------------


def _fixtures() -> list[Path]:
    """The Markdown fixtures (README.md documents them and is not one)."""
    return [p for p in sorted(FIXTURES.glob("*.md")) if p.name != "README.md"]


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_golden_snapshot(path: Path) -> None:
    raw = path.read_bytes()
    doc = MarkdownParser().parse(raw, f"markdown/{path.name}")
    assert_exact(doc, raw)
    assert_golden("md-mistune-v1", path.stem, doc.model_dump(mode="json"))
