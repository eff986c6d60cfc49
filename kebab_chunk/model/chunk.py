"""The chunk record: what the pipeline writes, one row per chunk."""

from __future__ import annotations

from pydantic import Field

from kebab_chunk.model._base import Frozen
from kebab_chunk.model.spans import SourceSpan

__all__ = ["Chunk"]


class Chunk(Frozen):
    """One retrieval chunk.

    ``chunk_id`` is content-addressed (docs/contract.md, "Identities"); ``content_hash``
    is the blake3 of the source document's raw bytes, so a record alone says which
    document bytes it came from (incremental runs compare it with the current file);
    ``token_estimate`` is stated by the chunker that made the chunk, never guessed
    downstream.
    """

    chunk_id: str
    doc_id: str
    source_uri: str
    chunker_version: str
    policy_hash: str
    parser_version: str
    position: int = Field(ge=0)
    text: str
    heading_path: tuple[str, ...] = ()
    captions: tuple[str, ...] = ()
    block_ids: tuple[str, ...]
    source_spans: tuple[SourceSpan, ...] = Field(min_length=1)
    token_estimate: int = Field(ge=0)
    content_hash: str
