"""text-plain-v2: text-plain-v1's paragraphs, with AsciiDoc and setext section titles as
headings.

A new user's run over AsciiDoc-style ``.txt`` manuals (git's Documentation) got no heading
path at all with text-plain-v1: "NAME", "SYNOPSIS", "OPTIONS" were the first line of a
paragraph, their underline the second. ``fixtures/text/asciidoc-manual.txt`` is a page of
that shape written for these tests, with the cases that must stay text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.model import CanonicalDocument, LineSpan
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
INPUTS = {
    "asciidoc-manual.txt": (FIXTURES / "text" / "asciidoc-manual.txt", "text/asciidoc-manual.txt"),
    **{
        name: (FIXTURES / "corpus" / "notes" / name, f"notes/{name}")
        for name in ("release-notes-2.4.txt", "legacy-latin1.txt", "empty.txt")
    },
}


def parse(source: str | bytes, version: str = "text-plain-v2") -> CanonicalDocument:
    raw = source.encode("utf-8") if isinstance(source, str) else source
    return get_parser_by_version(version).parse(raw, "t.txt")


def outline(doc: CanonicalDocument) -> list[tuple[str, int | None, str]]:
    return [(b.kind, getattr(b, "level", None), b.text) for b in doc.blocks]


def check_spans(raw: str, doc: CanonicalDocument) -> None:
    """Every block's text is its span's exact slice, blocks in source order, no overlap."""
    previous = 0
    for block in doc.blocks:
        (span,) = block.spans
        assert isinstance(span, LineSpan)
        assert raw[span.char_start : span.char_end] == block.text
        assert span.char_start >= previous
        previous = span.char_end


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_golden(name: str) -> None:
    path, uri = INPUTS[name]
    doc = get_parser_by_version("text-plain-v2").parse(path.read_bytes(), uri)
    assert doc.parser_version == "text-plain-v2"
    assert_golden("text-plain-v2", name, doc.model_dump(mode="json"))


def test_underlined_titles_are_headings_at_their_level() -> None:
    raw = (
        "Guide\n=====\n\nPart\n----\ntext one\n\n"
        "Sub\n~~~\ntext two\n\nDeep\n^^^^\n\nDeeper\n++++++\n"
    )
    doc = parse(raw)
    assert outline(doc) == [
        ("heading", 1, "Guide"),
        ("heading", 2, "Part"),
        ("paragraph", None, "text one"),
        ("heading", 3, "Sub"),
        ("paragraph", None, "text two"),
        ("heading", 4, "Deep"),
        ("heading", 5, "Deeper"),
    ]
    assert doc.blocks[-1].heading_path == ("Guide", "Part", "Sub", "Deep", "Deeper")
    check_spans(raw, doc)


def test_one_line_titles_start_a_paragraph() -> None:
    raw = "= Book\n\n== Chapter ==\nIts text.\n\nA line\n== not a title here\n"
    doc = parse(raw)
    assert outline(doc) == [
        ("heading", 1, "= Book"),
        ("heading", 2, "== Chapter =="),
        ("paragraph", None, "Its text."),
        ("paragraph", None, "A line\n== not a title here"),
    ]
    assert doc.blocks[2].heading_path == ("Book", "Chapter")
    check_spans(raw, doc)


@pytest.mark.parametrize(
    "raw",
    [
        "A sentence that runs long\n----\n",  # underline much shorter than the line
        "Short\n------------------\n",  # much longer
        "  Indented\n  --------\n",  # an indented line is text
        "- item\n------\n",  # a list item is not a title
        "1234\n====\n",  # no letter
        "----\n====\n",  # two rules
    ],
)
def test_what_is_not_a_title(raw: str) -> None:
    doc = parse(raw)
    assert [b.kind for b in doc.blocks] == ["paragraph"]
    assert outline(doc) == outline(parse(raw, "text-plain-v1"))


def test_no_title_inside_a_delimited_block_and_a_lone_rule_hides_nothing() -> None:
    raw = (
        "Example:\n\n------\nOutput\n------\n------\n\n"  # "Output" inside the listing
        "A long rule that closes nothing follows\n" + "-" * 60 + "\n\n"
        "Next\n----\nafter\n"
    )
    doc = parse(raw)
    kinds = outline(doc)
    assert ("heading", 2, "Output") not in kinds
    assert kinds[-2:] == [("heading", 2, "Next"), ("paragraph", None, "after")]
    check_spans(raw, doc)


def test_text_plain_v1_is_unchanged() -> None:
    raw = (FIXTURES / "text" / "asciidoc-manual.txt").read_text(encoding="utf-8")
    assert {b.kind for b in parse(raw, "text-plain-v1").blocks} == {"paragraph"}


_LINES = st.sampled_from(
    ["Title", "A sentence of prose.", "=====", "-----", "~~~~~", "== Head", "----", "  x", ""]
)


@given(st.lists(_LINES, max_size=30))
def test_every_line_of_text_is_in_exactly_one_block(lines: list[str]) -> None:
    """Headings only split paragraphs: the text of v1's paragraphs is v2's blocks' text plus
    the underlines, in order, each block an exact slice."""
    raw = "\n".join(lines)
    doc = parse(raw)
    check_spans(raw, doc)
    kept = "\n".join(b.text for b in doc.blocks).split("\n")
    old = "\n".join(b.text for b in parse(raw, "text-plain-v1").blocks).split("\n")
    # v2 drops only underline lines (and keeps the order of everything else)
    it = iter(old)
    assert all(any(line == other for other in it) for line in kept if line)
    dropped = [line for line in old if line not in kept]
    assert all(set(line) <= set("=-~^+") for line in dropped)
