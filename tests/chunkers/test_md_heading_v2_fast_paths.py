"""md-heading-v2's fast paths give exactly what its full cut search gives.

Two shortcuts make ``md-heading-v2`` cheaper without changing one chunk (its goldens pin
the output; these tests pin the equivalence on many more inputs):

- a run of blocks that fits the budget as a whole is one piece, found without searching
  for separators, for tokenizers whose count of a slice never exceeds the count of the
  whole text (``bytes-3``, ``chars``);
- the candidate cuts per level are computed only when the search reaches that level, and
  merged with sets instead of ``heapq.merge``.

Each is compared with the general path on real documents (the fixtures' Markdown and the
installed distributions' READMEs) and on generated text under several policies.
"""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.corpora import distribution_readmes, fixture_markdown
from kebab_chunk.chunkers import _md_heading
from kebab_chunk.chunkers._md_heading import MdHeadingChunker
from kebab_chunk.chunkers._token_split import cut_levels
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser

POLICIES = (
    ChunkPolicy(target_tokens=342, overlap_tokens=34),
    ChunkPolicy(target_tokens=40, overlap_tokens=10),
    ChunkPolicy(target_tokens=300, overlap_tokens=0, tokenizer="chars"),
    ChunkPolicy(target_tokens=64, overlap_tokens=8, merge_peers=False),
)

_TEXT = st.text(
    alphabet=st.sampled_from([*list("ab .!?\n\t\r"), "é", "。", "”", "\xa0", "\u2028"]),
    max_size=300,
)


@cache
def _documents() -> tuple[CanonicalDocument, ...]:
    parser = get_parser("text/markdown")
    docs = list(fixture_markdown().documents) + list(distribution_readmes().documents)[:40]
    return tuple(parser.parse(d.raw, d.name) for d in docs)


def _chunks(docs: tuple[CanonicalDocument, ...], policy: ChunkPolicy) -> list[Chunk]:
    chunker = MdHeadingChunker(label("md-heading-v2"))
    return [c for doc in docs for c in chunker.chunk(doc, policy)]


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: f"{p.tokenizer}-{p.target_tokens}")
def test_whole_run_shortcut_gives_the_chunks_of_the_full_search(
    policy: ChunkPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same chunks (ids, text, spans, counts) with the shortcut on and off."""
    docs = _documents()
    fast = _chunks(docs, policy)
    monkeypatch.setattr(_md_heading, "_MONOTONE", frozenset())
    assert _chunks(docs, policy) == fast
    assert len(fast) > 100  # the documents really were chunked


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.lists(st.integers(0, 300), max_size=5), st.none() | st.integers(0, 300))
def test_lazy_cut_levels_equal_the_eager_ones(text: str, cuts: list[int], glue: int | None) -> None:
    """Every level, asked for in any order: the same cuts as ``cut_levels`` gives (without
    those up to the glue end when one is set), then ``len(text)``."""
    structural = sorted({min(c, len(text)) for c in cuts})
    eager = cut_levels(text, "prose", structural)
    if glue is not None:
        eager = [[c for c in level if c <= 0 or c > glue] for level in eager]
    lazy = _md_heading._LazyLevels(text, structural, glue)
    assert len(lazy) == len(eager)
    assert lazy[len(eager) - 1] == eager[-1]  # a deep level first: the cleaner ones follow
    assert list(lazy) == eager
    assert lazy[-1] == eager[-1]
    assert lazy[1:] == eager[1:]


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from(POLICIES))
def test_generated_markdown_chunks_the_same_either_way(text: str, policy: ChunkPolicy) -> None:
    """Headings, blank lines, CR/CRLF and odd whitespace around small and large runs."""
    raw = ("# Title\n\n" + text + "\n\n## Next\n\n" + text * 3).encode("utf-8")
    doc = get_parser("text/markdown").parse(raw, "generated.md")
    fast = _chunks((doc,), policy)
    saved = _md_heading._MONOTONE
    _md_heading._MONOTONE = frozenset()
    try:
        slow = _chunks((doc,), policy)
    finally:
        _md_heading._MONOTONE = saved
    assert fast == slow
