"""The chunker protocol and the one place a ``Chunk`` record is assembled.

A chunker is a pure function of ``(CanonicalDocument, ChunkPolicy)``: no I/O, no Beam, no
parser imports. Building records through :func:`make_chunk` keeps the id recipe, the token
estimate and the copied document fields identical across chunkers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, SourceSpan
from kebab_chunk.model.ids import chunk_id, slice_id_policy
from kebab_chunk.tokenizers import estimate_tokens

__all__ = ["Chunker", "make_chunk"]


@runtime_checkable
class Chunker(Protocol):
    """What the registry hands out for a version label."""

    #: The immutable version label, e.g. ``md-heading-v1``.
    version: str
    #: One line saying which documents the chunker accepts (shown by ``kebab-chunk chunkers``).
    accepts_description: str

    def accepts(self, doc: CanonicalDocument) -> bool:
        """Whether ``chunk(doc, ...)`` is within this chunker's contract."""
        ...

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in document order (``position`` 0, 1, ...)."""
        ...


def make_chunk(
    doc: CanonicalDocument,
    *,
    chunker_version: str,
    policy: ChunkPolicy,
    position: int,
    text: str,
    block_ids: Sequence[str],
    spans: Sequence[SourceSpan],
    heading_path: Sequence[str] = (),
    captions: Sequence[str] = (),
    is_slice: bool = False,
    slice_start: int | None = None,
    token_estimate: int | None = None,
) -> Chunk:
    """Assemble one record with its content-addressed id.

    ``is_slice`` marks a chunk that is one of several slices of the same block(s); its id
    then uses ``f"{policy_hash}#c{char_start}"`` of its first span (DESIGN §3) so sibling
    slices never collide. ``slice_start`` overrides that offset where the first span cannot
    tell siblings apart (e.g. pieces of rendered text that all cite their block's whole
    span: there the offset inside the block's text names the slice). ``token_estimate``
    defaults to the byte proxy of ``text``.
    """
    plain = policy.policy_hash
    start = spans[0].char_start if slice_start is None else slice_start
    id_policy = slice_id_policy(plain, start) if is_slice else plain
    return Chunk(
        chunk_id=chunk_id(doc.doc_id, chunker_version, block_ids, id_policy),
        doc_id=doc.doc_id,
        source_uri=doc.source_uri,
        chunker_version=chunker_version,
        policy_hash=plain,
        parser_version=doc.parser_version,
        position=position,
        text=text,
        heading_path=tuple(heading_path),
        captions=tuple(captions),
        block_ids=tuple(block_ids),
        source_spans=tuple(spans),
        token_estimate=estimate_tokens(text) if token_estimate is None else token_estimate,
        content_hash=doc.content_hash,
    )
