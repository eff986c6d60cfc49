"""The rows of the output's tables, as the pipeline builds them and the readers return them.

:class:`ErrorRecord` is one row of the errors table (and the pipeline's dead letter),
:class:`DocumentRow` one row of the documents table, with :class:`DocumentFacts` (what
parsing learned about a document: the row's parse columns) and :class:`IndexEntry` (one
entry of its ``chunk_index``). The types that only travel between the pipeline's
transforms live in :mod:`kebab_chunk.elements`. All are frozen dataclasses of plain
values, so every Beam coder can pickle them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from kebab_chunk._quote import MAX_MESSAGE_CHARS, cap
from kebab_chunk.model import CanonicalDocument

__all__ = [
    "STAGES",
    "STATUSES",
    "DocumentFacts",
    "DocumentRow",
    "ErrorRecord",
    "IndexEntry",
    "Stage",
    "Status",
]

#: Where in the pipeline an input failed.
Stage = Literal["read", "parse", "chunk", "validate"]
STAGES: tuple[Stage, ...] = ("read", "parse", "chunk", "validate")


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


#: The media type whose document metadata is its front matter (the Markdown parsers').
_FRONT_MATTER_MEDIA_TYPE = "text/markdown"
#: Paged media: their parser records ``page_count`` in the document metadata.
_PAGED_MEDIA_TYPES = frozenset({"application/pdf"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: str) -> str:
    """``value`` with lone surrogates as U+FFFD: Parquet strings must be valid UTF-8 (a
    YAML escape such as ``"\\ud800"`` in a front-matter title yields one)."""
    return _SURROGATE.sub("\ufffd", value)


def _json_text(value: object) -> str:
    """Compact JSON with keys sorted (the same text for the same mapping on any machine).

    Non-ASCII stays readable; a lone surrogate is written as its ``\\uXXXX`` escape (it
    can only occur inside a JSON string, where the escape means the same value), so the
    text is valid UTF-8 and parses back to the mapping the parser recorded. Plain ``json``
    rather than RFC 8785: front matter may hold integers beyond 2**53, which RFC 8785
    refuses.
    """
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True)
class DocumentFacts:
    """What parsing learned about one document, as the documents table keeps it.

    Everything of a :class:`~kebab_chunk.model.CanonicalDocument` except its blocks
    (counted): ``front_matter`` is the Markdown front matter as JSON text with sorted keys
    (None when the document has none, and for other media types, whose parser metadata is
    not front matter); ``pages`` is the page count of paged media (PDF), else None. It is a
    pure function of the parsed document, so an incremental run can carry it forward from
    the previous documents table instead of parsing again.
    """

    doc_id: str
    media_type: str
    parser_version: str
    content_hash: str
    title: str | None
    front_matter: str | None
    warnings: tuple[str, ...]
    pages: int | None
    blocks: int

    @staticmethod
    def of(doc: CanonicalDocument) -> DocumentFacts:
        """The facts of a parsed document."""
        front_matter = None
        if doc.media_type == _FRONT_MATTER_MEDIA_TYPE and doc.metadata:
            front_matter = _json_text(doc.metadata)
        pages = doc.metadata.get("page_count") if doc.media_type in _PAGED_MEDIA_TYPES else None
        return DocumentFacts(
            doc_id=doc.doc_id,
            media_type=doc.media_type,
            parser_version=doc.parser_version,
            content_hash=doc.content_hash,
            title=None if doc.title is None else _text(doc.title),
            front_matter=front_matter,
            warnings=tuple(_text(w) for w in doc.warnings),
            pages=pages if type(pages) is int else None,
            blocks=len(doc.blocks),
        )


class IndexEntry(NamedTuple):
    """One chunk record written for a document, as the documents table's ``chunk_index``
    lists it: its label and id, and the digests of its embedded content and of the whole
    record (computed by kebab_chunk/output/chunk_index.py, which exports this type too)."""

    label: str
    chunk_id: str
    content_digest: str
    record_digest: str


#: A document's status in the documents table: the manifest's bucket (``errors`` there).
Status = Literal["chunked", "zero_chunks", "error", "skipped", "unaccounted", "inconsistent"]
#: The statuses of a run whose accounting closes (``unaccounted``, a file with no outcome,
#: and ``inconsistent``, a file with outcomes no single processing gives, mean it does not).
STATUSES: tuple[Status, ...] = ("chunked", "zero_chunks", "error", "skipped")


@dataclass(frozen=True)
class DocumentRow:
    """One row of ``OUTPUT/documents``: one matched file and what became of it.

    Columns that only parsing can fill (``doc_id``, ``parser_version``, ``title``,
    ``front_matter``, ``pages``, ``blocks``) are None for a file that was never parsed;
    ``content_hash`` is None for a file that was never read; ``warnings`` is empty then.
    ``chunks_by_label`` lists the chunk records written per label (labels without one are
    absent), ``errors`` the (stage, error_type) of each error row, in the errors table's
    order. ``status`` is ``chunked``, ``zero_chunks``, ``error`` or ``skipped`` (the
    manifest's buckets, decided in one place; ``skipped``: no parser reads the file's
    media type and the run was told to skip such files); ``unaccounted`` marks a file with
    no outcome at all and ``inconsistent`` one with outcomes that no single processing of
    one file gives (listed twice, or read and refused), which only a run whose accounting
    does not close has. ``chunk_index`` lists every chunk record written for the file, one
    :class:`IndexEntry` per record, sorted by (label, chunk_id); empty when none was
    written, and in rows read from an output written before the column existed.
    """

    source_uri: str
    doc_id: str | None
    media_type: str | None
    parser_version: str | None
    content_hash: str | None
    size_bytes: int
    title: str | None
    front_matter: str | None
    warnings: tuple[str, ...]
    pages: int | None
    blocks: int | None
    chunks_by_label: tuple[tuple[str, int], ...]
    status: Status
    errors: tuple[tuple[str, str], ...]
    chunk_index: tuple[IndexEntry, ...] = ()

    def facts(self) -> DocumentFacts | None:
        """The parse facts this row holds (None when the file was never parsed)."""
        if (
            self.doc_id is None
            or self.media_type is None
            or self.parser_version is None
            or self.content_hash is None
            or self.blocks is None
        ):
            return None
        return DocumentFacts(
            doc_id=self.doc_id,
            media_type=self.media_type,
            parser_version=self.parser_version,
            content_hash=self.content_hash,
            title=self.title,
            front_matter=self.front_matter,
            warnings=self.warnings,
            pages=self.pages,
            blocks=self.blocks,
        )
