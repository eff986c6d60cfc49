"""Golden snapshots of hierarchical-v1 and hybrid-v1 (one file per fixture and label).

Each fixture is parsed with its registered parser and chunked under a few policies (one
snapshot file holds them all). Invariants are asserted first (budget, stated token counts,
unique ids, exact source slices for text formats), then the records are compared with
``tests/goldens/<label>/`` (rewritten only with ``KEBAB_UPDATE_GOLDENS=1``). A changed
snapshot means a label's output changed: ship that as a new label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.hierarchical_v1 import HierarchicalV1Chunker
from kebab_chunk.chunkers.registry import label
from kebab_chunk.model import ChunkPolicy, LineSpan, make_policy
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.tokenizers import get_tokenizer
from tests.chunkers.token_docs import check_chunks
from tests.golden import assert_golden, parse_for_golden

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OTHER_FORMATS = [
    "pdf/three-page-en.pdf",
    "pdf/one-long-page.pdf",
    "html/article.html",
    "csv/inventory.csv",
    "docx/report.docx",
    "docling/report.docling.json",
]
HIERARCHICAL_POLICIES = {
    "default": make_policy(),
    "items-cl100k": make_policy(tokenizer="tiktoken:cl100k_base", merge_list_items=False),
}
HYBRID_POLICIES = {
    "default": make_policy(),
    "minilm": make_policy(tokenizer="hf:all-MiniLM-L6-v2"),
    "cl100k-m64-o8": make_policy(tokenizer="tiktoken:cl100k_base", max_tokens=64, overlap_tokens=8),
}


def _fixtures() -> list[str]:
    markdown = sorted(
        p.relative_to(FIXTURES).as_posix()
        for p in FIXTURES.glob("markdown/*.md")
        if p.name != "README.md"
    )
    return [*markdown, *OTHER_FORMATS]


def _name(uri: str) -> str:
    return uri.replace("/", "__")


def _snapshot(chunker: Any, uri: str, policies: dict[str, ChunkPolicy], budget: bool) -> None:
    raw = (FIXTURES / uri).read_bytes()
    doc = parse_for_golden(raw, uri)
    is_text = all(isinstance(b.spans[0], LineSpan) for b in doc.blocks)
    exact_text = is_text and uri.endswith((".md", ".csv"))  # HTML text is rendered
    source = decode_text(raw, uri)[0] if exact_text else None
    data = {}
    for name, policy in policies.items():
        chunks = chunker.chunk(doc, policy)
        limit = resolve_max_tokens(policy, get_tokenizer(policy.tokenizer)) if budget else 10**9
        check_chunks(chunks, policy.tokenizer, limit, source)
        data[name] = [c.model_dump(mode="json") for c in chunks]
    assert_golden(chunker.label, _name(uri), data)


def test_fixture_set_covers_every_parser() -> None:
    assert len(_fixtures()) > len(OTHER_FORMATS)  # the Markdown fixtures are there


@pytest.mark.parametrize("uri", _fixtures())
def test_hierarchical_golden(uri: str) -> None:
    chunker = HierarchicalV1Chunker(label("hierarchical-v1"))
    _snapshot(chunker, uri, HIERARCHICAL_POLICIES, budget=False)


@pytest.mark.parametrize("uri", _fixtures())
def test_hybrid_golden(uri: str) -> None:
    _snapshot(HybridChunker(label("hybrid-v1")), uri, HYBRID_POLICIES, budget=True)
