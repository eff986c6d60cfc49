"""The parser protocol, the version row every parser is built from, parse limits, and
helpers every parser shares.

A parser turns one document's raw bytes into a :class:`CanonicalDocument`. It is side-effect
free (no files, no network, no global state), so the pipeline can run it under a time
budget or in a subprocess and simply discard it on timeout. An engine is built from one
:class:`ParserVersion` row of the registry and reads everything that tells its versions
apart from that row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from kebab_chunk.errors import LimitsError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.ids import block_id

__all__ = [
    "DEFAULT_LIMITS",
    "BlockIds",
    "ParseLimits",
    "Parser",
    "ParserVersion",
    "VersionedParser",
]

_R = TypeVar("_R")


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


@dataclass(frozen=True)
class ParserVersion:
    """One row of the parser registry: a parser version and everything that makes its
    documents.

    ``name``: the version, stored in every document (``parser_version``). ``engines``: the
    parser class that reads each media type, as ``(media type, "module:Class")`` pairs
    (imported only when the version is used; ``csv-v1`` reads CSV and TSV with two
    classes), the first pair being what the version reads when no media type is named.
    ``rules``: the engine's frozen rules value (:mod:`kebab_chunk.parsers.rules`), ``None``
    for an engine with one version. ``summary``: what its documents are, one line.
    """

    name: str
    engines: tuple[tuple[str, str], ...]
    rules: object | None
    summary: str

    @property
    def media_types(self) -> tuple[str, ...]:
        """The media types this version reads, in the row's order."""
        return tuple(media_type for media_type, _ in self.engines)

    def engine(self, media_type: str) -> str | None:
        """The ``"module:Class"`` that reads ``media_type``; None when this version does not."""
        return dict(self.engines).get(media_type)

    def rules_as(self, kind: type[_R]) -> _R:
        """This row's rules, checked to be the ``kind`` an engine reads."""
        if not isinstance(self.rules, kind):
            raise TypeError(
                f"parser version {self.name} has rules {self.rules!r}, not {kind.__name__}"
            )
        return self.rules


class VersionedParser:
    """What every engine takes from its version row: the row, and the version stored in
    every document it makes."""

    def __init__(self, row: ParserVersion) -> None:
        self.row = row
        self.version = row.name


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
