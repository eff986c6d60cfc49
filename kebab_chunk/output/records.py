"""The element types that travel between the pipeline's transforms.

Chunks travel as :class:`~kebab_chunk.model.Chunk` and parsed documents as
:class:`~kebab_chunk.model.CanonicalDocument`; the types here carry what the model does not:
one matched file (the unit of the manifest's accounting), its bytes, and dead-letter rows.
All are frozen dataclasses of plain values, so every Beam coder can pickle them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kebab_chunk._quote import MAX_MESSAGE_CHARS, cap

__all__ = [
    "STAGES",
    "DocumentOutcome",
    "ErrorRecord",
    "RawDocument",
    "SourceFile",
    "Stage",
    "WrittenFile",
]

#: Where in the pipeline an input failed.
Stage = Literal["read", "parse", "chunk", "validate"]
STAGES: tuple[Stage, ...] = ("read", "parse", "chunk", "validate")


@dataclass(frozen=True)
class SourceFile:
    """One matched input file, emitted before it is read: the denominator of the accounting."""

    source_uri: str
    media_type: str | None
    size_bytes: int


@dataclass(frozen=True)
class RawDocument:
    """The bytes of one input file that passed the size limit."""

    source_uri: str
    media_type: str | None
    content_hash: str
    raw: bytes = field(repr=False)


@dataclass(frozen=True)
class ErrorRecord:
    """One dead-letter row: which input failed, where, how, and which bytes it had.

    ``content_hash`` is ``None`` when the bytes were never read (e.g. the file was over the
    size limit); ``chunker_version`` names the label for ``chunk`` and ``validate`` errors.
    """

    source_uri: str
    stage: Stage
    error_type: str
    message: str
    content_hash: str | None = None
    media_type: str | None = None
    chunker_version: str | None = None

    def __post_init__(self) -> None:
        # A message may quote document text (a parser's exception); a bounded one keeps the
        # errors dataset and the log readable whatever the input.
        if len(self.message) > MAX_MESSAGE_CHARS:
            object.__setattr__(self, "message", cap(self.message))

    def sort_key(self) -> tuple[str, str, str, str, str]:
        """Total order used for the errors dataset, so its file is byte-identical per input."""
        return (
            self.source_uri,
            self.stage,
            self.chunker_version or "",
            self.error_type,
            self.message,
        )


@dataclass(frozen=True)
class DocumentOutcome:
    """What chunking did with one parsed document (one per document, errors or not)."""

    source_uri: str
    media_type: str
    parser_version: str
    warnings: int
    chunks_by_label: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class WrittenFile:
    """One Parquet file the pipeline wrote, relative to the output root."""

    path: str
    rows: int
