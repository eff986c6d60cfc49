"""The memoising token counter changes speed only: chunks equal those of plain counting.

``hybrid-v1`` and ``hierarchical-v1`` count through ``tokenizers.base.CounterCache``;
a chunker given plain ``count_tokens`` instead must produce identical records (ids,
texts, spans, token estimates, warnings) on generated Markdown and on arbitrary text, with
one chunker object reused across examples so its memo is warm and holds earlier words.
"""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers.hierarchical_v1 import HierarchicalV1Chunker
from kebab_chunk.chunkers.hybrid_v1 import HybridV1Chunker
from kebab_chunk.model import CanonicalDocument, make_policy
from kebab_chunk.tokenizers import Tokenizer, get_tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache
from tests.chunkers.test_hybrid_properties import markdown, parse
from tests.chunkers.token_docs import P, build

MINILM = "hf:all-MiniLM-L6-v2"


def _plain(tokenizer: Tokenizer) -> Counter:
    return tokenizer.count_tokens


FAST, SLOW = HybridV1Chunker(), HybridV1Chunker()
SLOW._counters = CounterCache(_plain)
FAST_H, SLOW_H = HierarchicalV1Chunker(), HierarchicalV1Chunker()
SLOW_H._counters = CounterCache(_plain)


def _same_output(doc: CanonicalDocument, **fields: object) -> None:
    policy = make_policy(tokenizer=MINILM, **fields)
    fast_warnings: list[str] = []
    slow_warnings: list[str] = []
    fast = list(FAST.iter_chunks(doc, policy, fast_warnings))
    slow = list(SLOW.iter_chunks(doc, policy, slow_warnings))
    assert fast == slow
    assert fast_warnings == slow_warnings
    assert FAST_H.chunk(doc, policy) == SLOW_H.chunk(doc, policy)


@given(
    markdown(),
    st.integers(6, 300),
    st.sampled_from([0, 0, 3, 16]),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_markdown_chunks_equal_plain_counting(
    source: str, max_tokens: int, overlap: int, merge_list_items: bool, nl: str
) -> None:
    _, doc = parse(source, nl)
    _same_output(
        doc,
        max_tokens=max_tokens,
        target_tokens=max(max_tokens, overlap + 1),
        overlap_tokens=overlap,
        merge_list_items=merge_list_items,
    )


@given(st.text(min_size=1, max_size=600), st.integers(4, 60), st.sampled_from([0, 2]))
def test_any_text_chunks_equal_plain_counting(raw: str, max_tokens: int, overlap: int) -> None:
    """Arbitrary Unicode (NUL, C0/C1 controls, every space, combining marks) as one block."""
    doc = build([P(raw)]).doc
    _same_output(doc, max_tokens=max_tokens, overlap_tokens=overlap, target_tokens=max_tokens)


def test_a_used_chunker_pickles_without_its_memo() -> None:
    """Beam ships chunkers to workers: no tokenizer or memo travels, and it still works."""
    chunker = HybridV1Chunker()
    _, doc = parse("# Title\n\n" + "Words repeat, words repeat. " * 80, "\n")
    policy = make_policy(tokenizer=MINILM, max_tokens=40)
    before = chunker.chunk(doc, policy)
    blob = pickle.dumps(chunker)
    assert len(blob) < 2_000
    assert pickle.loads(blob).chunk(doc, policy) == before


def test_the_cache_keeps_one_counter_per_tokenizer_object() -> None:
    cache = CounterCache()
    tok = get_tokenizer(MINILM)
    assert cache.get(tok) is cache.get(tok)
    stand_in = get_tokenizer("bytes-3")
    assert cache.get(stand_in) == stand_in.count_tokens
