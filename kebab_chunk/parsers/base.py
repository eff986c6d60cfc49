"""The parser protocol, parse limits, and helpers every parser shares.

A parser turns one document's raw bytes into a :class:`CanonicalDocument`. It is side-effect
free (no files, no network, no global state), so the pipeline can run it under a time
budget or in a subprocess and simply discard it on timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kebab_chunk.errors import LimitsError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.ids import block_id

__all__ = ["DEFAULT_LIMITS", "BlockIds", "ParseLimits", "Parser"]


@dataclass(frozen=True)
class ParseLimits:
    """Documented ceilings; a document beyond one becomes an error row, not a hang."""

    max_pages: int = 2000
    max_blocks: int = 200_000
    max_nesting: int = 64
    time_budget_s: float = 60.0

    def __post_init__(self) -> None:
        for name in ("max_pages", "max_blocks", "max_nesting", "time_budget_s"):
            value = getattr(self, name)
            if not value > 0:  # also refuses NaN
                raise LimitsError(f"ParseLimits.{name} must be > 0, got {value}.")


DEFAULT_LIMITS = ParseLimits()


class Parser(Protocol):
    """Turns bytes of one media type into a CanonicalDocument."""

    #: Immutable parser version label, e.g. ``md-mistune-v1``.
    version: str
    #: Media types this parser handles.
    media_types: tuple[str, ...]

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument: ...


class BlockIds:
    """Allocates content-addressed block ids with the per-(kind, text) occurrence counter."""

    def __init__(self, doc_id: str) -> None:
        self._doc_id = doc_id
        self._seen: dict[tuple[str, str], int] = {}

    def next(self, kind: str, text: str) -> str:
        """The id of the next block of this kind and text (its occurrence counted)."""
        key = (kind, text)
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        return block_id(self._doc_id, kind, text, occurrence)
