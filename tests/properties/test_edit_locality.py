"""Edit locality: one small edit changes only the chunk ids of the section it touches.

The point of content-addressed ids is that a nightly re-chunk re-embeds only what changed.
Hypothesis builds multi-section Markdown documents (an optional preamble, then sections of a
heading and 1-4 blocks: paragraphs, lists, code; texts unique, some longer than the budget
so they are cut into slices) and applies one single edit of each kind — insert a paragraph,
delete a paragraph, change a paragraph, rename a heading — by rebuilding the source with
one block added, removed or replaced, so no other block's bytes change.

Two promises are checked, on the chunks of the document *before* the edit:

* for every label in :data:`LOCAL_ID_CASES` (the labels with local ids; extend it when a
  new one ships), every chunk whose source range lies entirely outside the edited section
  keeps its id. A label that counts the heading path into each chunk's budget
  (``hybrid-v2``) re-packs the subsections of a renamed heading too, so for it a rename
  edits the heading's whole scope;
* for ``md-heading-v2`` with ``merge_peers=False`` (every block its own chunk), every chunk
  that does not overlap the edited block keeps its id (an insertion overlaps a chunk when
  it falls strictly inside the chunk's range). A section's heading is glued to the block
  below it, so when the edit renames the heading or inserts a block right below it, the
  heading and that block count as edited: the block's pieces are cut again around the
  heading's new size (``test_a_heading_edit_recuts_the_block_below_it``).
* for ``hybrid-v2`` with ``merge_peers=False`` (every element its own chunk, headings in
  the heading path, not the text), inserting, deleting or changing a paragraph leaves every
  chunk that does not overlap it as it was: id, text, heading path and captions.

A section's heading is glued to its first block (a chunk never holds a bare heading), so
deleting the block right below a heading moves the heading onto the next block (or, for a
section's only block, into the next section): that changes a chunk beside the edit on
purpose, so a deletion here takes any other paragraph
(``test_deleting_a_sections_first_block_moves_its_heading`` pins the behaviour).
``md-heading-v1`` breaks the first promise: its slice ids carry document-absolute offsets,
so growing an early section renames the slices of every later long block
(``test_md_heading_v1_renames_slices_after_an_insertion``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.parsers.registry import parse_document

#: A small budget (64 tokens of ~3 bytes), so sections pack several blocks and long
#: paragraphs are cut into slices.
POLICY = ChunkPolicy(target_tokens=64, overlap_tokens=8)
#: (label, policy, heading scope) whose ids must survive any edit outside the edited
#: section. With ``heading scope`` True the label counts the heading path into each chunk's
#: budget, so renaming a heading edits its whole scope (its subsections too).
LOCAL_ID_CASES: list[tuple[str, ChunkPolicy, bool]] = [
    ("md-heading-v2", POLICY, False),
    ("md-heading-v2", POLICY.model_copy(update={"merge_peers": False}), False),
    ("hybrid-v2", POLICY, True),
]
#: (label, policy) pairs that change only the chunks overlapping the edited block.
PER_BLOCK_CASES: list[tuple[str, ChunkPolicy]] = [
    ("md-heading-v2", POLICY.model_copy(update={"merge_peers": False})),
]
KINDS = ("insert_paragraph", "delete_paragraph", "change_paragraph", "rename_heading")
_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")


@dataclass(frozen=True)
class Block:
    """One top-level Markdown block: its kind, its source text and its section (0 is the
    preamble, which has no heading)."""

    kind: str  # heading | paragraph | list | code
    source: str
    section: int


@dataclass(frozen=True)
class Edited:
    """A document before and after one edit, with the edited section and block as
    character ranges of the source before the edit (an insertion is an empty range)."""

    kind: str
    before: str
    after: str
    section: tuple[int, int]
    block: tuple[int, int]
    #: ``block``, widened to the section's heading and first block when the edit is a
    #: heading rename or an insertion right below a heading: the heading is glued to the
    #: block below it, so that block's chunks are cut again (see the module docstring).
    glued: tuple[int, int]
    #: ``section``, widened for a heading rename to the heading's scope: up to the next
    #: heading of the same or a higher level (its subsections' heading paths change).
    scope: tuple[int, int]


def _text(blocks: list[Block]) -> str:
    return "\n\n".join(b.source for b in blocks) + "\n"


def _starts(blocks: list[Block]) -> list[int]:
    starts, at = [], 0
    for b in blocks:
        starts.append(at)
        at += len(b.source) + 2
    return starts


_sentence = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=50).map(" ".join)


@st.composite
def _block(draw: st.DrawFn, tag: str, section: int, marker: str) -> Block:
    """A paragraph, list (items start with ``marker``) or code block whose text starts with
    ``tag`` (unique per block, so no two blocks share a block id)."""
    kind = draw(st.sampled_from(["paragraph", "paragraph", "list", "code"]))
    words = draw(_sentence)
    if kind == "paragraph":
        return Block(kind, f"{tag.capitalize()} {words}.", section)
    if kind == "list":
        items = draw(st.lists(_sentence, min_size=1, max_size=3))
        lines = [f"{marker} {tag} {i} {item}" for i, item in enumerate(items)]
        return Block(kind, "\n".join(lines), section)
    lines = draw(st.lists(_sentence, min_size=1, max_size=3))
    return Block(kind, "```\n" + "\n".join([tag, *lines]) + "\n```", section)


@st.composite
def documents(draw: st.DrawFn) -> list[Block]:
    """An optional preamble and 1-5 sections of a heading and 1-3 blocks.

    List markers alternate between ``-`` and ``*``, so two lists never merge into one, not
    even when the paragraph between them is deleted.
    """
    blocks: list[Block] = []
    sections = [0] * draw(st.integers(0, 2))
    for s in range(1, draw(st.integers(1, 5)) + 1):
        sections += [-s] + [s] * draw(st.integers(1, 3))
    for n, s in enumerate(sections):
        if s < 0:
            level = draw(st.integers(1, 3))
            title = draw(st.sampled_from(_WORDS))
            blocks.append(Block("heading", f"{'#' * level} Section {-s} {title}", -s))
            continue
        lists = sum(b.kind == "list" for b in blocks)
        blocks.append(draw(_block(f"s{s}b{n}", s, "-*"[lists % 2])))
    return blocks


def _section_range(blocks: list[Block], section: int) -> tuple[int, int]:
    starts = _starts(blocks)
    inside = [i for i, b in enumerate(blocks) if b.section == section]
    end = starts[inside[-1] + 1] if inside[-1] + 1 < len(blocks) else len(_text(blocks))
    return starts[inside[0]], end


@st.composite
def edits(draw: st.DrawFn, kind: str) -> Edited:
    """A generated document and one random single edit of ``kind``."""
    blocks = draw(documents())
    starts = _starts(blocks)
    new = f"Inserted {draw(_sentence)}."
    if kind == "insert_paragraph":
        # Before any block that is not a heading, or at the end of any section.
        spots = [i for i, b in enumerate(blocks) if b.kind != "heading"]
        spots += [
            i + 1
            for i, b in enumerate(blocks)
            if i + 1 == len(blocks) or blocks[i + 1].kind == "heading"
        ]
        i = draw(st.sampled_from(sorted(set(spots))))
        section = (
            blocks[i - 1].section
            if i == len(blocks) or blocks[i].kind == "heading"
            else (blocks[i].section)
        )
        at = starts[i] if i < len(blocks) else len(_text(blocks))
        after = [*blocks[:i], Block("paragraph", new, section), *blocks[i:]]
        below_heading = 0 < i < len(blocks) and blocks[i - 1].kind == "heading"
        glued = (starts[i - 1], starts[i] + len(blocks[i].source)) if below_heading else (at, at)
        edited_section = _section_range(blocks, section)
        return Edited(
            kind, _text(blocks), _text(after), edited_section, (at, at), glued, edited_section
        )
    if kind == "rename_heading":
        candidates = [i for i, b in enumerate(blocks) if b.kind == "heading"]
    elif kind == "delete_paragraph":
        # Not the block right below a heading (see the module docstring).
        candidates = [
            i
            for i, b in enumerate(blocks)
            if b.kind == "paragraph" and (b.section == 0 or blocks[i - 1].kind != "heading")
        ]
    else:
        candidates = [i for i, b in enumerate(blocks) if b.kind == "paragraph"]
    if not candidates:  # nothing of that kind: edit the first content block instead
        candidates = [next(i for i, b in enumerate(blocks) if b.kind != "heading")]
        kind = "change_paragraph"
    i = draw(st.sampled_from(candidates))
    old = blocks[i]
    if kind == "delete_paragraph":
        after = blocks[:i] + blocks[i + 1 :]
    elif kind == "rename_heading":
        after = [
            *blocks[:i],
            Block("heading", f"{old.source} renamed", old.section),
            *blocks[i + 1 :],
        ]
    else:
        after = [*blocks[:i], Block("paragraph", new, old.section), *blocks[i + 1 :]]
    block = (starts[i], starts[i] + len(old.source))
    glued = (
        (starts[i], starts[i + 1] + len(blocks[i + 1].source)) if old.kind == "heading" else block
    )
    edited_section = _section_range(blocks, old.section)
    scope = _scope(blocks, i) if old.kind == "heading" else edited_section
    return Edited(kind, _text(blocks), _text(after), edited_section, block, glued, scope)


def _level(block: Block) -> int:
    return len(block.source) - len(block.source.lstrip("#"))


def _scope(blocks: list[Block], i: int) -> tuple[int, int]:
    """The characters under heading ``i``: up to the next heading of its level or higher."""
    starts = _starts(blocks)
    level = _level(blocks[i])
    ends = [
        starts[j]
        for j in range(i + 1, len(blocks))
        if blocks[j].kind == "heading" and _level(blocks[j]) <= level
    ]
    return starts[i], ends[0] if ends else len(_text(blocks))


def _chunks(text: str, label: str, policy: ChunkPolicy) -> list[Chunk]:
    return get_chunker(label).chunk(parse_document(text.encode("utf-8"), "doc.md"), policy)


def _range(chunk: Chunk) -> tuple[int, int]:
    """The source characters a chunk covers: first span start to last span end."""
    return (
        min(s.char_start for s in chunk.source_spans),
        max(s.char_end for s in chunk.source_spans),
    )


def _overlaps(chunk: Chunk, edited: tuple[int, int]) -> bool:
    lo, hi = _range(chunk)
    start, end = edited
    if start == end:
        return lo < start < hi
    return lo < end and start < hi


def _outside_section_changed(
    edit: Edited, label: str, policy: ChunkPolicy, heading_scope: bool = False
) -> list[Chunk]:
    """Chunks before the edit that lie entirely outside the edited section (or the renamed
    heading's scope, with ``heading_scope``) and lost their id."""
    after = {c.chunk_id for c in _chunks(edit.after, label, policy)}
    lo, hi = edit.scope if heading_scope else edit.section
    return [
        c
        for c in _chunks(edit.before, label, policy)
        if (_range(c)[1] <= lo or _range(c)[0] >= hi) and c.chunk_id not in after
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("label", "policy", "heading_scope"), LOCAL_ID_CASES)
@given(data=st.data())
def test_ids_outside_the_edited_section_survive(
    label: str, policy: ChunkPolicy, heading_scope: bool, kind: str, data: st.DataObject
) -> None:
    """Every chunk entirely outside the edited section keeps its id, for each edit kind."""
    edit = data.draw(edits(kind))
    changed = _outside_section_changed(edit, label, policy, heading_scope)
    assert not changed, [(c.position, c.text[:40]) for c in changed]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("label", "policy"), PER_BLOCK_CASES)
@given(data=st.data())
def test_only_chunks_overlapping_the_edited_block_change(
    label: str, policy: ChunkPolicy, kind: str, data: st.DataObject
) -> None:
    """With every block its own chunk, only the chunks overlapping the edit lose their id."""
    edit = data.draw(edits(kind))
    after = {c.chunk_id for c in _chunks(edit.after, label, policy)}
    changed = [
        c
        for c in _chunks(edit.before, label, policy)
        if not _overlaps(c, edit.glued) and c.chunk_id not in after
    ]
    assert not changed, [(c.position, c.text[:40]) for c in changed]


#: Element-granular and heading-free text: an edit of one block changes no other chunk.
ELEMENT_CASE = ("hybrid-v2", POLICY.model_copy(update={"merge_peers": False}))


def _embedded(chunk: Chunk) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    return chunk.chunk_id, chunk.text, chunk.heading_path, chunk.captions


@pytest.mark.parametrize("kind", KINDS[:3])
@given(data=st.data())
def test_element_chunks_keep_everything_outside_the_edited_block(
    kind: str, data: st.DataObject
) -> None:
    """hybrid-v2 without peer merging keeps headings out of chunk text, so inserting,
    deleting or changing one paragraph leaves every chunk that does not overlap it as it
    was: same id, same text, heading path and captions (nothing else to re-embed). An
    insertion anywhere changes no chunk at all (README "Stable ids under edits")."""
    edit = data.draw(edits(kind))
    label, policy = ELEMENT_CASE
    after = {_embedded(c) for c in _chunks(edit.after, label, policy)}
    changed = [
        c
        for c in _chunks(edit.before, label, policy)
        if not _overlaps(c, edit.block) and _embedded(c) not in after
    ]
    assert not changed, [(c.position, c.text[:40]) for c in changed]


def _long_paragraph(tag: str) -> str:
    return f"{tag.capitalize()} " + " ".join(_WORDS * 8) + "."


def test_md_heading_v1_renames_slices_after_an_insertion() -> None:
    """md-heading-v1 breaks locality: inserting a paragraph in the first section renames
    the slices of a long paragraph two sections later; md-heading-v2 keeps them."""
    blocks = [
        Block("heading", "# One", 1),
        Block("paragraph", "Short first paragraph.", 1),
        Block("heading", "# Two", 2),
        Block("paragraph", "Second section.", 2),
        Block("heading", "# Three", 3),
        Block("paragraph", _long_paragraph("third"), 3),
    ]
    after = [*blocks[:2], Block("paragraph", "Inserted words here.", 1), *blocks[2:]]
    edit = Edited(
        "insert_paragraph",
        _text(blocks),
        _text(after),
        _section_range(blocks, 1),
        (_starts(blocks)[2], _starts(blocks)[2]),
        (_starts(blocks)[2], _starts(blocks)[2]),
        _section_range(blocks, 1),
    )
    v1 = _outside_section_changed(edit, "md-heading-v1", POLICY)
    assert len(v1) >= 2  # several slices of the untouched long paragraph were renamed
    assert all(c.text.startswith(("# Three", "Third")) or "alpha" in c.text for c in v1)
    assert _outside_section_changed(edit, "md-heading-v2", POLICY) == []


def test_deleting_a_sections_first_block_moves_its_heading() -> None:
    """Why deletions in the property skip a section's first block: under merge_peers=False
    the heading is glued to the first block, so deleting it glues the heading to the next
    block, whose chunk changes although the deleted block was not in it."""
    blocks = [
        Block("heading", "# One", 1),
        Block("paragraph", "First block.", 1),
        Block("paragraph", "Second block.", 1),
    ]
    policy = POLICY.model_copy(update={"merge_peers": False})
    before = _chunks(_text(blocks), "md-heading-v2", policy)
    after = _chunks(_text([blocks[0], blocks[2]]), "md-heading-v2", policy)
    assert [c.text for c in before] == ["# One\n\nFirst block.", "Second block."]
    assert [c.text for c in after] == ["# One\n\nSecond block."]
    assert before[1].chunk_id != after[0].chunk_id


def test_a_heading_edit_recuts_the_block_below_it() -> None:
    """Why the per-block property counts a heading's first block as edited with it: under
    merge_peers=False a long block below a heading is cut with the heading in its first
    piece, so a longer heading moves every cut of that block (and no other block's)."""
    blocks = [
        Block("heading", "# One", 1),
        Block("paragraph", _long_paragraph("first"), 1),
        Block("paragraph", "Untouched block.", 1),
    ]
    renamed = [Block("heading", "# One renamed with many more words", 1), *blocks[1:]]
    policy = POLICY.model_copy(update={"merge_peers": False})
    before = _chunks(_text(blocks), "md-heading-v2", policy)
    after = {c.chunk_id for c in _chunks(_text(renamed), "md-heading-v2", policy)}
    lost = [c for c in before if c.chunk_id not in after]
    assert len(before) >= 4 and before[-1].text == "Untouched block."
    assert before[-1] not in lost and len(lost) >= 2
    assert all("alpha" in c.text for c in lost)  # pieces of the long first paragraph only
