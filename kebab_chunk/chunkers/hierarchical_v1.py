"""``hierarchical-v1``: one chunk per document element, headings and captions as metadata.

Docling's HierarchicalChunker over our CanonicalDocument (docs/internals/decisions.md,
"hierarchical-v1"), on the element walk it shares with ``hybrid-v1`` (``_token_aware``).
Each paragraph, code block, table, list and image/audio reference becomes one chunk whose
text is the block's text and whose spans are the block's; ``heading_path`` is the block's, and an
image or audio reference carries its caption in ``captions``.

``merge_list_items`` (default true) keeps a list as one chunk; when false each item is a
chunk of its own (``is_slice``) located by arithmetic, never by searching the text: by
walking the item strings in order through a list that is a source slice (Markdown), by the
one-span-per-item layout of structured sources (DOCX, docling JSON), or by the list
markers of a rendered list (HTML, whose item chunks can only cite the list's span). A list
whose items cannot be located that way stays whole, with a warning.

Heading blocks produce no chunk: their titles live in the ``heading_path`` of the chunks
below them. The one exception keeps content from vanishing: a heading whose section has no
content at all (it is followed directly by a heading of the same or a higher level, or by
the end) becomes a chunk of its own, with its enclosing headings as ``heading_path``.
Blocks whose text is blank (and that have no caption) produce nothing.

``token_estimate`` is the token count of ``contextualize(chunk)`` under the policy's
tokenizer. ``iter_chunks`` is lazy; ``chunk`` is ``list(iter_chunks(...))``.
"""

from __future__ import annotations

from collections.abc import Iterator

from kebab_chunk.chunkers._token_aware import Element, TokenAwareChunker
from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.tokenizers import get_tokenizer

__all__ = ["HierarchicalV1Chunker"]


class HierarchicalV1Chunker(TokenAwareChunker):
    """The engine of ``hierarchical-v1`` only: one chunk per element, whose
    ``token_estimate`` is counted with the policy's tokenizer."""

    def chunks_of(
        self,
        doc: CanonicalDocument,
        policy: ChunkPolicy,
        elements: Iterator[Element],
        warnings: list[str] | None,
    ) -> Iterator[Chunk]:
        """One chunk per element, built one at a time."""
        count = self.counter(get_tokenizer(policy.tokenizer))
        for position, el in enumerate(elements):
            yield make_chunk(
                doc,
                chunker_version=self.label,
                policy=policy,
                position=position,
                text=el.text,
                block_ids=el.block_ids,
                spans=el.spans,
                heading_path=el.heading_path,
                captions=el.captions,
                is_slice=el.is_slice,
                slice_start=el.origin,
                token_estimate=count(contextualize_parts(el.heading_path, el.captions, el.text)),
            )
