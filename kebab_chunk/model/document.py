"""The parser's output: one document as ordered blocks with provenance."""

from __future__ import annotations

from pydantic import Field, JsonValue

from kebab_chunk.model._base import Frozen
from kebab_chunk.model.blocks import Block

__all__ = ["CanonicalDocument"]


class CanonicalDocument(Frozen):
    """One parsed document.

    ``source_uri`` is the corpus-relative POSIX path; ``content_hash`` is the blake3 of the
    raw bytes; ``warnings`` records every degradation (bad encoding, empty page, ...), so
    nothing is lost silently.
    """

    doc_id: str
    source_uri: str
    media_type: str
    content_hash: str
    parser_version: str
    title: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()
