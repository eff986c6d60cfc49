"""Deterministic generated corpora for the benchmarks (no downloads)."""

from __future__ import annotations

import random

_VOCABULARY = (
    "chunk pipeline document parser token budget heading section paragraph table code "
    "retrieval embedding vector index query source span offset page corpus version label "
    "deterministic identifier worker runner bundle shard partition schema record manifest "
    "résumé naïve 東京 データ 문서 façade"
)
_WORDS = _VOCABULARY.split(" ")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 22))]
    return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])


def markdown_document(rng: random.Random, sections: int) -> str:
    """One varied Markdown document: headings, prose, lists, code, tables, quotes, images."""
    out: list[str] = [f"# {_sentence(rng).rstrip('.?!')}", ""]
    for s in range(sections):
        level = rng.choice([2, 2, 3, 4])
        out += [f"{'#' * level} Section {s}: {rng.choice(_WORDS)}", ""]
        for _ in range(rng.randint(1, 4)):
            kind = rng.random()
            if kind < 0.55:
                out += [" ".join(_sentence(rng) for _ in range(rng.randint(2, 9))), ""]
            elif kind < 0.7:
                marker = rng.choice(["-", "*", "1."])
                out += [f"{marker} {_sentence(rng)}" for _ in range(rng.randint(2, 6))] + [""]
            elif kind < 0.8:
                lines = [f"    value_{i} = compute({i}, '{rng.choice(_WORDS)}')" for i in range(6)]
                out += ["```python", "def f():", *lines, "```", ""]
            elif kind < 0.9:
                out += ["| name | value | note |", "|---|---:|---|"]
                out += [
                    f"| {rng.choice(_WORDS)} | {rng.randint(0, 999)} | {_sentence(rng)} |"
                    for _ in range(rng.randint(2, 8))
                ] + [""]
            elif kind < 0.95:
                out += [f"> {_sentence(rng)}", f"> {_sentence(rng)}", ""]
            else:
                out += [f"![{rng.choice(_WORDS)}](img/{s}.png)", ""]
    return "\n".join(out)


def markdown_corpus(total_bytes: int, seed: int = 7) -> list[str]:
    """Documents of varied size until ``total_bytes`` of UTF-8 is reached."""
    rng = random.Random(seed)
    docs: list[str] = []
    size = 0
    while size < total_bytes:
        doc = markdown_document(rng, rng.randint(2, 40))
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    return docs
