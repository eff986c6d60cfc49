"""md-heading-v3: md-heading-v2's chunks, with an ``embed_text`` that names each heading once.

md-heading-v2 glues a heading with an empty body to the first chunk of its subsection, so a
chunk can open with ``## Examples`` then ``### Measuring``; its ``embed_text`` then read
``Examples``, ``Measuring``, ``## Examples``, ``### Measuring`` (the default recipe left out
only the innermost heading, and only when the text's first line is it). md-heading-v3 is
the same engine with another heading rule (docs/versioning.md). The tests check, on every
fixture and on generated documents, that only ``embed_text`` (and so ``embed_tokens``)
and the label-dependent ``chunk_id`` / ``chunker_version`` differ, and that ``embed_text``
is exactly the heading path less the headings whose blocks open the chunk (found from the
blocks, not by reading the text), then the text; and pin the new label's goldens.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import Block, CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers.markdown import MarkdownParser
from kebab_chunk.parsers.registry import parse_document
from tests.golden import assert_golden
from tests.properties.documents import Part, parts, render
from tests.properties.test_every_chunker import policies

V2, V3 = "md-heading-v2", "md-heading-v3"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
#: Fields that may differ: the text to embed and its count, and what includes the label.
LABEL_FIELDS = {"embed_text", "embed_tokens", "chunk_id", "chunker_version"}
POLICIES = {
    "t512-o64": ChunkPolicy(target_tokens=512, overlap_tokens=64),
    "t120-o24": ChunkPolicy(target_tokens=120, overlap_tokens=24),
    "t24-o0": make_policy(target_tokens=24, overlap_tokens=0),
    "t64-chars-items": make_policy(
        target_tokens=64, overlap_tokens=8, tokenizer="chars", merge_peers=False
    ),
}

GUIDE = b"""# Guide

Intro text.

## Examples

### Measuring things

Body of measuring.

### Other

More.
"""


def _records(label: str, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
    chunker = get_chunker(label)
    return with_embedding(chunker.chunk(doc, policy), chunker, policy)


def expected_embed_text(chunk: Chunk, blocks: dict[str, Block], v2_embed_text: str) -> str:
    """The heading path less every heading whose whole block opens the chunk (the blocks
    before it whole headings too) and is still in the path (a heading block's own
    ``heading_path`` ends with its title), then the captions and the text. Also left out,
    as in md-heading-v2: the innermost heading when md-heading-v2 left it out (a text
    whose first line is it, such as rendered HTML)."""
    path = chunk.heading_path
    keep = len(path)
    for block_id, span in zip(chunk.block_ids, chunk.source_spans, strict=True):
        block = blocks[block_id]
        whole = (span.char_start, span.char_end) == (
            block.spans[0].char_start,
            block.spans[0].char_end,
        )
        if block.kind != "heading" or not whole:
            break  # a chunk that starts inside a heading line opens with no heading
        depth = len(block.heading_path)
        if path[:depth] == block.heading_path:
            keep = min(keep, depth - 1)
    if path and v2_embed_text == contextualize_parts(path[:-1], chunk.captions, chunk.text):
        keep = min(keep, len(path) - 1)
    return contextualize_parts(path[:keep], chunk.captions, chunk.text)


def check_v3_against_v2(doc: CanonicalDocument, policy: ChunkPolicy) -> tuple[int, int]:
    """Assert the v3 contract on ``doc``; returns (chunks, chunks whose embed_text differs)."""
    old, new = _records(V2, doc, policy), _records(V3, doc, policy)
    assert len(old) == len(new)
    blocks = {b.block_id: b for b in doc.blocks}
    changed = 0
    for a, b in zip(old, new, strict=True):
        assert a.model_dump(exclude=LABEL_FIELDS) == b.model_dump(exclude=LABEL_FIELDS)
        assert b.chunker_version == V3
        assert b.embed_text == expected_embed_text(b, blocks, a.embed_text or "")
        changed += a.embed_text != b.embed_text
    return len(new), changed


def test_a_chunk_opening_with_two_headings_names_each_heading_once() -> None:
    doc = parse_document(GUIDE, "guide.md")
    policy = make_policy(target_tokens=64, overlap_tokens=0)
    old = next(c for c in _records(V2, doc, policy) if c.text.startswith("## Examples"))
    new = next(c for c in _records(V3, doc, policy) if c.text.startswith("## Examples"))
    assert old.text == new.text == "## Examples\n\n### Measuring things\n\nBody of measuring."
    assert old.heading_path == new.heading_path == ("Guide", "Examples", "Measuring things")
    # md-heading-v2 (frozen) named both headings twice
    assert old.embed_text == "Guide\nExamples\nMeasuring things\n" + old.text
    assert new.embed_text == "Guide\n" + new.text
    assert new.embed_tokens is not None and old.embed_tokens is not None
    assert new.embed_tokens < old.embed_tokens


def test_a_continuation_and_a_closed_heading_keep_their_context() -> None:
    """Only headings still open after the text's opening headings are left out: a heading
    closed by a later one of its level (``## A`` then ``## B``) is not in the path, and a
    chunk that opens with no heading keeps its whole path."""
    raw = b"# Top\n\nIntro.\n\n## A\n\n## B\n\nWords " + b"and more words " * 30 + b"\n"
    doc = parse_document(raw, "g.md")
    policy = make_policy(target_tokens=40, overlap_tokens=0)
    first, *rest = [c for c in _records(V3, doc, policy) if c.heading_path == ("Top", "B")]
    assert first.text.startswith("## A\n\n## B\n\nWords")
    assert first.embed_text == "Top\n" + first.text
    assert rest and all(c.embed_text == "Top\nB\n" + c.text for c in rest)


def test_md_heading_v3_is_the_default_for_markdown_and_text() -> None:
    assert DEFAULT_LABELS_BY_MEDIA_TYPE["text/markdown"] == (V3,)
    assert DEFAULT_LABELS_BY_MEDIA_TYPE["text/plain"] == (V3,)


def _fixtures() -> list[Path]:
    paths = sorted((FIXTURES / "markdown").glob("**/*.md"))
    paths += sorted((FIXTURES / "corpus").glob("**/*.md"))
    paths = [p for p in paths if p.name != "README.md" and b"\x00" not in p.read_bytes()]
    return [*paths, *sorted((FIXTURES / "html").glob("*.html")), *(FIXTURES / "csv").glob("*")]


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_only_embed_text_differs_from_v2_on_every_fixture(path: Path) -> None:
    doc = parse_document(path.read_bytes(), path.relative_to(FIXTURES).as_posix())
    assert get_chunker(V3).accepts(doc)
    for policy in POLICIES.values():
        check_v3_against_v2(doc, policy)


def test_the_fixtures_have_chunks_whose_embed_text_changes() -> None:
    """The fixture test above is not vacuous: some chunks open with two headings."""
    changed = 0
    for path in _fixtures():
        doc = parse_document(path.read_bytes(), path.relative_to(FIXTURES).as_posix())
        changed += check_v3_against_v2(doc, POLICIES["t120-o24"])[1]
    assert changed > 0


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    fmt=st.sampled_from(["md", "md-crlf", "txt", "html", "csv"]),
    abstract=parts,
    policy=policies(),
)
def test_only_embed_text_differs_from_v2_on_generated_documents(
    fmt: str, abstract: list[Part], policy: ChunkPolicy
) -> None:
    check_v3_against_v2(render(fmt, abstract).doc, policy)


def test_generated_headings_with_empty_bodies_are_left_out_once() -> None:
    """A generated document whose chunk opens with a closed and an open heading, and one
    whose nested heading repeats its parent's title: each heading is named once."""
    abstract = [
        Part("heading", ("0",), 1),
        Part("paragraph", ("a b.",)),
        Part("heading", ("1",), 2),
        Part("heading", ("2",), 3),
        Part("heading", ("3",), 2),
        Part("paragraph", ("c d.",)),
        Part("heading", ("3",), 3),
        Part("paragraph", ("e f.",)),
    ]
    doc = render("md", abstract).doc
    policy = make_policy(target_tokens=64, overlap_tokens=0)
    assert check_v3_against_v2(doc, policy)[1] == 1
    texts = [c.embed_text for c in _records(V3, doc, policy)]
    assert texts == ["# 0\n\na b.", "0\n## 1\n\n### 2\n\n## 3\n\nc d.", "0\n3\n### 3\n\ne f."]


# ----------------------------------------------------------------------------- goldens

GOLDEN_POLICIES = {name: POLICIES[name] for name in ("t512-o64", "t120-o24")}


@pytest.mark.parametrize("policy_name", sorted(GOLDEN_POLICIES))
@pytest.mark.parametrize(
    "path",
    [p for p in _fixtures() if p.suffix == ".md"],
    ids=lambda p: p.relative_to(FIXTURES).as_posix(),
)
def test_golden_snapshot(path: Path, policy_name: str) -> None:
    """The records with ``embed_text`` and ``embed_tokens`` (what this label changes)."""
    policy = GOLDEN_POLICIES[policy_name]
    uri = path.relative_to(FIXTURES).as_posix()
    doc = MarkdownParser().parse(path.read_bytes(), uri)
    records = _records(V3, doc, policy)
    relative = path.relative_to(FIXTURES).with_suffix("").as_posix()
    assert_golden(
        V3,
        f"{relative.replace('/', '__')}.{policy_name}",
        [record.model_dump(mode="json") for record in records],
    )
