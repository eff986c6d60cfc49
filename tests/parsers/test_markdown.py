"""The Markdown parsers: every construct, exact offsets, front matter, limits, goldens.

Both versions, md-mistune-v1 and md-pyromark-v1, promise the same CanonicalDocument
contract, so every test that takes the ``parse`` or ``parser`` fixture runs on each of
them. Behaviour only one version has (where the grammars differ, or how a library is
driven) is tested in the sections named after that version at the end.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path

import pyromark
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
from kebab_chunk.parsers import _assemble
from kebab_chunk.parsers.base import ParseLimits, Parser
from kebab_chunk.parsers.md_mistune_v1 import MarkdownParser
from kebab_chunk.parsers.md_pyromark_v1 import PyromarkMarkdownParser
from kebab_chunk.parsers.registry import (
    UnknownParserVersionError,
    UnsupportedMediaTypeError,
    get_parser,
    get_parser_by_version,
    parse_document,
    parser_versions,
)
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"

#: Every Markdown parser version, by version label, with its engine.
MARKDOWN_PARSERS: dict[str, type[Parser]] = {
    "md-mistune-v1": MarkdownParser,
    "md-pyromark-v1": PyromarkMarkdownParser,
}

Parse = Callable[..., CanonicalDocument]


def parse_with(
    parser: Parser, source: str | bytes, uri: str = "doc.md", **limits: int
) -> CanonicalDocument:
    """``parser``'s document of ``source``, checked against the source-location convention."""
    raw = source.encode("utf-8") if isinstance(source, str) else source
    doc = parser.parse(raw, uri, ParseLimits(**limits))
    assert_exact(doc, raw)
    return doc


@pytest.fixture(params=sorted(MARKDOWN_PARSERS))
def version(request: pytest.FixtureRequest) -> str:
    label: str = request.param
    return label


@pytest.fixture
def parser(version: str) -> Parser:
    return get_parser_by_version(version)


@pytest.fixture
def parse(parser: Parser) -> Parse:
    """``parse(source, uri="doc.md", **limits)`` with the parser version under test."""

    def run(source: str | bytes, uri: str = "doc.md", **limits: int) -> CanonicalDocument:
        return parse_with(parser, source, uri, **limits)

    return run


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


def test_atx_headings_levels_titles_and_closing_hashes(parse: Parse) -> None:
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
    assert headings[1].text == "## Two ##"


def test_seven_hashes_and_missing_space_are_paragraphs(parse: Parse) -> None:
    assert kinds(parse("####### seven\n\n#hashtag\n")) == ["paragraph", "paragraph"]


def test_setext_headings_include_their_underline(parse: Parse) -> None:
    doc = parse("Title\n=====\n\nSub title\n---\n")
    first, second = doc.blocks
    assert isinstance(first, HeadingBlock) and isinstance(second, HeadingBlock)
    assert (first.level, first.title, first.text) == (1, "Title", "Title\n=====")
    assert (second.level, second.title, second.text) == (2, "Sub title", "Sub title\n---")
    assert first.spans[0].line_end == 2


def test_multi_line_setext_title_is_one_line_with_collapsed_spaces(parse: Parse) -> None:
    (heading,) = parse("A long\n  title   here\n===\n").blocks
    assert isinstance(heading, HeadingBlock)
    assert heading.title == "A long title here"
    assert heading.text == "A long\n  title   here\n==="


def test_heading_title_keeps_inline_markdown_and_escapes(parse: Parse) -> None:
    (heading,) = parse("## The `code` and **bold** part\n").blocks
    assert isinstance(heading, HeadingBlock)
    assert heading.title == "The `code` and **bold** part"
    # an escaped first character (pulldown-cmark's text event starts after the backslash)
    first, second, third = parse("# \\# not closing \\#\n\n#hash\n===\n\n#\n").blocks
    assert isinstance(first, HeadingBlock) and first.title == "\\# not closing \\#"
    assert isinstance(second, HeadingBlock) and second.title == "#hash"
    assert isinstance(third, HeadingBlock) and (third.level, third.title) == (1, "")


def test_heading_path_nests_and_pops(parse: Parse) -> None:
    doc = parse("# A\n\npa\n\n## B\n\npb\n\n### C\n\npc\n\n## D\n\npd\n\n# E\n\npe\n")
    paths = {b.text: b.heading_path for b in doc.blocks}
    assert paths["# A"] == ("A",)
    assert paths["pa"] == ("A",)
    assert paths["## B"] == ("A", "B")
    assert paths["pc"] == ("A", "B", "C")
    assert paths["## D"] == ("A", "D")
    assert paths["pd"] == ("A", "D")
    assert paths["pe"] == ("E",)


def test_heading_path_after_skipped_level(parse: Parse) -> None:
    doc = parse("# A\n\n### C\n\n## B\n\ntext\n")
    assert doc.blocks[-1].heading_path == ("A", "B")


def test_blocks_before_any_heading_have_empty_path(parse: Parse) -> None:
    assert parse("intro\n\n# A\n").blocks[0].heading_path == ()


# --- paragraphs, quotes, html, breaks -----------------------------------------------------


def test_paragraph_spans_lines_without_trailing_break(parse: Parse) -> None:
    doc = parse("first line\nsecond line\n\n\nnext\n")
    assert [b.text for b in doc.blocks] == ["first line\nsecond line", "next"]
    assert all(isinstance(b, ParagraphBlock) for b in doc.blocks)
    assert doc.blocks[1].spans[0].line_start == 5


def test_leading_indentation_is_kept_in_the_span(parse: Parse) -> None:
    (block,) = parse("   indented paragraph\n").blocks
    assert block.text == "   indented paragraph"
    assert block.spans[0].char_start == 0


def test_whitespace_only_line_separates_paragraphs(parse: Parse) -> None:
    # five spaces would be an indented-code line to mistune's fast path
    assert [b.text for b in parse("one\n     \ntwo\n").blocks] == ["one", "two"]
    assert [b.text for b in parse("one\n\t\ntwo\n").blocks] == ["one", "two"]


def test_block_quote_is_a_paragraph_with_markers_and_lazy_lines(parse: Parse) -> None:
    doc = parse("> quoted\n> - list in quote\n\n> lazy\ncontinued\n\nafter\n")
    assert kinds(doc) == ["paragraph", "paragraph", "paragraph"]
    assert doc.blocks[0].text == "> quoted\n> - list in quote"
    assert doc.blocks[1].text == "> lazy\ncontinued"


def test_block_quote_ended_by_a_list_or_fence(parse: Parse) -> None:
    doc = parse("> quote\n- item\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [("paragraph", "> quote"), ("list", "- item")]
    doc = parse("> quote\n```\ncode\n```\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "> quote"),
        ("code", "```\ncode\n```"),
    ]


def test_html_blocks_are_paragraphs(parse: Parse) -> None:
    doc = parse('<div class="x">\n  <b>hi</b>\n</div>\n\n<!-- one\ntwo -->\n')
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", '<div class="x">\n  <b>hi</b>\n</div>'),
        ("paragraph", "<!-- one\ntwo -->"),
    ]


def test_an_image_in_an_html_block_or_quote_is_not_an_image_ref(parse: Parse) -> None:
    doc = parse("> ![a](a.png)\n\n<p>\n![b](b.png)\n</p>\n")
    assert kinds(doc) == ["paragraph", "paragraph"]


def test_thematic_breaks_blank_lines_and_link_definitions_make_no_block(parse: Parse) -> None:
    source = 'a\n\n***\n\n- - -\n\n[ref]: https://example.com "T"\n[other]:\n  /x\n\nb [ref]\n'
    doc = parse(source)
    assert [b.text for b in doc.blocks] == ["a", "b [ref]"]


def test_link_definition_after_a_list_is_not_part_of_the_list(parse: Parse) -> None:
    # pulldown-cmark's range for the list reaches over the definition; the list ends
    # with its last item
    doc = parse("- a\n- b\n\n[ci]: https://example.com/x\n\npara\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [("list", "- a\n- b"), ("paragraph", "para")]


# --- lists -------------------------------------------------------------------------------


def test_nested_list_is_one_block_with_top_level_items(parse: Parse) -> None:
    source = "- a\n- b\n  - b1\n    - b11\n  - b2\n- c\n\n  c para\n"
    (block,) = parse(source).blocks
    assert isinstance(block, ListBlock)
    assert not block.ordered
    assert block.text == source.rstrip("\n")
    assert block.items == ("- a", "- b\n  - b1\n    - b11\n  - b2", "- c\n\n  c para")


def test_ordered_lists_and_marker_changes(parse: Parse) -> None:
    doc = parse("1. one\n2. two\n\n3) x\n4) y\n\n* s\n+ p\n")
    blocks = [b for b in doc.blocks if isinstance(b, ListBlock)]
    assert [(b.ordered, b.items) for b in blocks] == [
        (True, ("1. one", "2. two")),
        (True, ("3) x", "4) y")),
        (False, ("* s",)),
        (False, ("+ p",)),
    ]


def test_list_items_with_blank_lines_and_crlf(parse: Parse) -> None:
    doc = parse(b"- a\r\n\r\n- b\r\n  more\r\n")
    (block,) = doc.blocks
    assert isinstance(block, ListBlock)
    assert block.items == ("- a", "- b\r\n  more")


def test_list_item_containing_a_marker_like_line_in_code(parse: Parse) -> None:
    source = "- item\n\n      - not an item (code)\n- real\n"
    (block,) = parse(source).blocks
    assert isinstance(block, ListBlock)
    assert len(block.items) == 2
    assert block.items[1] == "- real"


def test_indented_list_items_start_at_their_line(parse: Parse) -> None:
    (block,) = parse("  - a\n  - b\n").blocks
    assert isinstance(block, ListBlock)
    assert block.text == "  - a\n  - b"
    assert block.items == ("  - a", "  - b")


# --- code -------------------------------------------------------------------------------


def test_fenced_code_language_is_first_word_of_info(parse: Parse) -> None:
    doc = parse("```python title=x.py\nx = 1\n```\n\n~~~ {.rust}\ny\n~~~\n\n```\nplain\n```\n")
    assert [b.language for b in doc.blocks if isinstance(b, CodeBlock)] == [
        "python",
        "{.rust}",
        None,
    ]
    assert doc.blocks[0].text == "```python title=x.py\nx = 1\n```"


def test_heading_like_lines_inside_code_are_code(parse: Parse) -> None:
    doc = parse("```\n# not a heading\n\n- nor a list\n```\n")
    assert kinds(doc) == ["code"]


def test_indented_code_has_no_language_and_keeps_indentation(parse: Parse) -> None:
    doc = parse("para\n\n    code one\n\n    code two\n\nafter\n")
    code = doc.blocks[1]
    assert isinstance(code, CodeBlock)
    assert code.language is None
    assert code.text == "    code one\n\n    code two"


def test_unclosed_fence_runs_to_the_end(parse: Parse) -> None:
    doc = parse("text\n\n```js\nlet a\n\n# still code\n")
    assert kinds(doc) == ["paragraph", "code"]
    assert doc.blocks[1].text == "```js\nlet a\n\n# still code"


# --- tables -----------------------------------------------------------------------------


def test_gfm_table_header_rows_and_stripped_cells(parse: Parse) -> None:
    source = "| Name |  Value |\n|:-----|------:|\n|  a  | 1 |\n| b |  22  |\n"
    (table,) = parse(source).blocks
    assert isinstance(table, TableBlock)
    assert table.header == ("Name", "Value")
    assert table.rows == (("a", "1"), ("b", "22"))
    assert table.text == source.rstrip("\n")


def test_table_without_edge_pipes(parse: Parse) -> None:
    (table,) = parse("a | b\n--|--\n1 | 2\n").blocks
    assert isinstance(table, TableBlock)
    assert (table.header, table.rows) == (("a", "b"), (("1", "2"),))


def test_pipes_without_delimiter_row_are_a_paragraph(parse: Parse) -> None:
    assert kinds(parse("| a | b |\n| c | d |\n")) == ["paragraph"]


def test_table_cells_are_source_with_escaped_pipes_and_non_ascii(parse: Parse) -> None:
    (table,) = parse("| 東京 \\| x | é |\n|---|---|\n| 😀 | ü |\n").blocks
    assert isinstance(table, TableBlock)
    assert table.header == ("東京 \\| x", "é")
    assert table.rows == (("😀", "ü"),)


# --- images and audio ---------------------------------------------------------------------


def test_image_only_paragraph(parse: Parse) -> None:
    (block,) = parse('![A diagram](img/d.png "The caption")\n').blocks
    assert isinstance(block, ImageRefBlock)
    assert (block.alt, block.src, block.caption) == ("A diagram", "img/d.png", "The caption")
    assert block.text == '![A diagram](img/d.png "The caption")'


def test_image_variants(parse: Parse) -> None:
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


def test_image_with_text_or_two_images_is_a_paragraph(parse: Parse) -> None:
    doc = parse("see ![a](a.png)\n\n![a](a.png) ![b](b.png)\n\n![ref][r]\n\n[r]: x.png\n")
    assert kinds(doc) == ["paragraph", "paragraph", "paragraph"]


def test_audio_reference_captions(parse: Parse) -> None:
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


def test_front_matter_becomes_metadata_not_a_block(parse: Parse) -> None:
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


def test_front_matter_before_non_ascii_text_keeps_offsets_exact(parse: Parse) -> None:
    source = "---\ntitle: Café ☕\n---\n# Über\n\n東京 text\n"
    doc = parse(source)
    assert doc.metadata == {"title": "Café ☕"}
    assert [b.spans[0].char_start for b in doc.blocks] == [
        source.index("# Über"),
        source.index("東京"),
    ]


def test_front_matter_with_dots_closer_crlf_and_odd_values(parse: Parse) -> None:
    source = b"---\r\ntitle: 5\r\n1: one\r\nraw: !!binary aGk=\r\nf: .nan\r\n...\r\n# Real\r\n"
    doc = parse(source)
    assert doc.metadata == {"title": 5, "1": "one", "raw": "aGk=", "f": "nan"}
    assert doc.title == "Real"  # a non-string front matter title falls back to the H1
    assert doc.blocks[0].text == "# Real"


def test_invalid_yaml_front_matter_is_kept_raw_with_a_warning(parse: Parse) -> None:
    doc = parse("---\ntitle: [oops\n---\n# From H1\n")
    assert doc.metadata == {"front_matter_raw": "title: [oops\n"}
    assert len(doc.warnings) == 1 and "front matter" in doc.warnings[0]
    assert doc.title == "From H1"
    assert [b.text for b in doc.blocks] == ["# From H1"]


def test_empty_front_matter(parse: Parse) -> None:
    doc = parse("---\n---\ntext\n")
    assert doc.metadata == {} and [b.text for b in doc.blocks] == ["text"]


def test_yaml_alias_bomb_is_kept_raw(parse: Parse) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    doc = parse("---\n" + "\n".join(lines) + "\n---\nbody\n")
    assert set(doc.metadata) == {"front_matter_raw"}
    assert doc.warnings


def test_thematic_break_then_text_is_not_front_matter(parse: Parse) -> None:
    doc = parse("---\n\nJust text\n---\n")
    assert doc.metadata == {}
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "Just text\n---")]


def test_scalar_yaml_between_rules_is_markdown(parse: Parse) -> None:
    doc = parse("---\nSome words\n---\n")
    assert doc.metadata == {}
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "Some words\n---")]


def test_title_from_first_h1_or_none(parse: Parse) -> None:
    assert parse("## two\n\n# First\n\n# Second\n").title == "First"
    assert parse("Setext\n===\n").title == "Setext"
    assert parse("## only two\n").title is None


# --- encodings and offsets ----------------------------------------------------------------


def test_crlf_offsets_are_exact_and_structure_matches_lf(parse: Parse) -> None:
    lf = "# T\n\npara one\nline two\n\n- a\n- b\n\n```\ncode\n```\n\nSub\n---\n"
    lf_doc = parse(lf)
    crlf_doc = parse(lf.replace("\n", "\r\n").encode())
    cr_doc = parse(lf.replace("\n", "\r").encode())
    assert "\r\n" in crlf_doc.blocks[1].text
    assert not any(b.text.endswith(("\r", "\n")) for b in crlf_doc.blocks + cr_doc.blocks)
    for other in (crlf_doc, cr_doc):
        assert kinds(other) == kinds(lf_doc)
        assert [(s.line_start, s.line_end) for b in other.blocks for s in b.spans] == [
            (s.line_start, s.line_end) for b in lf_doc.blocks for s in b.spans
        ]


def test_bom_is_not_counted(parse: Parse) -> None:
    raw = b"\xef\xbb\xbf# Title\n\nbody\n"
    doc = parse(raw)
    assert doc.blocks[0].spans[0].char_start == 0
    assert doc.blocks[1].spans[0].char_start == 9
    assert doc.content_hash == content_hash(raw)


def test_offsets_are_code_points_with_cjk_emoji_and_tabs(parse: Parse) -> None:
    source = "# 東京 😀\n\n\tcode\n\ncafé\tbar 日本語\n\n- ü\n- 😀 two\n"
    doc = parse(source)
    para = doc.blocks[2]
    assert para.text == "café\tbar 日本語"
    assert para.spans[0].char_start == source.index("café")
    assert doc.blocks[1].kind == "code"
    assert doc.blocks[0].heading_path == ("東京 😀",)
    last = doc.blocks[-1]
    assert isinstance(last, ListBlock) and last.items == ("- ü", "- 😀 two")


def test_invalid_utf8_is_replaced_with_a_warning(parse: Parse) -> None:
    doc = parse(b"# ok\n\nbad \xff\xfe byte\n")
    assert doc.blocks[1].text == "bad \ufffd\ufffd byte"
    assert any("invalid UTF-8" in w for w in doc.warnings)


def test_utf16_with_bom_is_decoded(parser: Parser) -> None:
    raw = "# Titel\n\nÄrger\n".encode("utf-16")
    doc = parser.parse(raw, "u.md")
    assert [b.text for b in doc.blocks] == ["# Titel", "Ärger"]
    assert doc.warnings and "utf-16" in doc.warnings[0]


def test_nul_bytes_are_binary(parser: Parser) -> None:
    with pytest.raises(BinaryContentError):
        parser.parse(b"# x\x00\x01\x02", "bin.md")


def test_a_late_nul_byte_keeps_offsets_exact(parse: Parse) -> None:
    # past the binary sniff window (pulldown-cmark reads NUL as U+FFFD): ranges stay exact
    doc = parse("é" * 5000 + "\n\n# h\x00x\n\nafter é\n")
    assert [b.kind for b in doc.blocks] == ["paragraph", "heading", "paragraph"]
    assert doc.blocks[-1].text == "after é"


def test_empty_and_blank_documents(parse: Parse) -> None:
    for source in ("", "\n\n", "  \n\t\n", "\r\n"):
        doc = parse(source)
        assert doc.blocks == () and doc.title is None


def test_no_final_newline(parse: Parse) -> None:
    doc = parse("# T\n\nlast line")
    assert doc.blocks[-1].text == "last line"
    assert parse("***").blocks == ()


# --- identity and registry ----------------------------------------------------------------


def test_document_fields(parser: Parser, version: str) -> None:
    raw = b"# T\n"
    doc = parser.parse(raw, "dir/a.md")
    assert doc.doc_id == doc_id("dir/a.md")
    assert doc.source_uri == "dir/a.md"
    assert doc.media_type == "text/markdown"
    assert doc.parser_version == version == parser.version
    assert doc.content_hash == content_hash(raw)


def test_block_ids_count_occurrences_and_are_content_addressed(parse: Parse) -> None:
    doc = parse("same\n\nsame\n\nother\n")
    ids = [b.block_id for b in doc.blocks]
    assert len(set(ids)) == 3
    edited = parse("same\n\nsame\n\nother, edited\n")
    assert [b.block_id for b in edited.blocks][:2] == ids[:2]
    assert parse("same\n\nsame\n\nother\n") == doc


def test_registry_reaches_each_version(version: str) -> None:
    doc = parse_document(b"# T\n", "notes/a.markdown", parser_version=version)
    assert doc.parser_version == version
    assert isinstance(get_parser_by_version(version), MARKDOWN_PARSERS[version])
    assert parser_versions()[version] == ("text/markdown",)


def test_parsing_is_independent_of_hash_seed(version: str) -> None:
    source = "# T\\n\\n- a\\n- b\\n\\n| x | y |\\n|---|---|\\n| 1 | 2 |\\n"
    script = (
        "from kebab_chunk.parsers.registry import get_parser_by_version as parser;"
        f"d = parser('{version}').parse('{source}'.encode(), 'a.md');"
        "print(d.model_dump_json())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1 and re.search(r'"kind":"table"', outputs.pop())


def test_unknown_or_mismatched_parser_version_is_one_clear_sentence() -> None:
    with pytest.raises(UnknownParserVersionError) as unknown:
        parse_document(b"# T\n", "a.md", parser_version="md-nope-v9")
    assert "md-pyromark-v1" in str(unknown.value) and "\n" not in str(unknown.value)
    with pytest.raises(UnsupportedMediaTypeError, match="text/markdown"):
        parse_document(b"# T\n", "a.md", parser_version="pdf-text-v1")


def test_every_registered_version_reads_its_media_types() -> None:
    for version, media_types in parser_versions().items():
        for media_type in media_types:
            parser = get_parser_by_version(version, media_type)
            assert parser.version == version and media_type in parser.media_types


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
        "*a " * 20_000 + "\n",
        "![" * 20_000 + "\n",
        "|" + "a|" * 2_000 + "\n|" + "-|" * 2_000 + "\n",
    ],
    ids=[
        "list",
        "quote",
        "mixed",
        "quote-lines",
        "indented-list",
        "brackets",
        "ticks",
        "html",
        "emphasis",
        "images",
        "wide-table",
    ],
)
def test_pathological_input_parses_and_keeps_text(parse: Parse, source: str) -> None:
    doc = parse(source)
    covered = "".join(b.text for b in doc.blocks)
    assert "".join(covered.split()) == "".join(source.split())


def test_huge_single_line(parse: Parse) -> None:
    source = "word " * 1_000_000
    (block,) = parse(source).blocks
    assert block.text == source.rstrip()


def test_many_headings(parse: Parse) -> None:
    source = "".join(f"## h{i}\n" for i in range(20_000))
    doc = parse(source)
    assert len(doc.blocks) == 20_000
    assert doc.blocks[-1].spans[0].line_start == 20_000
    assert doc.blocks[-1].heading_path == ("h19999",)


def test_hundred_thousand_headings_hit_max_blocks_fast(parser: Parser) -> None:
    source = "".join(f"# h{i}\n" for i in range(100_000)).encode()
    with pytest.raises(LimitExceededError, match="max_blocks") as info:
        parser.parse(source, "big.md", ParseLimits(max_blocks=50_000))
    assert "\n" not in str(info.value)


def test_max_blocks_exact_boundary(parse: Parse) -> None:
    assert len(parse("a\n\nb\n", max_blocks=2).blocks) == 2
    with pytest.raises(LimitExceededError):
        parse("a\n\nb\n\nc\n", max_blocks=2)


def test_time_budget_is_checked(parser: Parser, monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([0.0, 100.0, 200.0])
    monkeypatch.setattr(_assemble, "clock", lambda: next(ticks))
    with pytest.raises(LimitExceededError, match="time_budget_s"):
        parser.parse(b"# x\n", "slow.md", ParseLimits(time_budget_s=50))


# --- golden snapshots ---------------------------------------------------------------------


def _fixtures() -> list[Path]:
    """The Markdown fixtures (README.md documents them and is not one)."""
    return [p for p in sorted(FIXTURES.glob("*.md")) if p.name != "README.md"]


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_golden_snapshot(parser: Parser, version: str, path: Path) -> None:
    raw = path.read_bytes()
    doc = parser.parse(raw, f"markdown/{path.name}")
    assert_exact(doc, raw)
    assert_golden(version, path.stem, doc.model_dump(mode="json"))


# --- md-mistune-v1 only -------------------------------------------------------------------


def test_mistune_recursion_becomes_a_limit_error() -> None:
    with pytest.raises(LimitExceededError, match="max_nesting"):
        get_parser_by_version("md-mistune-v1").parse(
            ("> " * 5_000 + "x").encode(), "q.md", ParseLimits(max_nesting=5_000)
        )


# --- md-pyromark-v1 only ------------------------------------------------------------------


def test_pyromark_short_and_long_table_rows_follow_gfm() -> None:
    # GFM: missing cells are empty, excess cells are ignored (md-mistune-v1 differs here,
    # see test_parser_agreement.py)
    (table,) = parse_with(
        get_parser_by_version("md-pyromark-v1"), "| a | b |\n|---|---|\n| c |\n| d | e | f |\n"
    ).blocks
    assert isinstance(table, TableBlock)
    assert table.rows == (("c", ""), ("d", "e"))


def test_pyromark_nesting_beyond_max_nesting_is_kept_whole_with_a_warning() -> None:
    source = "- " * 100 + "deep\n\nafter\n"
    doc = parse_with(get_parser_by_version("md-pyromark-v1"), source, max_nesting=64)
    assert [b.kind for b in doc.blocks] == ["list", "paragraph"]
    assert len(doc.warnings) == 1 and "max_nesting=64" in doc.warnings[0]
    assert (
        parse_with(get_parser_by_version("md-pyromark-v1"), source, max_nesting=1_000).warnings
        == ()
    )


def test_pyromark_time_budget_is_checked_while_scanning(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []

    def clock() -> float:
        calls.append(None)
        return 0.0 if len(calls) == 1 else 100.0

    monkeypatch.setattr(_assemble, "clock", clock)
    source = "".join(f"p{i}\n\n" for i in range(1_000)).encode()
    with pytest.raises(LimitExceededError, match="time_budget_s"):
        get_parser_by_version("md-pyromark-v1").parse(
            source, "slow.md", ParseLimits(time_budget_s=50)
        )
    assert len(calls) == 2, "the budget was not checked during the scan"


def test_pyromark_is_the_markdown_default_and_mistune_stays_reachable() -> None:
    assert get_parser("text/markdown").version == "md-pyromark-v1"
    assert parse_document(b"# T\n", "a.md").parser_version == "md-pyromark-v1"
    doc = parse_document(b"# T\n", "a.md", parser_version="md-mistune-v1")
    assert doc.parser_version == "md-mistune-v1"


def test_the_peer_race_picks_the_other_markdown_parser_up() -> None:
    from benchmarks.bench_peers import other_markdown_parsers

    found = other_markdown_parsers().get("md-mistune-v1")
    assert found is not None and type(found()) is MarkdownParser
    assert "md-pyromark-v1" not in other_markdown_parsers()  # the default is raced as "ours"


def test_pyromark_version_is_the_pinned_one() -> None:
    # md-pyromark-v1's blocks follow pulldown-cmark's grammar: an upgrade needs a goldens check
    assert pyromark.__version__ == "0.10.3"
