"""Data model and identity recipes (docs/internals/contract.md, "Data model" and "Identities")."""

from kebab_chunk.model.blocks import (
    BLOCK_ADAPTER,
    AudioRefBlock,
    Block,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
)
from kebab_chunk.model.chunk import Chunk
from kebab_chunk.model.document import CanonicalDocument
from kebab_chunk.model.policy import ChunkPolicy, make_policy
from kebab_chunk.model.spans import SPAN_ADAPTER, ElementSpan, LineSpan, PageSpan, SourceSpan

__all__ = [
    "BLOCK_ADAPTER",
    "SPAN_ADAPTER",
    "AudioRefBlock",
    "Block",
    "CanonicalDocument",
    "Chunk",
    "ChunkPolicy",
    "CodeBlock",
    "ElementSpan",
    "HeadingBlock",
    "ImageRefBlock",
    "LineSpan",
    "ListBlock",
    "PageSpan",
    "ParagraphBlock",
    "SourceSpan",
    "TableBlock",
    "make_policy",
]
