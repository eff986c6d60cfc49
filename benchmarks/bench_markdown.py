"""Default Markdown parser and md-heading-v1 chunk throughput on a generated Markdown corpus."""

from __future__ import annotations

from typing import Any

from benchmarks.corpus import markdown_corpus
from benchmarks.timing import median_seconds
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import get_parser


def run(quick: bool) -> dict[str, Any]:
    total = 2_000_000 if quick else 20_000_000
    texts = markdown_corpus(total)
    raws = [t.encode("utf-8") for t in texts]
    mb = sum(len(r) for r in raws) / 1e6
    policy = ChunkPolicy(target_tokens=256, overlap_tokens=32)
    docs: list[CanonicalDocument] = []

    def parse() -> None:
        parser = get_parser("text/markdown")
        docs[:] = [parser.parse(raw, f"doc{i}.md") for i, raw in enumerate(raws)]

    def chunk() -> None:
        chunker = get_chunker("md-heading-v1")
        for doc in docs:
            chunker.chunk(doc, policy)

    parse_s = median_seconds(parse)
    chunk_s = median_seconds(chunk)
    n_chunks = sum(len(get_chunker("md-heading-v1").chunk(d, policy)) for d in docs)
    return {
        "corpus": {"documents": len(raws), "MB": round(mb, 2), "chunks": n_chunks},
        f"{get_parser('text/markdown').version} parse": {
            "MB/s": mb / parse_s,
            "docs/s": len(raws) / parse_s,
        },
        "md-heading-v1 chunk": {"MB/s": mb / chunk_s, "docs/s": len(raws) / chunk_s},
        "parse+chunk": {"MB/s": mb / (parse_s + chunk_s)},
    }
