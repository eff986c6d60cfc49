"""The chunk record: what the pipeline writes, one row per chunk."""

from __future__ import annotations

from pydantic import Field

from kebab_chunk.model._base import Frozen
from kebab_chunk.model.spans import SourceSpan

__all__ = ["Chunk"]


class Chunk(Frozen):
    """One retrieval chunk.

    ``chunk_id`` is content-addressed (docs/internals/contract.md, "Identities"); ``content_hash``
    is the blake3 of the source document's raw bytes, so a record alone says which
    document bytes it came from (incremental runs compare it with the current file);
    ``token_estimate`` is stated by the chunker that made the chunk, never guessed
    downstream.

    ``embed_text`` (the text to embed: the heading path and captions the text lacks, then
    the text; docs/internals/contract.md, "The text to embed") and ``embed_tokens`` (its token count
    under the run's tokenizer) are filled in by the pipeline, not by chunkers
    (:func:`kebab_chunk.chunkers.embedding.with_embedding`), so what a label's chunker
    returns stays what it was; a chunker leaves them None, a written record never does.
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
    embed_text: str | None = None
    embed_tokens: int | None = Field(default=None, ge=0)

