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
from benchmarks.bench_stability import EDIT_KINDS, NEW_PARAGRAPH, Edit, choose_edit, surviving
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, LineSpan
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


def _span_of(text: str, words: str, line: int) -> list[LineSpan]:
    start = text.index(words)
    return [LineSpan(line_start=line, line_end=line, char_start=start, char_end=start + len(words))]


def test_a_renamed_heading_touches_every_chunk_of_its_section() -> None:
    """The heading is in the heading path of every chunk below it, down to the next heading
    of its level or higher, so the ideal re-embeds all of them and nothing after."""
    text = "# A\n\nintro\n\n## B\n\nbody b\n\n### C\n\nbody c\n\n## D\n\nbody d\n"
    doc = parse_document(text.encode("utf-8"), "doc.md")
    rng = random.Random(0)
    edits = {}
    while len(edits) < 4:  # every heading gets picked by some draw
        e = choose_edit(text, doc, "rename_heading", rng)
        assert e is not None
        edits[text[e.start : e.end]] = e
    b = edits["B"]
    assert b.section_end == text.index("## D")
    inside, after = (_span_of(text, "body c", 11), _span_of(text, "body d", 15))
    assert b.touches(inside) and not b.touches(after)
    assert edits["A"].section_end == len(text)


def test_survival_needs_the_same_embedded_content_not_just_the_id() -> None:
    """hybrid-v2 keeps a heading out of its ids, so renaming it keeps the ids below while
    their heading path (and text to embed) changes: those chunks do not survive."""
    text = "# Guide\n\n## Setup\n\nInstall it with pip.\n\nThen run it.\n"
    renamed = text.replace("## Setup", "## Installation")
    policy = ChunkPolicy(target_tokens=256, merge_peers=False)
    chunker = get_chunker("hybrid-v2")
    old = chunker.chunk(parse_document(text.encode("utf-8"), "doc.md"), policy)
    new = chunker.chunk(parse_document(renamed.encode("utf-8"), "doc.md"), policy)
    shared = {c.chunk_id for c in old} & {c.chunk_id for c in new}
    assert len(shared) == len(old) == 2  # the ids alone would say nothing changed
    assert surviving(old, new) == 0
    assert surviving(old, old) == len(old)
