"""Deliberately hostile parse functions and chunkers for the isolation tests.

They live in a module (not inside a test function) because the pipeline sends them to its
helper processes by reference: a helper imports this module to run them. The document's
text chooses the behaviour: ``ALLOC`` / ``GREEDY`` allocate 4 GiB at once (the memory
guard must refuse it), ``HANG`` busy-loops without ever yielding, ``CRASH`` kills the
helper process; anything else is handled normally. ``SlowParsers`` parses as the default
choice does, except a document starting with ``SLOW <path>``: it creates ``<path>`` (so a
test knows a helper is busy on it) and sleeps, as a long parse of a real corpus does.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from kebab_chunk.chunkers.base import Label, LabelledChunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.registry import ParserChoice, parse_document

__all__ = ["HOSTILE_LABEL", "HOSTILE_ROW", "HostileChunker", "SlowParsers", "greedy_parse"]

HOSTILE_LABEL = "hostile-test-v0"
_FOUR_GIB = 4 * 1024**3


def greedy_parse(
    raw: bytes, source_uri: str, media_type: str | None, limits: ParseLimits
) -> CanonicalDocument:
    """Parses normally, except that a document starting with ALLOC asks for 4 GiB."""
    if raw.startswith(b"ALLOC"):
        hoard = bytearray(_FOUR_GIB)
        raise AssertionError(f"the memory guard let {len(hoard)} bytes through")
    return parse_document(raw, source_uri, media_type, limits)


class HostileChunker(LabelledChunker):
    """Accepts every document; misbehaves when a block's text says so, else makes nothing."""

    def accepts(self, doc: CanonicalDocument) -> bool:
        return True

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        text = " ".join(block.text for block in doc.blocks)
        if "GREEDY" in text:
            hoard = bytearray(_FOUR_GIB)
            raise AssertionError(f"the memory guard let {len(hoard)} bytes through")
        if "HANG" in text:
            while True:
                pass
        if "CRASH" in text:
            os._exit(23)
        return []


@dataclass(frozen=True)
class SlowParsers(ParserChoice):
    """The default parsers, but ``SLOW <marker path>`` creates the marker and sleeps 10 min."""

    def __call__(
        self,
        raw: bytes,
        source_uri: str,
        media_type: str | None = None,
        limits: ParseLimits = DEFAULT_LIMITS,
    ) -> CanonicalDocument:
        if raw.startswith(b"SLOW "):
            Path(raw[5:].decode().strip()).touch()
            time.sleep(600)
        return super().__call__(raw, source_uri, media_type, limits)


#: The registry row tests patch in to run :class:`HostileChunker` under its label.
HOSTILE_ROW = Label(
    HOSTILE_LABEL,
    "tests.reliability.hostile:HostileChunker",
    None,
    "any document",
    None,
    "a test double that hangs, crashes or hoards memory when a block says so",
)
