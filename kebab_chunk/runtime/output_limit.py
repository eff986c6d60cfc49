"""How much chunk output one document may produce under one label (docs/guide/limits.md).

A label that repeats context on every chunk can turn a small document into output many
times its size: hybrid-v3 recorded a CSV's 1.09 MB header row on each of 1,811 chunks, 1.97 G
characters from a 1.39 MB file. The helper's memory guard does not cover the launching
process, which receives every chunk (Beam's DirectRunner holds them in memory), so the
chunks of one document under one label are measured before they leave the helper: the
characters of their ``text``, ``heading_path`` and ``captions`` may be at most
``factor`` times the characters of the document's text, or ``floor_chars`` when that is
larger. A label over it gives one ``chunk`` / ``limit_exceeded`` error row for the document
instead of its chunks (``embed_text``, filled in afterwards, adds at most about as much
again). The bound is far above what any label makes of a normal document (the fixtures
stay under 4 times their text at the default policy; see tests/runtime/test_output_limit.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kebab_chunk.model import CanonicalDocument, Chunk

__all__ = ["DEFAULT_OUTPUT_LIMIT", "OutputLimit", "chunk_chars", "document_chars"]


def document_chars(doc: CanonicalDocument) -> int:
    """The characters of a document's text: its blocks' texts, captions and its title."""
    total = len(doc.title or "")
    for block in doc.blocks:
        total += len(block.text) + len(getattr(block, "caption", None) or "")
    return total


def chunk_chars(chunk: Chunk) -> int:
    """The characters a chunk holds whose number a label decides: text, headings, captions."""
    return len(chunk.text) + sum(map(len, chunk.heading_path)) + sum(map(len, chunk.captions))


@dataclass(frozen=True)
class OutputLimit:
    """At most ``max(factor * document_chars(doc), floor_chars)`` characters of chunks per
    document and label (see the module docstring)."""

    factor: int = 32
    floor_chars: int = 64 * 2**20

    def chars_for(self, doc: CanonicalDocument) -> int:
        """The most characters ``doc``'s chunks may hold under one label."""
        return max(self.factor * document_chars(doc), self.floor_chars)

    def collect(self, chunks: Iterable[Chunk], doc: CanonicalDocument) -> list[Chunk] | None:
        """All of ``chunks``, or None as soon as they hold more than :meth:`chars_for`."""
        limit = self.chars_for(doc)
        total = 0
        kept: list[Chunk] = []
        for chunk in chunks:
            total += chunk_chars(chunk)
            if total > limit:
                return None
            kept.append(chunk)
        return kept

    def message(self, doc: CanonicalDocument, label: str) -> str:
        """The one sentence of the error row of a document over the limit."""
        return (
            f"chunking ({label}) {doc.source_uri} made chunks holding more than "
            f"{self.chars_for(doc):,} characters of text, headings and captions ({self.factor} "
            f"times the document's {document_chars(doc):,} characters of text, at least "
            f"{self.floor_chars:,}), so they were not kept; chunk it with a label that bounds "
            "the context it repeats (hybrid-v4) or split the file."
        )


DEFAULT_OUTPUT_LIMIT = OutputLimit()
