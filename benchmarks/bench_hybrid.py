"""hybrid-v1 throughput per tokenizer: the typical document and the fixtures' Markdown.

Seed 003 asks for < 100 ms per typical document (~10 pages, ~100 chunks); our bar is
10 ms. The typical document is :func:`benchmarks.corpora.typical_document` (~40 KB of
generated Markdown). Documents are parsed once before the clock starts, so the figures are
chunking only (tokenizer counting included); ``parse+chunk`` adds the median parse time for
the end-to-end view. Tokenizers are loaded once per process before timing (a worker does
that in ``setup()``), and each timed run builds a fresh chunker. Figures are medians of
``repeats`` runs: ms per document, documents/s and MB/s (10**6 bytes of Markdown input).
``hierarchical-v1`` with the byte proxy is reported as the floor: element walk and record
building without any splitting or merging.
"""

from __future__ import annotations

from typing import Any

from benchmarks import corpora
from benchmarks.timing import median_seconds
from kebab_chunk.chunkers._budget import resolve_max_tokens
from kebab_chunk.chunkers._hybrid import HybridChunker
from kebab_chunk.chunkers.hierarchical_v1 import HierarchicalV1Chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, make_policy
from kebab_chunk.parsers.registry import get_parser
from kebab_chunk.tokenizers import get_tokenizer

TOKENIZERS = ("bytes-3", "hf:all-MiniLM-L6-v2", "tiktoken:cl100k_base", "tiktoken:o200k_base")
BAR_MS = 10.0


def _parse(corpus: corpora.Corpus) -> tuple[list[CanonicalDocument], float]:
    parser = get_parser(corpus.media_type)
    docs: list[CanonicalDocument] = []

    def parse() -> None:
        docs[:] = [parser.parse(d.raw, d.name) for d in corpus.documents]

    return docs, median_seconds(parse)


def _measure(
    chunker_cls: type[Any], docs: list[CanonicalDocument], policy: ChunkPolicy, repeats: int
) -> tuple[float, int]:
    chunks = sum(len(chunker_cls().chunk(doc, policy)) for doc in docs)  # warm-up, counts

    def chunk_all() -> None:
        chunker = chunker_cls()
        for doc in docs:
            chunker.chunk(doc, policy)

    return median_seconds(chunk_all, repeats), chunks


def _figures(seconds: float, parse_s: float, corpus: corpora.Corpus, chunks: int) -> dict[str, Any]:
    n = corpus.n_documents
    return {
        "ms/doc": 1000 * seconds / n,
        "docs/s": n / seconds,
        "MB/s": corpus.megabytes / seconds,
        "parse+chunk MB/s": corpus.megabytes / (seconds + parse_s),
        "chunks": chunks,
    }


def _bench(corpus: corpora.Corpus, repeats: int, bar: bool) -> dict[str, Any]:
    docs, parse_s = _parse(corpus)
    out: dict[str, Any] = {"corpus": corpus.summary(), "parse ms/doc": 1000 * parse_s / len(docs)}
    floor = make_policy()
    seconds, chunks = _measure(HierarchicalV1Chunker, docs, floor, repeats)
    out["hierarchical-v1 bytes-3"] = _figures(seconds, parse_s, corpus, chunks)
    for name in TOKENIZERS:
        policy = make_policy(tokenizer=name)
        get_tokenizer(name)  # load outside the clock
        seconds, chunks = _measure(HybridChunker, docs, policy, repeats)
        figures = _figures(seconds, parse_s, corpus, chunks)
        figures["max_tokens"] = resolve_max_tokens(policy, get_tokenizer(name))
        if bar:
            figures[f"within {BAR_MS:g} ms"] = figures["ms/doc"] <= BAR_MS
        out[f"hybrid-v1 {name}"] = figures
    return out


def run(quick: bool) -> dict[str, Any]:
    repeats = 3 if quick else 11
    typical = corpora.typical_document()
    fixtures = corpora.fixture_markdown()
    if quick:
        fixtures = corpora.subset(fixtures, 200_000)
    return {
        "typical 10-page document": _bench(typical, repeats, bar=True),
        "fixtures Markdown": _bench(fixtures, repeats, bar=False),
    }
