"""Tests of the HTML parser ``html-v3``: html-v2 with what manual pages showed wrong.

A new user's run over git's own HTML manual pages (asciidoc output) found, with html-v2:
every page's footer kept ("Last updated ..." in 205 of 206 pages), "SEE ALSO" sections
left empty because their one paragraph is links, each option's term (``-a``) a block of its
own, apart from its definition, code inside list items run onto the item's one line, and
code blocks keeping the page's ``\\r\\n`` while the rest of the text has ``\\n``.
``fixtures/html/manual/label-manual.html`` is a page of that shape (CRLF line endings),
written for these tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.golden import assert_golden
from tests.parsers.test_html_v2 import _BALANCED, span_of, texts

HTML = Path(__file__).resolve().parents[2] / "fixtures" / "html"
MANUAL = HTML / "manual" / "label-manual.html"
INPUTS = {
    "label-manual.html": (MANUAL, "html/manual/label-manual.html"),
    **{p.name: (p, f"html/nav/{p.name}") for p in sorted((HTML / "nav").glob("*.html"))},
}


def parse(version: str, raw: bytes, uri: str = "t.html") -> CanonicalDocument:
    return get_parser_by_version(version).parse(raw, uri)


def manual(version: str) -> CanonicalDocument:
    return parse(version, MANUAL.read_bytes(), INPUTS["label-manual.html"][1])


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_golden(name: str) -> None:
    """The snapshots under tests/goldens/html-v3/ are html-v3's contract."""
    path, uri = INPUTS[name]
    doc = parse("html-v3", path.read_bytes(), uri)
    assert doc.parser_version == "html-v3"
    assert_golden("html-v3", name, doc.model_dump(mode="json"))


def test_a_page_footer_named_footer_is_left_out_but_a_sections_is_kept() -> None:
    old, new = manual("html-v2"), manual("html-v3")
    assert any(t.startswith("Last updated") for t in texts(old))
    assert not any("Last updated" in t for t in texts(new))
    section_footer = "Written by the kc authors; this footer belongs to its section."
    assert section_footer in texts(new)
    assert new.metadata["navigation_elements_dropped"] == 1
    # The same markup with <footer> instead: html-v2 already left that out.
    plain = parse("html-v2", b"<p>Body text.</p><footer>Last updated today</footer>")
    assert texts(plain) == ["Body text."]


def test_terms_start_their_definition_block() -> None:
    doc = manual("html-v3")
    text = decode_html(MANUAL.read_bytes(), "m.html")[0]
    (annotate,) = [b for b in doc.blocks if b.text.startswith("-a\n")]
    assert annotate.text == "-a\n--annotate\nMake an annotated label with a message."
    start, end = span_of(annotate)
    markup = text[start:end]
    # From the first term's text (an implicit paragraph's span starts there) to </p>.
    assert markup.startswith("-a\r\n</dt>") and markup.endswith("</p>") and "<dd>" in markup
    (retire,) = [b for b in doc.blocks if b.text.startswith("--retire")]
    assert retire.text.split("\n")[1].startswith("Retire a label: it stays registered")
    # A term whose definition starts with code stays a paragraph of its own, before it.
    kinds = [(b.kind, b.text.split("\n")[0]) for b in doc.blocks]
    at = kinds.index(("paragraph", "-n<num>"))
    assert kinds[at + 1] == ("code", "kc-label -n3 v1")
    # html-v2 has each term alone.
    assert {"-a", "--annotate", "--retire"} <= set(texts(manual("html-v2")))


def test_terms_without_a_definition_paragraph_are_one_block() -> None:
    doc = parse("html-v3", b"<dl><dt>alpha</dt><dt>beta</dt></dl><p>After the list.</p>")
    assert texts(doc) == ["alpha\nbeta", "After the list."]
    lone = parse("html-v3", b"<dl><dt>term</dt><dd>bare definition text</dd></dl>")
    assert texts(lone) == ["term\nbare definition text"]


def test_a_sections_lone_link_list_is_content_but_a_nav_bar_is_not() -> None:
    old, new = manual("html-v2"), manual("html-v3")
    assert "kc-config(1), kc-run(1)" in texts(new)
    assert "kc-config(1), kc-run(1)" not in texts(old)
    # The Home | Next bar shares its section with other blocks: still navigation.
    assert not any(t.startswith("Home") for t in texts(new))
    assert new.metadata["link_only_blocks_dropped"] == 1


def test_line_endings_are_one_convention() -> None:
    old, new = manual("html-v2"), manual("html-v3")
    assert any("\r\n" in t for t in texts(old))
    assert all("\r" not in t for t in texts(new))
    assert "kc-label -n3 v1\nkc-label -n3 --list" in texts(new)
    lone_cr = parse("html-v3", b"<pre>one\rtwo\r\nthree</pre>")
    assert texts(lone_cr) == ["one\ntwo\nthree"]


def test_every_other_block_is_html_v2s_with_its_span() -> None:
    """html-v3 only joins terms to their definitions, keeps lone link lists, leaves named
    footers out, keeps code lines in list items and rewrites line endings: every other
    block is html-v2's, same span."""
    for name, (path, uri) in INPUTS.items():
        raw = path.read_bytes()
        old = {(b.kind, span_of(b)): b.text for b in parse("html-v2", raw, uri).blocks}
        for block in parse("html-v3", raw, uri).blocks:
            key = (block.kind, span_of(block))
            if key in old and block.kind == "list":  # the same words; code keeps its lines
                assert block.text.split() == old[key].split(), name
            elif key in old:
                assert block.text == old[key].replace("\r\n", "\n").replace("\r", "\n"), name
            else:
                assert block.kind == "paragraph", (name, block.text)


def test_code_in_a_list_item_keeps_its_lines() -> None:
    old, new = manual("html-v2"), manual("html-v3")
    (before,) = [b for b in old.blocks if b.kind == "list"]
    (after,) = [b for b in new.blocks if b.kind == "list"]
    assert "md-heading-v1 kc-label --list md-heading-v2" in before.text
    assert after.text == (
        "- Retire it and check what is left:\n"
        "  kc-label --retire md-heading-v1\n"
        "  kc-label --list\n"
        "\n"
        "    md-heading-v2\n"
        "- Run again; nothing else changes."
    )
    assert after.items[0].split("\n")[1:] == [
        "kc-label --retire md-heading-v1",
        "kc-label --list",
        "",
        "  md-heading-v2",
    ]
    assert span_of(after) == span_of(before)
    markup = b"<ol><li>Run<pre>\na\n  b</pre>then<ul><li>x<br>y</li></ul></li></ol>"
    nested = parse("html-v3", markup)
    (block,) = nested.blocks
    assert block.text == "1. Run\n   a\n     b\n   then\n  - x y"


@given(_BALANCED)
def test_generated_markup_is_html_v2_plus_lone_link_lists(markup: str) -> None:
    """Valid nesting of links, marks, menus and blocks without definition lists, named
    footers or code (the strategy of test_html_v2): html-v3 is html-v2 plus the link-only
    blocks it keeps because each is the only block of its section, in order."""
    old = get_parser_by_version("html-v2").parse(markup.encode(), "t.html").blocks
    new = get_parser_by_version("html-v3").parse(markup.encode(), "t.html").blocks
    old_keys = [(b.kind, span_of(b), b.text) for b in old]
    kept = iter(old_keys)
    for index, block in enumerate(new):
        key = (block.kind, span_of(block), block.text)
        if key in old_keys:
            assert any(key == other for other in kept)  # in html-v2's order
            continue
        assert block.kind in ("paragraph", "list", "table")
        assert index > 0 and new[index - 1].kind == "heading"
        assert index + 1 == len(new) or new[index + 1].kind == "heading"


def test_a_table_of_contents_under_its_own_heading_is_still_navigation() -> None:
    """Only links out of the page make a lone link list content: in-page links are a table
    of contents, which html-v2 already leaves out."""
    toc = (
        b'<h2>Contents</h2><ul><li><a href="#a">Alpha</a></li><li><a href="#b">Beta</a></li>'
        b'</ul><h2 id="a">Alpha</h2><p>Text.</p>'
    )
    assert texts(parse("html-v3", toc)) == ["Contents", "Alpha", "Text."]
    see_also = toc.replace(b'href="#b"', b'href="beta.html"')
    assert texts(parse("html-v3", see_also)) == ["Contents", "- Alpha\n- Beta", "Alpha", "Text."]
