"""Test seam, not public API: a deliberately hostile parse function.

Workers unpickle DoFns by reference, so a parser that hangs or kills its process has to
live in the installed package to be usable on every runner. Only tests pass it, as
``ParseDocuments(parse_fn=hostile_parse)``; the pipeline never selects it.

The first bytes of the document choose the behaviour: ``HANG`` busy-loops forever without
ever yielding (the worst case: no thread-based timeout can interrupt it), ``CRASH`` kills
the process with ``os._exit``, ``RAISE`` raises an unexpected ``RuntimeError``; anything
else is parsed normally by the registry.
"""

from __future__ import annotations

import os

from kebab_chunk.chunkers.base import Label, LabelledChunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import parse_document

__all__ = ["EXPLODING_ROW", "ExplodingChunker", "hostile_parse"]


def hostile_parse(
    raw: bytes, source_uri: str, media_type: str | None, limits: ParseLimits
) -> CanonicalDocument:
    if raw.startswith(b"HANG"):
        while True:
            pass
    if raw.startswith(b"CRASH"):
        os._exit(17)
    if raw.startswith(b"RAISE"):
        raise RuntimeError(f"hostile parser refused {source_uri}")
    return parse_document(raw, source_uri, media_type, limits)


class ExplodingChunker(LabelledChunker):
    """A chunker that accepts every document and raises on any whose text mentions BOOM.

    Registered only by tests (monkeypatching the chunker registry in-process) to check that
    a chunker failure becomes an error row of stage ``chunk``.
    """

    LABEL = "exploding-test-v0"

    def accepts(self, doc: CanonicalDocument) -> bool:
        return True

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        if any("BOOM" in block.text for block in doc.blocks):
            raise ValueError(f"exploding chunker refused {doc.source_uri}")
        return []


#: The registry row tests patch in to run :class:`ExplodingChunker` under its label.
EXPLODING_ROW = Label(
    ExplodingChunker.LABEL,
    "kebab_chunk.beam._testing:ExplodingChunker",
    None,
    "any document",
    None,
    "a test double that raises on a document mentioning BOOM",
)
