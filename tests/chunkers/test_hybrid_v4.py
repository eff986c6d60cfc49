"""hybrid-v4: hybrid-v3 with each heading and caption line a chunk records bounded, and
goldens.

The defect (shown on v3, gone in v4): a split table repeats its header row as a caption on
every continuation chunk, whole, so a CSV with a very wide header made output quadratic in
its size (issue 29, item 7: 1.09 MB header, 1,811 chunks, 1.97 G characters). v4 records each
heading, caption and repeated table header line cut to half the budget (``bound_line``), so
a document's chunks hold a small multiple of its characters. Where every line fits (the
fixtures at the default, MiniLM and 64-token policies) v4 makes v3's chunks. The goldens
(``tests/goldens/hybrid-v4/``, rewritten only with ``KEBAB_UPDATE_GOLDENS=1``) pin v4's
chunks and texts to embed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.chunkers._context import bound_line
from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.registry import (
    DEFAULT_LABELS_BY_MEDIA_TYPE,
    get_chunker,
    label,
    registered_labels,
)
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.runtime.output_limit import chunk_chars, document_chars
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.test_hybrid_v2 import GOLDEN_FIXTURES, GOLDEN_POLICIES, SMALL, check
from tests.golden import assert_golden, parse_for_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
V3, V4 = "hybrid-v3", "hybrid-v4"
CHANGELOG = "html/changelog/api-reference.html"


def wide_csv(columns: int, rows: int) -> CanonicalDocument:
    """A CSV whose header row is far wider than its rows (an export with sparse columns)."""
    header = ",".join(f"column{i}" for i in range(columns))
    body = "".join(f"{r},item {r},{r * 3}\n" for r in range(rows))
    return parse_document(f"{header}\n{body}".encode(), "wide.csv")


def _chars(chunks: list[Chunk]) -> int:
    return sum(map(chunk_chars, chunks))


def test_registered_beside_v3_and_default_in_its_place() -> None:
    assert {V3, V4} <= set(registered_labels())
    assert {labels for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values() if V4 in labels} == {
        (V4,)
    }
    assert sum(V4 in labels for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values()) == 5
    assert not any(V3 in labels for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values())


def test_a_wide_csv_header_is_recorded_cut_and_output_stays_linear() -> None:
    doc = wide_csv(8_000, 300)
    size = document_chars(doc)
    policy = make_policy()
    old = get_chunker(V3).chunk(doc, policy)
    assert _chars(old) > 40 * size, "v3 repeats the whole header on every continuation"
    warnings: list[str] = []
    new = list(HybridChunker(label("hybrid-v4")).iter_chunks(doc, policy, warnings))
    assert _chars(new) <= 3 * size
    assert [c.text for c in new] == [c.text for c in old], "the same pieces"
    header = doc.blocks[0].text.split("\n", 1)[0]
    count = get_tokenizer(policy.tokenizer).count_tokens
    continued = [c for c in new if c.captions]
    assert len(continued) == len(new) - 1
    for chunk in continued:
        (caption,) = chunk.captions
        assert header.startswith(caption) and len(caption) < len(header)
        assert count(caption) <= 512 // 2 and len(caption) <= 2 * 512
    assert len([w for w in warnings if "table header line of" in w]) == 1
    assert "record only its first" in warnings[-1]


def test_v4_doubling_the_header_doubles_the_output_v3_quadruples_it() -> None:
    """O(input) against O(input²): the measure that grew quadratically in the report."""
    policy = make_policy()
    small, large = wide_csv(3_000, 100), wide_csv(6_000, 100)
    v3 = [_chars(get_chunker(V3).chunk(d, policy)) for d in (small, large)]
    v4 = [_chars(get_chunker(V4).chunk(d, policy)) for d in (small, large)]
    assert v3[1] > 3.5 * v3[0]
    assert v4[1] < 2.2 * v4[0]


def test_bound_line_cuts_to_half_the_budget_in_tokens_and_twice_it_in_characters() -> None:
    def chars(text: str) -> int:
        return len(text)

    def one_token(text: str) -> int:  # a tokenizer that counts an unknown word as one token
        return 1 if text else 0

    assert bound_line("short heading", chars, 100) == "short heading"
    assert bound_line("one two three four", chars, 20) == "one two"  # <= 10, at a word end
    assert bound_line("abcdefghijkl", chars, 10) == "abcde"  # no word end fits: characters
    assert bound_line("x" * 1_000, one_token, 10) == "x" * 20  # the character cap
    assert bound_line("abc", chars, 1) == "a"  # never less than the first character


def _shape(chunks: list[Chunk]) -> list[tuple[object, ...]]:
    return [
        (c.text, tuple(c.source_spans), c.heading_path, c.captions, c.token_estimate)
        for c in chunks
    ]


@pytest.mark.parametrize("uri", [*GOLDEN_FIXTURES, CHANGELOG])
def test_where_every_line_fits_v4_makes_v3s_chunks(uri: str) -> None:
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    for name in ("default", "minilm", "cl100k-m64-o8"):
        policy = GOLDEN_POLICIES[name]
        assert _shape(get_chunker(V4).chunk(doc, policy)) == _shape(
            get_chunker(V3).chunk(doc, policy)
        )


@pytest.mark.parametrize("policy_name", sorted(SMALL))
@pytest.mark.parametrize("uri", [*GOLDEN_FIXTURES, CHANGELOG])
def test_v4_keeps_v2_promises_with_lines_bounded(uri: str, policy_name: str) -> None:
    policy: ChunkPolicy = SMALL[policy_name]
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    check(doc, get_chunker(V4).chunk(doc, policy), policy, bounded=True)


# ----------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("uri", [*GOLDEN_FIXTURES, CHANGELOG])
def test_golden(uri: str) -> None:
    """Each record plus its text to embed, under four policies (one file per fixture)."""
    doc = parse_for_golden((FIXTURES / uri).read_bytes(), uri)
    chunker = HybridChunker(label("hybrid-v4"))
    data = {}
    for name, policy in GOLDEN_POLICIES.items():
        chunks = chunker.chunk(doc, policy)
        check(doc, chunks, policy, bounded=True)
        assert all(c.chunker_version == V4 for c in chunks)
        data[name] = [
            {**c.model_dump(mode="json"), "embed_text": chunker.embed_text(c)} for c in chunks
        ]
    assert_golden(V4, uri.replace("/", "__"), data)
