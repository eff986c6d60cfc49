"""text-plain-v1: blank-line separated paragraphs with exact spans."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import ParagraphBlock
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import get_parser_by_version, parse_document
from tests.golden import assert_golden

NOTES = Path(__file__).resolve().parents[2] / "fixtures" / "corpus" / "notes"


def parse(source: str | bytes, **limits: int) -> CanonicalDocument:
    raw = source.encode("utf-8") if isinstance(source, str) else source
    doc = get_parser_by_version("text-plain-v1").parse(raw, "notes/a.txt", ParseLimits(**limits))
    text = raw.decode("utf-8-sig", errors="replace")
    previous_end = 0
    for block in doc.blocks:
        assert isinstance(block, ParagraphBlock)
        (span,) = block.spans
        assert span.char_start >= previous_end
        previous_end = span.char_end
        assert text[span.char_start : span.char_end] == block.text
        before = text[: span.char_start].replace("\r\n", "\n").replace("\r", "\n")
        assert span.line_start == before.count("\n") + 1
        inside = block.text.replace("\r\n", "\n").replace("\r", "\n")
        assert span.line_end == span.line_start + inside.count("\n")
        assert block.heading_path == ()
    return doc


def texts(doc: CanonicalDocument) -> list[str]:
    return [block.text for block in doc.blocks]


def test_paragraphs_are_separated_by_blank_lines() -> None:
    doc = parse("one\ntwo\n\nthree\n\n\n\nfour\n")
    assert texts(doc) == ["one\ntwo", "three", "four"]
    assert [b.spans[0].line_start for b in doc.blocks] == [1, 4, 8]
    assert doc.blocks[0].spans[0].line_end == 2


def test_whitespace_only_lines_separate_paragraphs() -> None:
    assert texts(parse("a\n   \t \nb\n\u3000\nc")) == ["a", "b", "c"]


def test_indentation_kept_trailing_whitespace_dropped() -> None:
    doc = parse("  indented start  \n  second\t\n")
    assert texts(doc) == ["  indented start  \n  second"]


def test_crlf_lone_cr_and_bom_keep_exact_offsets() -> None:
    doc = parse(b"\xef\xbb\xbfone\r\ntwo\r\n\r\nthree\rfour\r\rfive")
    assert texts(doc) == ["one\r\ntwo", "three\rfour", "five"]
    assert [b.spans[0].line_start for b in doc.blocks] == [1, 4, 7]


def test_document_fields() -> None:
    raw = b"Hello.\n"
    doc = get_parser_by_version("text-plain-v1").parse(raw, "notes/a.txt")
    assert doc.title is None
    assert doc.media_type == "text/plain"
    assert doc.parser_version == "text-plain-v1"
    assert doc.doc_id == doc_id("notes/a.txt")
    assert doc.content_hash == content_hash(raw)
    assert doc.metadata == {} and doc.warnings == ()


def test_markdown_syntax_is_just_text() -> None:
    assert texts(parse("# not a heading\n- not a list\n")) == ["# not a heading\n- not a list"]


def test_invalid_utf8_degrades_with_a_warning() -> None:
    doc = parse(b"caf\xe9 au lait\n")
    assert texts(doc) == ["caf\ufffd au lait"]
    assert doc.warnings and "invalid UTF-8" in doc.warnings[0]


def test_empty_and_blank_files_have_no_blocks() -> None:
    assert parse("").blocks == ()
    assert parse(" \n\t\r\n").blocks == ()


def test_equal_paragraphs_get_distinct_ids() -> None:
    doc = parse("same\n\nsame\n")
    assert len({b.block_id for b in doc.blocks}) == 2


def test_max_blocks() -> None:
    assert len(parse("a\n\nb", max_blocks=2).blocks) == 2
    with pytest.raises(LimitExceededError, match="max_blocks"):
        parse("a\n\nb\n\nc", max_blocks=2)


@pytest.mark.parametrize("name", ["release-notes-2.4.txt", "legacy-latin1.txt", "empty.txt"])
def test_golden_snapshot(name: str) -> None:
    """The corpus's text notes, pinned like every parser version's output (a UTF-8 note, a
    Latin-1 one whose bad bytes become U+FFFD with a warning, an empty file)."""
    doc = get_parser_by_version("text-plain-v1").parse((NOTES / name).read_bytes(), f"notes/{name}")
    assert_golden("text-plain-v1", name, doc.model_dump(mode="json"))


def test_registry_routes_text_to_the_default_version() -> None:
    """text-plain-v2 replaced text-plain-v1 as the default (docs/internals/decisions.md)."""
    assert parse_document(b"x", "a.txt").parser_version == "text-plain-v2"


def test_huge_single_line() -> None:
    source = "word " * 1_000_000
    assert texts(parse(source)) == [source.rstrip()]


@given(st.text(alphabet=st.sampled_from(list("ab é東 \t\n\r\u3000\x0c")), max_size=200))
def test_every_non_blank_character_is_in_exactly_one_paragraph(text: str) -> None:
    doc = parse(text)
    covered = [False] * len(text)
    for block in doc.blocks:
        span = block.spans[0]
        for i in range(span.char_start, span.char_end):
            covered[i] = True
        lines = block.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        assert all(line.strip() for line in lines), "a paragraph holds a blank line"
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    assert parse(text) == doc
