"""Tests of the HTML parser ``html-v1`` on fixtures/html/ and generated markup."""

from __future__ import annotations

import contextlib
import html
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.errors import BinaryContentError, LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument, LineSpan
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import detect_media_type, get_parser_by_version, parse_document
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "html"
NAMES = sorted(p.name for p in FIXTURES.glob("*.html"))
DEFAULT_LIMITS = ParseLimits()


def parse(name: str) -> tuple[CanonicalDocument, str]:
    raw = (FIXTURES / name).read_bytes()
    return get_parser_by_version("html-v1").parse(raw, f"html/{name}"), decode_html(raw, name)[0]


def parse_text(markup: str, limits: ParseLimits = DEFAULT_LIMITS) -> CanonicalDocument:
    return get_parser_by_version("html-v1").parse(markup.encode(), "t.html", limits)


def squeeze(text: str) -> str:
    return "".join(text.split())


def visible(markup: str) -> str:
    """Tag-stripped, entity-decoded text of a markup slice, without whitespace."""
    return squeeze(html.unescape(re.sub(r"<[^>]*>", "", markup)))


def is_subsequence(needle: str, haystack: str) -> bool:
    remaining = iter(haystack)
    return all(char in remaining for char in needle)


def line_of(text: str, offset: int) -> int:
    return len(re.findall(r"\r\n|\r|\n", text[:offset])) + 1


def check_spans(doc: CanonicalDocument, text: str) -> None:
    """Every span lies in the text, its lines match its offsets, and it holds the block."""
    for block in doc.blocks:
        (span,) = block.spans
        assert isinstance(span, LineSpan)
        assert 0 <= span.char_start < span.char_end <= len(text)
        assert span.line_start == line_of(text, span.char_start)
        assert span.line_end == line_of(text, span.char_end - 1)
        source = visible(text[span.char_start : span.char_end])
        if block.kind == "image_ref":
            assert text[span.char_start : span.char_end].lower().startswith("<img")
            continue
        pieces: tuple[str, ...] = (block.text,)
        if block.kind == "list":
            pieces = block.items
        elif block.kind == "table":
            pieces = tuple(cell for row in (block.header, *block.rows) for cell in row)
        for piece in pieces:  # dropped parts (script, nav...) are missing from the text
            assert is_subsequence(squeeze(piece), source), (piece, source)


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str) -> None:
    doc, text = parse(name)
    check_spans(doc, text)
    assert doc.parser_version == "html-v1"
    assert_golden("html-v1", name, doc.model_dump(mode="json"))


def test_article_structure() -> None:
    doc, text = parse("article.html")
    assert doc.title == "Disk pressure runbook — Ops handbook"
    kinds = [b.kind for b in doc.blocks]
    assert kinds == [
        "heading",
        "paragraph",
        "paragraph",
        "heading",
        "list",
        "heading",
        "list",
        "code",
        "heading",
        "paragraph",
        "table",
        "image_ref",
        "paragraph",
        "paragraph",
    ]
    h1, intro, escalate, _, bullets, _, numbered, code, h3, caption, table = doc.blocks[:11]
    assert (h1.kind, h1.level, h1.title, h1.heading_path) == (  # type: ignore[union-attr]
        "heading",
        1,
        "Disk pressure on ingest nodes",
        ("Disk pressure on ingest nodes",),
    )
    assert text[h1.spans[0].char_start : h1.spans[0].char_end] == (
        "<h1>Disk pressure on ingest nodes</h1>"
    )
    assert intro.text.startswith("When an ingest node reports DiskPressure, the scheduler")
    assert "restores capacity & explains why." in intro.text
    assert escalate.text == "Escalate after 30\xa0minutes.\nPage the storage on-call."
    assert bullets.items == (  # type: ignore[union-attr]
        "Pods stuck in Pending",
        "Alerts from the node exporter",
        "disk usage above 90%",
        "inode usage above 95%",
        "Slow log shipping",
    )
    assert "\n  - disk usage above 90%\n" in bullets.text
    assert bullets.ordered is False and numbered.ordered is True  # type: ignore[union-attr]
    assert numbered.text == "1. Cordon the node.\n2. Clear old images."
    assert code.language == "bash"  # type: ignore[union-attr]
    assert code.text == "kubectl cordon ingest-3\ncrictl rmi --prune   # frees <image> layers"
    assert h3.heading_path == ("Disk pressure on ingest nodes", "Steps", "Thresholds")
    assert caption.text == "Eviction thresholds"
    assert table.header == ("Signal", "Soft", "Hard")  # type: ignore[union-attr]
    assert table.rows == (  # type: ignore[union-attr]
        ("nodefs.available", "15%", "10%"),
        ("imagefs.available", "20%", "15%"),
    )
    image = doc.blocks[11]
    assert (image.alt, image.src, image.caption) == (  # type: ignore[union-attr]
        "Disk usage climbing to 97% over six hours",
        "disk-usage.png",
        "Figure 1: disk usage before eviction.",
    )
    assert doc.blocks[12].text == "Loose text in a div is kept as a paragraph."
    assert doc.blocks[13].text == "Last reviewed 2024-05-01 (article footer, kept)."
    assert any("1 image(s) without alt text" in w for w in doc.warnings)


def test_boilerplate_is_dropped() -> None:
    doc, _ = parse("article.html")
    everything = "\n".join(b.text for b in doc.blocks)
    for dropped in (
        "NOT TEXT",  # style
        "not a paragraph",  # script
        "Home",  # nav
        "Runbooks",
        "Ops handbook",  # page-level header (logo alt) and footer
        "Legal",
        "Hidden paragraph",
        "Invisible div",
        "Screen-reader hidden",
        "Enable JavaScript",  # noscript
        "a comment",
    ):
        assert dropped not in everything, dropped


def test_malformed_markup_gets_browser_like_blocks() -> None:
    doc, text = parse("malformed.html")
    texts = [(b.kind, b.text) for b in doc.blocks]
    assert texts[:4] == [
        ("heading", "Broken markup"),
        ("paragraph", "First paragraph never closed"),
        ("paragraph", "Second bold and italic still italic text"),
        ("paragraph", "A div with a stray"),
    ]
    assert ("list", "- one\n- two\n- three") in texts
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.rows == (("a", "b"), ("c", "d"))  # type: ignore[union-attr]
    heading = next(b for b in doc.blocks if b.text == "Unclosed heading")
    assert heading.kind == "heading"
    after = doc.blocks[doc.blocks.index(heading) + 1]
    assert after.text.startswith("Under the unclosed heading.")
    assert after.heading_path == ("Broken markup", "Unclosed heading")
    assert "cdata is not html" not in "\n".join(t for _, t in texts)
    implied = doc.blocks[1].spans[0]
    assert text[implied.char_start : implied.char_end] == "<p>First paragraph never closed"


def test_declared_legacy_charset_is_used() -> None:
    doc, text = parse("cp1252-meta.html")
    assert doc.title == "Café menu"
    assert [b.text for b in doc.blocks] == ["Café crème", "Crème brûlée – €4.50"]
    assert doc.warnings == (
        "not valid UTF-8; decoded as windows-1252 as declared by <meta charset>",
    )
    assert "\r\n" in text  # CRLF kept: offsets index the undecorated source
    check_spans(doc, text)


def test_invalid_utf8_without_declaration_degrades_with_warning() -> None:
    doc = get_parser_by_version("html-v1").parse(b"<p>caf\xe9 ok</p>", "x.html")
    assert doc.blocks[0].text == "caf\ufffd ok"
    assert any("invalid UTF-8" in w for w in doc.warnings)


def test_binary_bytes_are_rejected() -> None:
    with pytest.raises(BinaryContentError):
        get_parser_by_version("html-v1").parse(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.html")


def test_hundred_thousand_nested_divs() -> None:
    depth = 100_000
    closed = parse_text("<div>" * depth + "<p>deep text</p>" + "</div>" * depth)
    assert [b.text for b in closed.blocks] == ["deep text"]
    unclosed = parse_text("<div>" * depth + "deep <span>" * 1000 + "end")
    assert [b.text for b in unclosed.blocks] == ["deep " * 1000 + "end"]
    stray = parse_text("<table><tr><td>" + "<div>" * 5_000 + "<li>x" * 5_000)
    assert "x" in stray.blocks[0].text


def test_list_nesting_beyond_the_limit_is_an_error() -> None:
    markup = "<ul><li>a" * 5 + "</li></ul>" * 5
    assert parse_text(markup, ParseLimits(max_nesting=5)).blocks[0].kind == "list"
    with pytest.raises(LimitExceededError, match="max_nesting=4"):
        parse_text(markup, ParseLimits(max_nesting=4))


def test_max_blocks_is_enforced() -> None:
    markup = "<p>one</p><p>two</p><p>three</p>"
    assert len(parse_text(markup, ParseLimits(max_blocks=3)).blocks) == 3
    with pytest.raises(LimitExceededError, match="more than 2 blocks"):
        parse_text(markup, ParseLimits(max_blocks=2))


def test_heading_paths_follow_levels() -> None:
    doc = parse_text("<h2>A</h2><p>a</p><h3>B</h3><p>b</p><h2>C</h2><p>c</p><h1>D</h1>")
    assert [(b.text, b.heading_path) for b in doc.blocks] == [
        ("A", ("A",)),
        ("a", ("A",)),
        ("B", ("A", "B")),
        ("b", ("A", "B")),
        ("C", ("C",)),
        ("c", ("C",)),
        ("D", ("D",)),
    ]


def test_inline_images_follow_their_paragraph_and_empty_alt_is_skipped() -> None:
    doc = parse_text('<p>See <img src="a.png" alt="the chart"> here.</p><img src="x" alt="">')
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "See here."),
        ("image_ref", "the chart"),
    ]


def test_registry_routes_html() -> None:
    assert detect_media_type("site/index.htm") == "text/html"
    doc = parse_document(b"<h1>x</h1>", "site/index.html")
    assert doc.parser_version == "html-v3" and doc.media_type == "text/html"  # the default


_TAGS = ["p", "div", "ul", "ol", "li", "table", "tr", "td", "th", "h1", "h3", "pre", "b", "i"]
_TAGS += ["figure", "figcaption", "caption", "nav"]
_TOKENS = st.one_of(
    st.sampled_from([f"<{t}>" for t in _TAGS] + [f"</{t}>" for t in _TAGS]),
    st.sampled_from(["<br>", '<img alt="pic" src="p.png">', "<script>x<y</script>", "<!-- c -->"]),
    st.sampled_from(["alpha", "beta &amp; gamma", "  ", "\n", "\r\n", "d<e", "ünï"]),
)


@given(st.lists(_TOKENS, max_size=60))
def test_random_markup_parses_with_exact_spans(tokens: list[str]) -> None:
    markup = "".join(tokens)
    doc = parse_text(markup)
    check_spans(doc, markup)
    starts = [b.spans[0].char_start for b in doc.blocks]
    assert starts == sorted(starts)  # document order
    assert all(b.text.strip() for b in doc.blocks)


@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text: str) -> None:
    with contextlib.suppress(ParseError):  # BinaryContentError for NUL bytes
        parse_text(text)
