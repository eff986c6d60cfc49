"""``pdf-page-v2``: page-bounded chunks with exact page citations, cut at clean boundaries,
counted with the policy's tokenizer, never over the budget.

What changed from ``pdf-page-v1`` (whose output stays frozen) and why:

- **Cuts and overlap at clean boundaries.** v1 cut a chunk's *core* at sentence ends but
  started each following chunk a fixed number of characters before its core, so the
  overlap began inside a word (``'h information is often…'``) in most follow-on chunks of
  real PDFs. v2 cuts a page with :func:`kebab_chunk.chunkers._token_split.split_pieces`:
  block starts first, then blank lines, sentence ends, line breaks, whitespace; a cut
  inside a word happens only for a single word longer than the whole budget. The overlap
  repeats the longest tail of the previous chunk that starts at such a boundary (whole
  sentences when they fit) and costs at most ``overlap_tokens``.
- **Nothing over the budget, exact counts.** v1 sized the core alone, so a chunk with its
  overlap exceeded the target by up to the overlap. v2 measures every chunk whole, overlap
  included, with the policy's tokenizer (any tokenizer); ``token_estimate`` is that exact
  count of ``text``, at most the budget except for one character that alone exceeds it.
- **Local ids.** A chunk that is one of several pieces of a run takes the id policy
  ``policy_hash#c<offset of its start inside its first block>``, never an offset that
  depends on text before the block.
- **Whitespace at the cuts is left out.** A chunk starts and ends with a non-whitespace
  character (the blanks between two chunks belong to neither); a whitespace-only page gives
  no chunk.

The contract every label of the pdf-page engine shares (input, runs of touching blocks,
headings glued to the text below them, exactness, budget) is in
:mod:`kebab_chunk.chunkers._pages`; this label is that engine with :data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.chunkers._pages import PageChunker, PageRules

__all__ = ["RULES", "PdfPageV2Chunker"]

#: pdf-page-v2's row: list markers are not glued (a cut may fall after ``4.``).
RULES = PageRules(version="pdf-page-v2", glue_list_markers=False)


class PdfPageV2Chunker(PageChunker):
    """The pdf-page engine with :data:`RULES` (no other difference)."""

    def __init__(self) -> None:
        super().__init__(RULES)
