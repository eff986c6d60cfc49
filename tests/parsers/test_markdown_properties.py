"""Properties of both Markdown parser versions over generated Markdown.

Two generators: *composed* documents built from known constructs (headings, paragraphs,
lists, fences, tables, quotes, images, thematic breaks) with LF or CRLF line ends, whose
expected block kinds are known; and *chaotic* text over Markdown's punctuation, which
only has to keep the invariants. Invariants: every block's text equals its span's slice
of the decoded source; spans are in document order and do not overlap; line numbers
match the slice; parsing is deterministic; every non-blank character belongs to a block
except thematic breaks (and front matter / link reference definitions, which the
generators do not produce).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import CodeBlock, HeadingBlock, ListBlock, TableBlock
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.parsers.test_markdown import MARKDOWN_PARSERS, assert_exact

_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})")
_BLANK = " \t\r\n\f\v"

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéü東京😀", min_size=1, max_size=8)
phrases = st.lists(words, min_size=1, max_size=6).map(" ".join)


@dataclass(frozen=True)
class Element:
    """One generated construct: its source lines and what the parser should make of it."""

    lines: tuple[str, ...]
    kind: str | None  # expected block kind, None for no block
    detail: object = None  # title / item count / language / header, per kind


@st.composite
def atx_heading(draw: st.DrawFn) -> Element:
    level = draw(st.integers(1, 6))
    title = draw(phrases)
    closing = draw(st.sampled_from(["", " #", " " + "#" * level]))
    return Element((f"{'#' * level} {title}{closing}",), "heading", (level, title))


@st.composite
def setext_heading(draw: st.DrawFn) -> Element:
    title = draw(phrases)
    underline = draw(st.sampled_from(["===", "---", "======"]))
    return Element((title, underline), "heading", (1 if "=" in underline else 2, title))


@st.composite
def paragraph(draw: st.DrawFn) -> Element:
    return Element(tuple(draw(st.lists(phrases, min_size=1, max_size=3))), "paragraph")


@st.composite
def bullet_list(draw: st.DrawFn) -> Element:
    marker = draw(st.sampled_from(["-", "*", "1."]))
    lines: list[str] = []
    items = draw(st.integers(1, 4))
    for _ in range(items):
        lines.append(f"{marker} {draw(phrases)}")
        for _ in range(draw(st.integers(0, 2))):
            lines.append(f"{' ' * (len(marker) + 1)}- {draw(phrases)}")
    return Element(tuple(lines), "list", (marker == "1.", items))


@st.composite
def code_fence(draw: st.DrawFn) -> Element:
    fence = draw(st.sampled_from(["```", "~~~", "````"]))
    language = draw(st.one_of(st.none(), st.sampled_from(["python", "sh", "json"])))
    body = draw(
        st.lists(
            st.one_of(phrases, st.sampled_from(["# not a heading", "- not a list", "", "    x"])),
            max_size=4,
        )
    )
    return Element((f"{fence}{language or ''}", *body, fence), "code", language)


@st.composite
def indented_code(draw: st.DrawFn) -> Element:
    body = draw(st.lists(phrases, min_size=1, max_size=3))
    return Element(tuple(f"    {line}" for line in body), "code", None)


@st.composite
def gfm_table(draw: st.DrawFn) -> Element:
    columns = draw(st.integers(1, 4))
    header = draw(st.lists(words, min_size=columns, max_size=columns))
    rows = draw(st.lists(st.lists(words, min_size=columns, max_size=columns), max_size=3))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * columns]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return Element(tuple(lines), "table", tuple(header))


@st.composite
def block_quote(draw: st.DrawFn) -> Element:
    body = draw(st.lists(phrases, min_size=1, max_size=3))
    return Element(tuple(f"> {line}" for line in body), "paragraph")


@st.composite
def image(draw: st.DrawFn) -> Element:
    alt, name = draw(words), draw(st.text(alphabet="abcxyz", min_size=1, max_size=6))
    return Element((f"![{alt}]({name}.png)",), "image_ref")


elements = st.one_of(
    atx_heading(),
    setext_heading(),
    paragraph(),
    bullet_list(),
    code_fence(),
    indented_code(),
    gfm_table(),
    block_quote(),
    image(),
    st.just(Element(("***",), None)),
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[list[Element], str, str]:
    """Elements, and their LF and CRLF renderings (blank separators, optional whitespace)."""
    parts: list[Element] = []
    for element in draw(st.lists(elements, max_size=12)):
        # these neighbours would merge: list + list, list + indented code (continues the
        # item), indented code + indented code
        indented = element.lines[0].startswith(" ")
        if parts and (
            (parts[-1].kind == "list" and (element.kind == "list" or indented))
            or (parts[-1].lines[0].startswith(" ") and indented)
        ):
            parts.append(Element(("between",), "paragraph"))
        parts.append(element)
    separators = draw(
        st.lists(
            st.sampled_from(["\n", "\n\n", "\n   \n", "\n\t\n\n", "\n      \n"]),
            min_size=len(parts),
            max_size=len(parts),
        )
    )
    pieces: list[str] = []
    for element, separator in zip(parts, separators, strict=True):
        pieces.append("\n".join(element.lines) + "\n" + separator)
    lf = "".join(pieces)
    if draw(st.booleans()):
        lf = lf.rstrip("\n")
    return parts, lf, lf.replace("\n", "\r\n")


def parse(version: str, text: str) -> CanonicalDocument:
    raw = text.encode("utf-8")
    doc = get_parser_by_version(version).parse(raw, "gen.md")
    assert_exact(doc, raw)  # exact slices, order, no overlap, line numbers, no blanks
    return doc


def assert_nothing_lost(doc: CanonicalDocument, text: str) -> None:
    """Every non-blank character is in a block, unless its line is a thematic break."""
    covered = bytearray(len(text))
    for block in doc.blocks:
        for span in block.spans:
            covered[span.char_start : span.char_end] = b"\x01" * (span.char_end - span.char_start)
    view = text.replace("\r\n", " \n").replace("\r", "\n")
    line_start = 0
    for line in view.split("\n"):
        line_end = line_start + len(line)
        lost = [i for i in range(line_start, line_end) if not covered[i] and text[i] not in _BLANK]
        if lost:
            assert _THEMATIC_BREAK.fullmatch(line.rstrip(" \t")), f"text lost: {line!r}"
        line_start = line_end + 1


@pytest.mark.parametrize("version", sorted(MARKDOWN_PARSERS))
@given(generated=documents())
def test_composed_documents_keep_structure_and_offsets(
    version: str, generated: tuple[list[Element], str, str]
) -> None:
    parts, lf, crlf = generated
    doc = parse(version, lf)
    expected = [p for p in parts if p.kind is not None]
    assert [b.kind for b in doc.blocks] == [p.kind for p in expected]
    for block, part in zip(doc.blocks, expected, strict=True):
        if isinstance(block, HeadingBlock):
            assert (block.level, block.title) == part.detail
        elif isinstance(block, ListBlock):
            assert (block.ordered, len(block.items)) == part.detail
        elif isinstance(block, CodeBlock):
            assert block.language == part.detail
        elif isinstance(block, TableBlock):
            assert block.header == part.detail
    assert_nothing_lost(doc, lf)

    crlf_doc = parse(version, crlf)
    assert_nothing_lost(crlf_doc, crlf)
    assert [b.kind for b in crlf_doc.blocks] == [b.kind for b in doc.blocks]
    assert [b.spans[0].line_start for b in crlf_doc.blocks] == [
        b.spans[0].line_start for b in doc.blocks
    ]
    assert [b.text.replace("\r\n", "\n") for b in crlf_doc.blocks] == [b.text for b in doc.blocks]
    assert parse(version, lf) == doc, "parsing is not deterministic"


chaos = st.text(
    alphabet=st.sampled_from(list("#->*+`~|[]!()<>=_\\\"' \t\n\r1.ab東é")), max_size=300
)


@pytest.mark.parametrize("version", sorted(MARKDOWN_PARSERS))
@given(body=chaos, prefix=st.sampled_from(["", "é", "東京😀"]))
def test_chaotic_markdown_keeps_the_invariants(version: str, body: str, prefix: str) -> None:
    # no front matter; the alphabet has no ':' so no link definitions. The prefix makes the
    # text non-ASCII, so md-pyromark-v1 must convert byte offsets.
    text = prefix + "x\n" + body
    doc = parse(version, text)
    assert_nothing_lost(doc, text)
    assert parse(version, text) == doc
