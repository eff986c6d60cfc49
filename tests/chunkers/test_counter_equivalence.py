"""Fast counting changes speed only: chunks equal those of plain, whole-text counting.

``hybrid-v1`` and ``hierarchical-v1`` count through ``tokenizers.base.CounterCache`` and
use the tokenizer's cut rule (``tokenizers.base.cut_rule``) to count heading prefixes once
and to derive merged chunks' counts from their parts. A chunker given plain
``count_tokens`` and no cut rule instead must produce identical records (ids, texts,
spans, token estimates, warnings) on generated Markdown and on arbitrary text, for every
tokenizer that has a memo or a rule, with one chunker object reused across examples so its
memo is warm and holds earlier words.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.hierarchical_v1 import HierarchicalV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import CanonicalDocument, make_policy
from kebab_chunk.tokenizers import Tokenizer, get_tokenizer
from kebab_chunk.tokenizers.base import Counter, CounterCache, CutRule
from tests.chunkers.test_hybrid_properties import markdown, parse
from tests.chunkers.token_docs import P, build

MINILM = "hf:all-MiniLM-L6-v2"
#: Tokenizers with a memo or a cut rule (bytes-3 has neither).
FASTER = st.sampled_from([MINILM, "tiktoken:cl100k_base", "tiktoken:o200k_base", "chars"])


def _plain(tokenizer: Tokenizer) -> Counter:
    return tokenizer.count_tokens


def _no_rule(tokenizer: Tokenizer) -> CutRule | None:
    return None


FAST, SLOW = HybridChunker(label("hybrid-v1")), HybridChunker(label("hybrid-v1"))
SLOW._counters = CounterCache(_plain)
SLOW._cut_rule = _no_rule
FAST_H = HierarchicalV1Chunker(label("hierarchical-v1"))
SLOW_H = HierarchicalV1Chunker(label("hierarchical-v1"))
SLOW_H._counters = CounterCache(_plain)
SLOW_H._cut_rule = _no_rule


def _same_output(doc: CanonicalDocument, tokenizer: str, **fields: object) -> None:
    policy = make_policy(tokenizer=tokenizer, **fields)
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
    FASTER,
)
def test_markdown_chunks_equal_plain_counting(
    source: str, max_tokens: int, overlap: int, merge_list_items: bool, nl: str, tokenizer: str
) -> None:
    _, doc = parse(source, nl)
    _same_output(
        doc,
        tokenizer,
        max_tokens=max_tokens,
        target_tokens=max(max_tokens, overlap + 1),
        overlap_tokens=overlap,
        merge_list_items=merge_list_items,
    )


@given(st.text(min_size=1, max_size=600), st.integers(4, 60), st.sampled_from([0, 2]), FASTER)
def test_any_text_chunks_equal_plain_counting(
    raw: str, max_tokens: int, overlap: int, tokenizer: str
) -> None:
    """Arbitrary Unicode (NUL, C0/C1 controls, every space, combining marks) as one block."""
    doc = build([P(raw)]).doc
    _same_output(
        doc, tokenizer, max_tokens=max_tokens, overlap_tokens=overlap, target_tokens=max_tokens
    )


def test_a_used_chunker_pickles_without_its_memo() -> None:
    """Beam ships chunkers to workers: no tokenizer or memo travels, and it still works."""
    chunker = HybridChunker(label("hybrid-v1"))
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


@pytest.mark.parametrize("tokenizer", [MINILM, "tiktoken:cl100k_base"])
def test_merged_chunks_and_prefixes_are_not_counted_again(tokenizer: str) -> None:
    """With a cut rule, a merged chunk's count comes from its parts' and the heading line is
    counted once per section (tiktoken: "." before "\\n\\n" is no proven cut, so the last
    word of the left paragraph is counted again with the gap), and the counts stay exact."""
    seen: list[str] = []

    def spy(tok: Tokenizer) -> Counter:
        def count(text: str) -> int:
            seen.append(text)
            return tok.count_tokens(text)

        return count

    chunker = HybridChunker(label("hybrid-v1"))
    chunker._counters = CounterCache(spy)
    source = "# Guide\n\n" + "\n\n".join(f"Paragraph {i} says hello." for i in range(6))
    _, doc = parse(source, "\n")
    policy = make_policy(tokenizer=tokenizer, max_tokens=200, target_tokens=200)
    chunks = chunker.chunk(doc, policy)
    assert len(chunks) == 1 and chunks[0].text.count("\n\n") == 5  # all merged
    assert chunks == SLOW.chunk(doc, policy)
    assert not any("\n\n" in text and "Paragraph 1" in text for text in seen)
    assert sum("Guide" in text for text in seen) == 1
