"""md-mistune-v1 and md-pyromark-v1 agree wherever their grammars agree.

Both parser versions promise the same CanonicalDocument contract, so on Markdown where
mistune follows CommonMark + GFM tables they must produce the *same* blocks (kinds,
texts, spans, fields, ids), title, metadata and warnings; only ``parser_version``
differs. Checked on every Markdown fixture and on generated documents made of the
constructs both read alike. The known differences are pinned one by one below, each
with what CommonMark / GFM says; docs/internals/decisions.md lists them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import CodeBlock
from kebab_chunk.parsers.registry import get_parser_by_version
from tests.parsers.test_markdown import assert_exact
from tests.parsers.test_markdown_properties import Element, documents

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def both(raw: bytes, uri: str = "doc.md") -> tuple[CanonicalDocument, CanonicalDocument]:
    """(md-mistune-v1, md-pyromark-v1) documents of ``raw``, each checked for exact spans."""
    mistune = get_parser_by_version("md-mistune-v1").parse(raw, uri)
    pyromark = get_parser_by_version("md-pyromark-v1").parse(raw, uri)
    assert_exact(mistune, raw)
    assert_exact(pyromark, raw)
    return mistune, pyromark


def comparable(doc: CanonicalDocument) -> dict[str, Any]:
    data = doc.model_dump(mode="json")
    assert data.pop("parser_version") in ("md-mistune-v1", "md-pyromark-v1")
    return data


def shape(doc: CanonicalDocument) -> list[tuple[str, str]]:
    return [(block.kind, block.text) for block in doc.blocks]


@pytest.mark.parametrize(
    "path",
    sorted(FIXTURES.rglob("*.md")),
    ids=lambda p: p.relative_to(FIXTURES).as_posix(),
)
def test_fixtures_parse_identically(path: Path) -> None:
    raw = path.read_bytes()
    uri = path.relative_to(FIXTURES).as_posix()
    try:
        mistune = get_parser_by_version("md-mistune-v1").parse(raw, uri)
    except ParseError as error:  # a bad-input fixture: both must refuse it the same way
        with pytest.raises(type(error)) as other:
            get_parser_by_version("md-pyromark-v1").parse(raw, uri)
        assert str(other.value) == str(error)
        return
    pyromark = get_parser_by_version("md-pyromark-v1").parse(raw, uri)
    assert comparable(pyromark) == comparable(mistune)


@given(documents())
def test_generated_documents_parse_identically(generated: tuple[list[Element], str, str]) -> None:
    _, lf, crlf = generated
    for text in (lf, crlf):
        mistune, pyromark = both(text.encode("utf-8"))
        assert comparable(pyromark) == comparable(mistune)


def test_constructs_read_alike() -> None:
    source = (
        "---\ntitle: T\n---\n# A #\n\nSetext\n---\n\n   para\nlazy\n\n> q\n> - x\n\n"
        "- a\n- b\n  - c\n\n1. one\n2. two\n\n```py x\ncode\n```\n\n    indented\n\n"
        "| h | i |\n|---|--:|\n| 1 | 2 |\n\n<div>\nhtml\n</div>\n\n![i](p.png 'c')\n\n"
        "![s](a.mp3)\n\n***\n\n[ref]: /url\n\n## \\# esc `x` **y** ##\n\nx\n#\n"
    )
    mistune, pyromark = both(source.encode("utf-8"))
    assert comparable(pyromark) == comparable(mistune)
    assert [b.kind for b in pyromark.blocks] == [
        "heading",
        "heading",
        "paragraph",
        "paragraph",
        "list",
        "list",
        "code",
        "code",
        "table",
        "paragraph",
        "image_ref",
        "audio_ref",
        "heading",
        "paragraph",
        "heading",
    ]


# --- known differences: md-pyromark-v1 follows CommonMark 0.31 / GFM, mistune 3 does not ---


def test_difference_table_rows_with_another_cell_count() -> None:
    # GFM: missing cells are empty, excess cells are dropped; mistune rejects the table
    mistune, pyromark = both(b"| a | b |\n|---|---|\n| c |\n| d | e | f |\n")
    assert [b.kind for b in mistune.blocks] == ["paragraph"]
    assert [b.kind for b in pyromark.blocks] == ["table"]
    assert mistune.blocks[0].text == pyromark.blocks[0].text


def test_difference_table_continued_by_a_line_without_pipes() -> None:
    # GFM: a table ends at a blank line or another block start, so "lazy" is a row
    mistune, pyromark = both(b"| a |\n|---|\n| b |\nlazy\n")
    assert shape(mistune) == [("table", "| a |\n|---|\n| b |"), ("paragraph", "lazy")]
    assert shape(pyromark) == [("table", "| a |\n|---|\n| b |\nlazy")]


@pytest.mark.parametrize(
    ("source", "quote"),
    [("> # h\nnot lazy\n", "> # h"), ("> -\nnot lazy\n", "> -")],
)
def test_difference_no_lazy_line_after_a_quote_ending_in_a_non_paragraph(
    source: str, quote: str
) -> None:
    # CommonMark: only paragraph continuation text may be lazy
    mistune, pyromark = both(source.encode())
    assert shape(mistune) == [("paragraph", source.rstrip("\n"))]
    assert shape(pyromark) == [("paragraph", quote), ("paragraph", "not lazy")]


def test_difference_empty_list_item_then_an_unindented_line() -> None:
    # CommonMark: the item is empty, the next line is not indented enough to belong to it
    mistune, pyromark = both(b"-\nfoo\n")
    assert shape(mistune) == [("list", "-\nfoo")]
    assert shape(pyromark) == [("list", "-"), ("paragraph", "foo")]


def test_difference_dash_equals_is_no_setext_underline() -> None:
    # CommonMark: a setext underline is only "=" or only "-" characters
    mistune, pyromark = both(b"text\n-=\n")
    assert [b.kind for b in mistune.blocks] == ["heading"]
    assert shape(pyromark) == [("paragraph", "text\n-=")]


def test_difference_entities_in_the_fence_info_are_decoded() -> None:
    # CommonMark: entity and numeric character references are decoded in the info string
    mistune, pyromark = both(b"``` &ouml;x\ncode\n```\n")
    assert [b.language for b in mistune.blocks if isinstance(b, CodeBlock)] == ["&ouml;x"]
    assert [b.language for b in pyromark.blocks if isinstance(b, CodeBlock)] == ["\u00f6x"]
