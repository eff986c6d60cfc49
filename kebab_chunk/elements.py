"""The pipeline's element types: what travels between its transforms and is no output row.

Chunks travel as :class:`~kebab_chunk.model.Chunk` (in the job, as :class:`EncodedChunks`
made in the helper process), parsed documents as
:class:`~kebab_chunk.model.CanonicalDocument`, and error rows as
:class:`~kebab_chunk.output.records.ErrorRecord` (a row of the errors table, so it lives
with the output's rows). The types here carry the rest: one matched file (the unit of the
manifest's accounting), its bytes, what chunking did with a document and one part file
written. All are frozen dataclasses of plain values, so every Beam coder can pickle them.

No Beam here: the helper processes (:mod:`kebab_chunk.runtime`) take and give these too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kebab_chunk.output.records import DocumentFacts

__all__ = ["DocumentOutcome", "EncodedChunks", "RawDocument", "SourceFile", "WrittenFile"]


@dataclass(frozen=True)
class EncodedChunks:
    """A document's chunk records under one label as spill entries
    (:func:`~kebab_chunk.output.spill_entry.row_entry`), made in the helper process: the
    job's chunks travel so, one element per document and label, instead of one pickled
    Chunk element per chunk."""

    label: str
    entries: tuple[bytes, ...] = field(repr=False)


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
class DocumentOutcome:
    """What chunking did with one parsed document (one per document, errors or not):
    its facts and, per label that accepted it, how many chunks it made."""

    source_uri: str
    facts: DocumentFacts
    chunks_by_label: tuple[tuple[str, int], ...]

    @property
    def media_type(self) -> str:
        return self.facts.media_type

    @property
    def parser_version(self) -> str:
        return self.facts.parser_version

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.facts.warnings


@dataclass(frozen=True)
class WrittenFile:
    """One Parquet file the pipeline wrote, relative to the output root, with its size and
    blake3 digest (kebab_chunk/output/digest.py): what ``--previous`` checks before it
    carries records out of the file."""

    path: str
    rows: int
    size_bytes: int
    blake3: str

    def listing(self) -> dict[str, Any]:
        """The file's entry in the manifest's ``outputs``."""
        return {
            "path": self.path,
            "rows": self.rows,
            "bytes": self.size_bytes,
            "blake3": self.blake3,
        }
