"""md-heading-v2: each md-heading-v1 defect measured on real documents, and v2's goldens.

Real documents: every text Markdown fixture (``fixtures/**/*.md``) plus the Markdown READMEs
of the installed distributions (``benchmarks.corpora.distribution_readmes``). For each
defect the same measurement is taken of md-heading-v1 (which must show it: the test
documents that v1 really has the defect) and of md-heading-v2 (which must not):

- heading-only chunks (a chunk whose blocks are all headings);
- chunks whose start or end falls inside a word of the source (overlap included);
- chunks whose exact count under the policy's tokenizer exceeds the budget;
- ids surviving the insertion of one new paragraph in the middle of each document
  (target: median >= 98%, and >= 90% of documents keep >= 95% of their ids).

The goldens (``tests/goldens/md-heading-v2/``, rewritten only with
``KEBAB_UPDATE_GOLDENS=1``) pin v2's output on every Markdown fixture under two policies.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers._md_heading import MdHeadingChunker
from kebab_chunk.chunkers._separators import is_exact, join_gap, newline_style
from kebab_chunk.chunkers.registry import get_chunker, label, registered_labels
from kebab_chunk.errors import UnsupportedDocumentError
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import get_parser_by_version, parse_document
from kebab_chunk.tokenizers import Tokenizer, get_tokenizer
from tests.golden import assert_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
V1, V2 = "md-heading-v1", "md-heading-v2"
#: The policies of issue 20's measurement and a small one that forces many cuts.
STABILITY_POLICIES = [make_policy(target_tokens=256, overlap_tokens=25), ChunkPolicy()]
SMALL = make_policy(target_tokens=64, overlap_tokens=16)
INSERTED = (
    "This new paragraph was inserted by an editor to check which chunk ids survive an edit "
    "of one section."
)


@dataclass(frozen=True)
class Real:
    """One real document: its name, decoded source and parsed form."""

    name: str
    source: str
    doc: CanonicalDocument


def _parse(name: str, raw: bytes) -> Real:
    source, _ = decode_text(raw, name)
    return Real(name, source, get_parser_by_version("md-mistune-v1").parse(raw, name))


@cache
def real_documents() -> tuple[Real, ...]:
    """Fixture Markdown and installed READMEs that parse into at least one heading."""
    docs = [*fixture_markdown(FIXTURES).documents, *distribution_readmes().documents]
    parsed = [_parse(d.name, d.raw) for d in docs]
    return tuple(r for r in parsed if any(b.kind == "heading" for b in r.doc.blocks))


def _chunks(label: str, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
    return get_chunker(label).chunk(doc, policy)


def _kinds(doc: CanonicalDocument, chunk: Chunk) -> list[str]:
    kinds = {b.block_id: b.kind for b in doc.blocks}
    return [kinds[b] for b in chunk.block_ids]


def avoidable_heading_only(label: str, policy: ChunkPolicy) -> tuple[int, int]:
    """``(heading-only chunks that could have joined what follows, all chunks)``.

    A heading-only chunk is unavoidable (for any exact-slice chunker) only when nothing
    joinable follows it: the document ends, the next block is an image/audio reference or
    a block whose text is not its source slice, the source between the two is not just
    line breaks (a thematic break, trailing spaces), or the headings and the first word below
    them exceed the budget together (gluing them would cut inside that word).
    """
    tokenizer = get_tokenizer(policy.tokenizer)
    budget = budget_of(policy, tokenizer)
    total = avoidable = 0
    for real in real_documents():
        blocks = real.doc.blocks
        order = {b.block_id: i for i, b in enumerate(blocks)}
        for chunk in _chunks(label, real.doc, policy):
            total += 1
            if _kinds(real.doc, chunk) != ["heading"] * len(chunk.block_ids):
                continue
            last = order[chunk.block_ids[-1]]
            here = blocks[last]
            if last + 1 == len(blocks) or tokenizer.count_tokens(here.text) >= budget:
                continue
            nxt = blocks[last + 1]
            if nxt.kind in ("image_ref", "audio_ref") or not is_exact(nxt.text, nxt.spans):
                continue
            if join_gap(here.spans[0], nxt.spans[0], newline_style(blocks)) is None:
                continue
            word = _RUN.search(real.source, nxt.spans[0].char_start)
            assert word is not None
            start = chunk.source_spans[0].char_start
            if tokenizer.count_tokens(real.source[start : word.end()]) > budget:
                continue  # the headings and the first word below do not fit together
            avoidable += 1
    return avoidable, total


def _word(char: str) -> bool:
    return char.isalnum()


_RUN = re.compile(r"\S+")


def _inside_word(source: str, at: int, tokenizer: Tokenizer, budget: int) -> bool:
    """Whether ``at`` cuts a word that would fit the budget (a longer one must be cut)."""
    if not (0 < at < len(source) and _word(source[at - 1]) and _word(source[at])):
        return False
    lo = at
    while lo > 0 and not source[lo - 1].isspace():
        lo -= 1
    run = _RUN.match(source, lo)
    assert run is not None
    return tokenizer.count_tokens(run.group()) <= budget


def mid_word_cuts(label: str, policy: ChunkPolicy) -> int:
    """Chunk starts and ends (overlap starts included) inside a word that fits the budget."""
    tokenizer = get_tokenizer(policy.tokenizer)
    budget = budget_of(policy, tokenizer)
    found = 0
    for real in real_documents():
        for chunk in _chunks(label, real.doc, policy):
            kinds = _kinds(real.doc, chunk)
            if "image_ref" in kinds or "audio_ref" in kinds:
                continue
            start, end = chunk.source_spans[0].char_start, chunk.source_spans[-1].char_end
            found += _inside_word(real.source, start, tokenizer, budget)
            found += _inside_word(real.source, end, tokenizer, budget)
    return found


def over_budget(label: str, policy: ChunkPolicy) -> int:
    """Text chunks whose exact count under the policy's tokenizer exceeds the budget (an
    image's alt text is its chunk whole, whatever its length)."""
    tokenizer = get_tokenizer(policy.tokenizer)
    budget = budget_of(policy, tokenizer)
    return sum(
        tokenizer.count_tokens(chunk.text) > budget
        for real in real_documents()
        for chunk in _chunks(label, real.doc, policy)
        if _kinds(real.doc, chunk) not in (["image_ref"], ["audio_ref"])
    )


def _with_inserted_paragraph(real: Real) -> CanonicalDocument | None:
    """The document with one new paragraph after its middle paragraph (None: it has none)."""
    paragraphs = [b for b in real.doc.blocks if b.kind == "paragraph"]
    if not paragraphs:
        return None
    middle = paragraphs[len(paragraphs) // 2]
    end = middle.spans[0].char_end
    edited = real.source[:end] + "\n\n" + INSERTED + real.source[end:]
    return get_parser_by_version("md-mistune-v1").parse(edited.encode("utf-8"), real.name)


def _sections(doc: CanonicalDocument) -> dict[str, int]:
    """Block id -> section number (a section: a run of headings and the blocks below it)."""
    number, prev = 0, "heading"
    out: dict[str, int] = {}
    for block in doc.blocks:
        if block.kind == "heading" and prev != "heading":
            number += 1
        out[block.block_id] = number
        prev = block.kind
    return out


@dataclass(frozen=True)
class Edit:
    """One document's chunk ids before and after the insertion, and where it happened."""

    share: float  # of the ids before, those still present after
    outside: int  # ids lost although none of their blocks is in the edited section


def edits(label: str, policy: ChunkPolicy) -> list[Edit]:
    """The insertion of :func:`_with_inserted_paragraph` applied to every real document."""
    out = []
    for real in real_documents():
        edited = _with_inserted_paragraph(real)
        if edited is None:
            continue
        paragraphs = [b for b in real.doc.blocks if b.kind == "paragraph"]
        sections = _sections(real.doc)
        edited_section = sections[paragraphs[len(paragraphs) // 2].block_id]
        before = _chunks(label, real.doc, policy)
        after = {c.chunk_id for c in _chunks(label, edited, policy)}
        lost = [c for c in before if c.chunk_id not in after]
        outside = sum(all(sections[b] != edited_section for b in c.block_ids) for c in lost)
        out.append(Edit(1 - len(lost) / len(before), outside))
    return out


def survival(label: str, policy: ChunkPolicy) -> list[float]:
    """Per document: the share of its chunk ids still present after the insertion."""
    return [edit.share for edit in edits(label, policy)]


def meets_stability_target(shares: Sequence[float]) -> bool:
    """Issue 20's target: median >= 98% and >= 90% of documents keep >= 95% of their ids."""
    kept = sum(s >= 0.95 for s in shares) / len(shares)
    return statistics.median(shares) >= 0.98 and kept >= 0.90


# ----------------------------------------------------------------------------- tests


def test_v2_is_registered_beside_v1() -> None:
    assert {V1, V2} <= set(registered_labels())
    assert get_chunker(V2).uses_tokenizers is None, "v2 counts with any tokenizer"


def test_real_documents_are_many() -> None:
    assert len(real_documents()) >= 10


@pytest.mark.parametrize("policy", [SMALL, ChunkPolicy()], ids=["t64-o16", "default"])
def test_no_heading_only_chunks(policy: ChunkPolicy) -> None:
    v1, total = avoidable_heading_only(V1, policy)
    assert v1 / total > 0.03  # measured: 5% at 64 tokens, 11% at the default policy
    assert avoidable_heading_only(V2, policy)[0] == 0


def test_lone_headings_travel_with_the_subsection() -> None:
    text = "# Guide\n\n## Parameters\n\n### size\n\nThe size in bytes.\n\n## Next\n\nMore.\n"
    doc = get_parser_by_version("md-mistune-v1").parse(text.encode(), "guide.md")
    chunks = MdHeadingChunker(label("md-heading-v2")).chunk(doc, ChunkPolicy())
    assert [c.text for c in chunks] == [
        "# Guide\n\n## Parameters\n\n### size\n\nThe size in bytes.",
        "## Next\n\nMore.",
    ]
    assert chunks[0].heading_path == ("Guide", "Parameters", "size")
    only = get_parser_by_version("md-mistune-v1").parse(b"# A\n\n## B\n\n## C\n", "h.md")
    chunks = MdHeadingChunker(label("md-heading-v2")).chunk(only, ChunkPolicy())
    assert [c.text for c in chunks] == [
        "# A\n\n## B\n\n## C"
    ]


def test_no_cut_or_overlap_inside_a_word() -> None:
    assert mid_word_cuts(V1, SMALL) > 0
    assert mid_word_cuts(V2, SMALL) == 0


@pytest.mark.parametrize(
    "policy", [SMALL, make_policy(target_tokens=64, overlap_tokens=16, tokenizer="chars")]
)
def test_nothing_over_budget_and_counts_exact(policy: ChunkPolicy) -> None:
    if policy.tokenizer == "bytes-3":  # v1 sizes by the byte proxy only
        assert over_budget(V1, policy) > 0
    assert over_budget(V2, policy) == 0
    tokenizer = get_tokenizer(policy.tokenizer)
    for real in real_documents():
        for chunk in _chunks(V2, real.doc, policy):
            assert chunk.token_estimate == tokenizer.count_tokens(chunk.text)


def test_overlap_repeats_a_tail_within_budget() -> None:
    paragraph = " ".join(f"Sentence number {n} says something short." for n in range(40))
    doc = get_parser_by_version("md-mistune-v1").parse(
        f"# Long\n\n{paragraph}\n".encode(), "long.md"
    )
    policy = make_policy(target_tokens=40, overlap_tokens=10)
    chunks = MdHeadingChunker(label("md-heading-v2")).chunk(doc, policy)
    assert len(chunks) > 3
    overlapping = 0
    for prev, nxt in itertools.pairwise(chunks):
        assert nxt.token_estimate <= 40
        overlapping += nxt.source_spans[0].char_start < prev.source_spans[-1].char_end
    assert overlapping >= len(chunks) // 2


@pytest.mark.parametrize("overlap", [25, 0])
def test_ids_survive_one_inserted_paragraph(overlap: int) -> None:
    """Issue 20's target, met by v2 when blocks are not packed together (``merge_peers``
    False): the inserted paragraph is a chunk of its own and every other id survives."""
    policy = make_policy(target_tokens=256, overlap_tokens=overlap, merge_peers=False)
    v1, v2 = survival(V1, policy), survival(V2, policy)
    assert len(v2) >= 10
    assert not meets_stability_target(v1)
    assert meets_stability_target(v2), (statistics.median(v2), sorted(v2)[:5])


@pytest.mark.parametrize("policy", STABILITY_POLICIES, ids=["t256-o25", "default"])
def test_packed_ids_change_only_in_the_edited_section(policy: ChunkPolicy) -> None:
    """When blocks are packed, the chunk holding the new paragraph must change, so a
    ten-chunk document keeps at most 90%; what v2 guarantees is that nothing outside the
    edited section changes, which v1 (document offsets in slice ids) does not."""
    assert sum(edit.outside for edit in edits(V1, policy)) > 0
    assert sum(edit.outside for edit in edits(V2, policy)) == 0
    assert statistics.median(survival(V2, policy)) >= statistics.median(survival(V1, policy))


def test_ids_do_not_depend_on_document_offsets() -> None:
    """A long paragraph cut into slices keeps its slice ids when text before it grows."""
    paragraph = " ".join(f"Word{n} is here." for n in range(200))
    policy = make_policy(target_tokens=40, overlap_tokens=0)
    chunker = MdHeadingChunker(label("md-heading-v2"))
    ids = []
    for intro in ("Short intro.", "A much longer introduction paragraph than before."):
        text = f"# Intro\n\n{intro}\n\n# Body\n\n{paragraph}\n"
        chunks = chunker.chunk(
            get_parser_by_version("md-mistune-v1").parse(text.encode(), "d.md"), policy
        )
        ids.append({c.chunk_id for c in chunks if c.heading_path == ("Body",)})
    assert len(ids[0]) > 3 and ids[0] == ids[1]


# ----------------------------------------------------------------------------- goldens

GOLDEN_POLICIES = {
    "t512-o64": ChunkPolicy(target_tokens=512, overlap_tokens=64),
    "t120-o24": ChunkPolicy(target_tokens=120, overlap_tokens=24),
}


def _markdown_fixtures() -> list[Path]:
    """Every Markdown fixture that is text, as in md-heading-v1's golden test."""
    paths = sorted((FIXTURES / "markdown").glob("**/*.md"))
    paths += sorted((FIXTURES / "corpus").glob("**/*.md"))
    return [p for p in paths if p.name != "README.md" and b"\x00" not in p.read_bytes()]


@pytest.mark.parametrize("policy_name", sorted(GOLDEN_POLICIES))
@pytest.mark.parametrize(
    "path", _markdown_fixtures(), ids=lambda p: p.relative_to(FIXTURES).as_posix()
)
def test_golden_snapshot(path: Path, policy_name: str, core_mode: str) -> None:
    policy = GOLDEN_POLICIES[policy_name]
    raw = path.read_bytes()
    uri = path.relative_to(FIXTURES).as_posix()
    source, _ = decode_text(raw, uri)
    doc = get_parser_by_version("md-mistune-v1").parse(raw, uri)
    chunks = MdHeadingChunker(label("md-heading-v2")).chunk(doc, policy)
    blocks = {b.block_id: b for b in doc.blocks}
    for chunk in chunks:
        kinds = [blocks[b].kind for b in chunk.block_ids]
        if kinds in (["image_ref"], ["audio_ref"]):
            continue
        first, last = chunk.source_spans[0], chunk.source_spans[-1]
        assert source[first.char_start : last.char_end] == chunk.text
        assert kinds != ["heading"] * len(kinds) or chunk is chunks[-1]
    relative = path.relative_to(FIXTURES).with_suffix("").as_posix()
    assert_golden(
        V2,
        f"{relative.replace('/', '__')}.{policy_name}",
        [chunk.model_dump(mode="json") for chunk in chunks],
    )


#: A heading line over half the ``t120-o24`` budget above a short section: pins how a label
#: records a long heading path line (md-heading-v2 whole, md-heading-v3 cut to the bound).
LONG_HEADING = (
    "# "
    + " ".join(f"word{i}" for i in range(36))
    + "\n\n"
    + "\n\n".join(f"Paragraph {i} of the section below a long heading." for i in range(8))
    + "\n"
).encode()


def long_heading_doc() -> CanonicalDocument:
    return get_parser_by_version("md-mistune-v1").parse(LONG_HEADING, "long-heading.md")


def test_golden_long_heading(core_mode: str) -> None:
    chunker = MdHeadingChunker(label("md-heading-v2"))
    chunks = chunker.chunk(long_heading_doc(), GOLDEN_POLICIES["t120-o24"])
    assert len(chunks) > 1 and len(chunks[0].heading_path[0]) > 180
    assert_golden(V2, "long-heading.t120-o24", [c.model_dump(mode="json") for c in chunks])


def test_a_pdf_document_is_refused_with_the_default_pdf_chunker_named() -> None:
    """The error points at the labels a user should pick today (pdf-page-v3, hybrid-v4),
    not at superseded versions."""
    pdf = Path(__file__).resolve().parents[2] / "fixtures" / "pdf" / "three-page-en.pdf"
    doc = parse_document(pdf.read_bytes(), pdf.name)
    with pytest.raises(UnsupportedDocumentError, match=r"use pdf-page-v3 for PDF.*hybrid-v4"):
        MdHeadingChunker(label("md-heading-v2")).chunk(doc, ChunkPolicy())
