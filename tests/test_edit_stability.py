"""Edit stability: content-addressed ids keep unrelated chunks' ids across edits (issue 8).

A 50-section Markdown document is chunked with md-heading-v1 before and after one paragraph
in its middle is rewritten; at least 95% of chunk ids must survive, and the ids that change
must be exactly those of chunks holding the edited block. Appending a document or a section,
or changing nothing, must change no existing id. (The same figures for hybrid-v1 are in
``benchmarks/bench_stability.py``; the pipeline-level versions are in tests/incremental/.)
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.parsers.registry import parse_document

LABEL = "md-heading-v1"
POLICY = ChunkPolicy()
SECTIONS = 50
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])


def _paragraph(section: int, index: int) -> str:
    return (
        f"Paragraph {index} of section {section} explains one part of the system. "
        f"It stays short so that section {section} fits in one chunk of the default policy."
    )


def _sections(n: int = SECTIONS, edit: tuple[int, int, str] | None = None) -> list[str]:
    sections = []
    for s in range(n):
        paragraphs = [_paragraph(s, i) for i in range(2)]
        if edit is not None and edit[0] == s:
            paragraphs[edit[1]] = edit[2]
        sections.append("\n\n".join([f"## Section {s}", *paragraphs]))
    return sections


def _document(sections: list[str], uri: str = "guide.md") -> CanonicalDocument:
    text = "\n\n".join(["# Operations guide", *sections]) + "\n"
    return parse_document(text.encode(), uri)


def _chunks(doc: CanonicalDocument, label: str = LABEL) -> list[Chunk]:
    return get_chunker(label).chunk(doc, POLICY)


def _block_id_of(doc: CanonicalDocument, text: str) -> str:
    [block] = [b for b in doc.blocks if b.text == text]
    return block.block_id


def _check_one_paragraph_edit(section: int, index: int, new_text: str) -> None:
    before_doc = _document(_sections())
    after_doc = _document(_sections(edit=(section, index, new_text)))
    before, after = _chunks(before_doc), _chunks(after_doc)
    old_ids, new_ids = {c.chunk_id for c in before}, {c.chunk_id for c in after}
    assert len(before) >= SECTIONS
    assert len(old_ids & new_ids) / len(old_ids) >= 0.95
    edited = _block_id_of(before_doc, _paragraph(section, index))
    holding_edit = {c.chunk_id for c in before if edited in c.block_ids}
    assert old_ids - new_ids == holding_edit != set()


def test_editing_one_middle_paragraph_keeps_95_percent_of_ids() -> None:
    _check_one_paragraph_edit(SECTIONS // 2, 1, "This paragraph was rewritten by an editor.")


@given(
    section=st.integers(0, SECTIONS - 1),
    index=st.integers(0, 1),
    words=st.lists(WORDS, min_size=1, max_size=30),
)
def test_editing_any_one_paragraph_changes_only_the_chunks_that_hold_it(
    section: int, index: int, words: list[str]
) -> None:
    _check_one_paragraph_edit(section, index, " ".join(words).capitalize() + ".")


def test_appending_a_section_changes_no_existing_id() -> None:
    before = _chunks(_document(_sections()))
    after = _chunks(_document([*_sections(), "## Appendix\n\nA section added at the end."]))
    assert {c.chunk_id for c in before} < {c.chunk_id for c in after}


def test_adding_a_document_to_the_corpus_changes_no_existing_record() -> None:
    corpus = {f"doc{i}.md": _sections(3 + i) for i in range(3)}
    before = {uri: _chunks(_document(s, uri)) for uri, s in corpus.items()}
    corpus["new.md"] = _sections(4, edit=(0, 0, "A brand new document."))
    after = {uri: _chunks(_document(s, uri)) for uri, s in corpus.items()}
    assert all(after[uri] == before[uri] for uri in before)
    new_ids = {c.chunk_id for c in after["new.md"]}
    assert not new_ids & {c.chunk_id for chunks in before.values() for c in chunks}


def test_changing_nothing_changes_nothing() -> None:
    for label in (LABEL, "hybrid-v1"):
        assert _chunks(_document(_sections()), label) == _chunks(_document(_sections()), label)
