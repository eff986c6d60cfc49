"""The stability benchmark's edits are single, local edits of real Markdown.

Its survival figures only mean something if each edit changes exactly one block (or adds
one) and leaves every other block's text alone, and if its "ideal" counts the chunks that
overlap the edited characters. Checked on every fixture Markdown file, for each edit kind.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from benchmarks import corpora
from benchmarks.bench_stability import EDIT_KINDS, NEW_PARAGRAPH, Edit, choose_edit
from kebab_chunk.model import CanonicalDocument, LineSpan
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import parse_document

DOCS = corpora.fixture_markdown().documents


def _blocks(doc: CanonicalDocument) -> Counter[tuple[str, str]]:
    return Counter((b.kind, b.text) for b in doc.blocks)


@pytest.mark.parametrize("kind", EDIT_KINDS)
def test_each_edit_touches_one_block_and_no_other(kind: str) -> None:
    """Before/after block texts differ by exactly the one block the edit names."""
    edited_any = False
    for document in DOCS:
        text, _ = decode_text(document.raw, document.name)
        doc = parse_document(text.encode("utf-8"), "doc.md")
        edit = choose_edit(text, doc, kind, random.Random(f"{document.name}:{kind}"))
        if edit is None:
            continue
        edited_any = True
        after = parse_document(edit.apply(text).encode("utf-8"), "doc.md")
        gone, new = _blocks(doc) - _blocks(after), _blocks(after) - _blocks(doc)
        if kind == "insert_paragraph":
            assert not gone and list(new) == [("paragraph", NEW_PARAGRAPH)], document.name
        elif kind == "delete_paragraph":
            assert not new and [k for k, _ in gone] == ["paragraph"], document.name
        else:
            expected = "heading" if kind == "rename_heading" else "paragraph"
            assert [k for k, _ in gone] == [k for k, _ in new] == [expected], document.name
    assert edited_any


def test_the_ideal_counts_chunks_overlapping_the_edit() -> None:
    """A replacement touches the ranges it overlaps; an insertion only a range it falls
    strictly inside (one at a chunk boundary needs no other chunk to change)."""
    spans = [LineSpan(line_start=1, line_end=1, char_start=10, char_end=20)]
    assert Edit("change_paragraph", 15, 16, "x").touches(spans)
    assert not Edit("change_paragraph", 20, 25, "x").touches(spans)
    assert Edit("insert_paragraph", 12, 12, "x").touches(spans)
    assert not Edit("insert_paragraph", 10, 10, "x").touches(spans)
    assert Edit("insert_paragraph", 4, 4, "ab").apply("0123456789") == "0123ab456789"
