"""md-heading-v3: md-heading-v2's chunks, with an ``embed_text`` that names each heading once
and heading path lines bounded by the budget.

md-heading-v2 glues a heading with an empty body to the first chunk of its subsection, so a
chunk can open with ``## Examples`` then ``### Measuring``; its ``embed_text`` then read
``Examples``, ``Measuring``, ``## Examples``, ``### Measuring`` (the default recipe left out
only the innermost heading, and only when the text's first line is it). md-heading-v3 is
the same engine with another heading rule (docs/internals/versioning.md). The tests check, on every
fixture and on generated documents, that only ``embed_text`` (and so ``embed_tokens``)
and the label-dependent ``chunk_id`` / ``chunker_version`` differ, and that ``embed_text``
is exactly the heading path less the headings whose blocks open the chunk (found from the
blocks, not by reading the text), then the text; and pin the new label's goldens.

Where a heading line exceeds the bound (half the budget, ``_context.bound_line``), the
chunk's ``heading_path`` holds it cut as ``bound_line`` cuts it (md-heading-v2 repeated it
whole on every chunk of its section: output quadratic in a long heading), and
``embed_text`` follows from the recorded lines.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kebab_chunk.chunkers._budget import budget_of
from kebab_chunk.chunkers._context import bound_line
from kebab_chunk.chunkers._separators import is_exact
from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import Block, CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers.registry import get_parser_by_version, parse_document
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.test_md_heading_v2 import long_heading_doc
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


def bound_of(policy: ChunkPolicy) -> Callable[[str], str]:
    """A heading line as md-heading-v3 records it under ``policy`` (``bound_line``)."""
    tokenizer = get_tokenizer(policy.tokenizer)
    budget = budget_of(policy, tokenizer)
    return lambda line: bound_line(line, tokenizer.count_tokens, budget)


def _norm(title: str) -> str:
    return " ".join(title.split())


def expected_embed_text(
    chunk: Chunk, blocks: dict[str, Block], v2: Chunk, bound: Callable[[str], str]
) -> str:
    """The heading path less every heading whose whole block opens the chunk (the blocks
    before it whole headings too) and is still in the path (a heading block's own
    ``heading_path`` ends with its title, here as ``bound`` records it), then the captions
    and the text. Also left out: a heading path line cut by the bound when the chunk opens
    with the start of that heading's ATX line and the piece's title holds the cut line (a
    heading too long for one chunk); and, as in md-heading-v2, the innermost heading when
    md-heading-v2 left it out (a text whose first line is it, such as rendered HTML) and
    it is recorded whole (that rule compares the whole line: a paragraph may open with a
    heading's words)."""
    path = chunk.heading_path
    keep = len(path)
    for block_id, span in zip(chunk.block_ids, chunk.source_spans, strict=True):
        block = blocks[block_id]
        start, end = block.spans[0].char_start, block.spans[0].char_end
        depth = len(block.heading_path)
        recorded = tuple(map(bound, block.heading_path))
        cut = recorded[-1:] != block.heading_path[-1:]
        if block.kind == "heading" and (span.char_start, span.char_end) == (start, end):
            # a cut line names a source heading line (ATX, setext), not rendered text
            if path[:depth] == recorded and (not cut or is_exact(block.text, block.spans)):
                keep = min(keep, depth - 1)
            continue
        piece = block.text[: span.char_end - start].lstrip(" ")
        if block.kind == "heading" and span.char_start == start and cut and piece[:1] == "#":
            title = _norm(piece.lstrip("#"))
            if path[:depth] == recorded and title.startswith(recorded[-1]):
                keep = min(keep, depth - 1)
        break  # a chunk that starts inside a heading line opens with no heading
    v2_left_out = v2.embed_text == contextualize_parts(v2.heading_path[:-1], v2.captions, v2.text)
    if path and v2_left_out and path[-1] == v2.heading_path[-1]:
        keep = min(keep, len(path) - 1)
    return contextualize_parts(path[:keep], chunk.captions, chunk.text)


def check_v3_against_v2(doc: CanonicalDocument, policy: ChunkPolicy) -> tuple[int, int]:
    """Assert the v3 contract on ``doc``: v2's chunks but for the label, ``embed_text`` and
    heading path lines over the bound (recorded as ``bound_line`` cuts them); returns
    (chunks, chunks whose embed_text differs)."""
    old, new = _records(V2, doc, policy), _records(V3, doc, policy)
    assert len(old) == len(new)
    blocks = {b.block_id: b for b in doc.blocks}
    bound = bound_of(policy)
    tokenizer = get_tokenizer(policy.tokenizer)
    budget = budget_of(policy, tokenizer)
    changed = 0
    for a, b in zip(old, new, strict=True):
        assert b.heading_path == tuple(map(bound, a.heading_path))
        for line in b.heading_path:  # never over the bound (bar one first character)
            fits = tokenizer.count_tokens(line) <= budget // 2 and len(line) <= 2 * budget
            assert fits or len(line) == 1
        same = LABEL_FIELDS | {"heading_path"}
        assert a.model_dump(exclude=same) == b.model_dump(exclude=same)
        assert b.chunker_version == V3
        assert b.embed_text == expected_embed_text(b, blocks, a, bound)
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


def _wide_heading(words: int = 3_000) -> bytes:
    """A 20,000-character heading line above 200 short paragraphs (about 30 KB)."""
    heading = " ".join(f"word{i % 97}" for i in range(words))[:20_000]
    body = "\n\n".join(f"Paragraph {i} has a few words of body text in it." for i in range(200))
    return f"# {heading}\n\n{body}\n".encode()


def _output_chars(chunks: list[Chunk]) -> int:
    """The characters of every text field the chunks record (text, embed_text, headings)."""
    return sum(
        len(c.text) + len(c.embed_text or "") + sum(map(len, (*c.heading_path, *c.captions)))
        for c in chunks
    )


def test_a_wide_heading_line_no_longer_makes_output_quadratic() -> None:
    """md-heading-v2 records the 20,000-character heading whole on each of the ~23 chunks of
    its section and repeats it in each ``embed_text``: about 33 times the input. v3 records
    it cut to half the budget: text (with overlap), ``embed_text`` (text plus at most half
    the budget of headings) and heading paths stay a small multiple of the input."""
    raw = _wide_heading()
    doc = parse_document(raw, "wide.md")
    policy = ChunkPolicy()
    old, new = _records(V2, doc, policy), _records(V3, doc, policy)
    assert len(old) == len(new) > 10
    assert _output_chars(old) > 10 * len(raw)
    assert _output_chars(new) <= 4 * len(raw)
    check_v3_against_v2(doc, policy)
    # the text keeps the heading whole (a source slice), only the recorded line is cut
    assert "".join(c.text for c in new).count("word96 word0") == raw.count(b"word96 word0")
    (line,) = {c.heading_path[0] for c in new}
    assert 0 < len(line) < 2 * 512 and bound_of(policy)(line) == line
    # the first chunk opens with (the start of) the heading: it is not named again
    assert new[0].embed_text == new[0].text
    assert all(c.embed_text == f"{line}\n{c.text}" for c in new[1:])


def test_one_warning_per_heading_line_cut() -> None:
    """Each heading line over the bound is reported once per document, however many chunks
    record it; a heading within the bound is not reported."""
    raw = (
        _wide_heading()
        + b"\n## "
        + b"long sub heading " * 200
        + b"\n\nText.\n\n## Short\n\nMore.\n"
    )
    doc = parse_document(raw, "wide.md")
    warnings: list[str] = []
    chunks = get_chunker(V3).chunk(doc, ChunkPolicy(), warnings)
    assert len(warnings) == 2
    assert all("a heading line of" in w and "record only its first" in w for w in warnings)
    assert any(c.heading_path[-1] == "Short" for c in chunks)
    quiet: list[str] = []
    get_chunker(V2).chunk(doc, ChunkPolicy(), quiet)  # v2 records the lines whole
    get_chunker(V3).chunk(parse_document(GUIDE, "guide.md"), ChunkPolicy(), quiet)
    assert quiet == []


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
def test_golden_snapshot(path: Path, policy_name: str, core_mode: str) -> None:
    """The records with ``embed_text`` and ``embed_tokens`` (what this label changes)."""
    policy = GOLDEN_POLICIES[policy_name]
    uri = path.relative_to(FIXTURES).as_posix()
    doc = get_parser_by_version("md-mistune-v1").parse(path.read_bytes(), uri)
    records = _records(V3, doc, policy)
    relative = path.relative_to(FIXTURES).with_suffix("").as_posix()
    assert_golden(
        V3,
        f"{relative.replace('/', '__')}.{policy_name}",
        [record.model_dump(mode="json") for record in records],
    )


def test_golden_long_heading(core_mode: str) -> None:
    """A heading line over the bound: recorded cut on every chunk (the text keeps it)."""
    policy = GOLDEN_POLICIES["t120-o24"]
    records = _records(V3, long_heading_doc(), policy)
    whole = _records(V2, long_heading_doc(), policy)
    assert len(records) > 1 and records[0].heading_path != whole[0].heading_path
    check_v3_against_v2(long_heading_doc(), policy)
    assert_golden(V3, "long-heading.t120-o24", [r.model_dump(mode="json") for r in records])
