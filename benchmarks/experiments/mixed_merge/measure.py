"""hybrid-v2 against hybrid-v3 on real HTML: how many chunks are a few words on their own.

``.venv/bin/python -m benchmarks.experiments.mixed_merge.measure [ROOT ...]`` parses every
``*.html`` file under each ROOT (default ``/usr/share/doc``; nothing is downloaded) with the
default HTML parser and chunks it with both labels under the default policy, then prints,
per label, the documents, chunks, chunks shorter than 25 characters (count and share),
the most frequent short texts, and the mean ``token_estimate``. Deterministic: files are
read in sorted path order.
"""

from __future__ import annotations

import collections
import logging
import statistics
import sys
from pathlib import Path

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import KebabError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import parse_document

LABELS = ("hybrid-v2", "hybrid-v3")
SHORT = 25  # characters: "History", "Added in: v1.2.0", "Description"


def measure(roots: list[Path]) -> dict[str, dict[str, object]]:
    """Per label: documents, chunks, short chunks, their commonest texts, mean tokens."""
    paths = sorted(p for root in roots for p in root.rglob("*.html") if p.is_file())
    policy = ChunkPolicy()
    chunkers = {label: get_chunker(label) for label in LABELS}
    figures: dict[str, dict[str, object]] = {}
    tallies: dict[str, tuple[list[int], collections.Counter[str]]] = {
        label: ([], collections.Counter()) for label in LABELS
    }
    documents = 0
    for path in paths:
        try:
            doc = parse_document(path.read_bytes(), path.as_posix())
        except KebabError:
            continue
        documents += 1
        for label, chunker in chunkers.items():
            tokens, short = tallies[label]
            for chunk in chunker.chunk(doc, policy):
                tokens.append(chunk.token_estimate)
                if len(chunk.text.strip()) < SHORT:
                    short[chunk.text.strip()] += 1
    for label, (tokens, short) in tallies.items():
        n_short = sum(short.values())
        figures[label] = {
            "documents": documents,
            "chunks": len(tokens),
            "short_chunks": n_short,
            "short_%": round(100.0 * n_short / max(len(tokens), 1), 1),
            "commonest_short": short.most_common(5),
            "mean_tokens": round(statistics.fmean(tokens), 1) if tokens else 0.0,
        }
    return figures


def main(argv: list[str]) -> int:
    logging.disable(logging.WARNING)
    roots = [Path(a) for a in argv] or [Path("/usr/share/doc")]
    for label, row in measure(roots).items():
        print(label, row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
