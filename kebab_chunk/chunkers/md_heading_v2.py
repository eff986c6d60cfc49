"""``md-heading-v2``: heading-aware chunking that keeps headings with their content, cuts at
word or sentence boundaries, counts with the policy's tokenizer and keeps ids local.

What changed from ``md-heading-v1`` (whose output stays frozen) and why:

- **No heading-only chunks.** A *section* is a run of consecutive headings plus the blocks
  below them up to the next heading. The headings of a section are glued to its first
  content: no cut is allowed between the first heading and the first word of the content,
  so a heading whose own body is empty (directly followed by a sub-heading) travels, line
  and all, into the first chunk of its subsection. A document that is only headings gives
  chunks of those headings together.
- **Cuts and overlap at clean boundaries, exact token counts.** A section is one exact
  source slice (its blocks joined by the line breaks their spans pin down) and is cut by
  :func:`kebab_chunk.chunkers._token_split.split_pieces`: whole blocks first, then blank
  lines, sentence ends, line breaks, whitespace; a cut inside a word happens only for a
  single word longer than the whole budget. Overlap repeats the longest tail of the previous
  piece that starts at such a boundary, and the piece that carries it is measured whole, so
  overlap never pushes a chunk over the budget. Sizes are counted with the policy's
  tokenizer (any tokenizer), and ``token_estimate`` is that exact count of ``text``. Code
  and tables over the budget are cut too (at line breaks first): nothing exceeds the budget.
- **Local ids.** Packing restarts at every section, so an edit cannot move a chunk boundary
  outside its own section; a chunk that is a slice of its block(s) takes the id policy
  ``policy_hash#c<offset of its start inside its first block>``, never a document-absolute
  offset, so growing one section leaves the ids of every other section unchanged.
- **merge_peers.** With ``merge_peers=False`` every block is its own chunk (the headings
  above it glued to it), so inserting or deleting a paragraph changes no other chunk's id
  at the cost of smaller chunks.

Unknown gaps, opaque blocks and media end a run as in v1. The contract every label of the
md-heading engine shares (sections, cuts, exactness, budget) is in
:mod:`kebab_chunk.chunkers._md_heading`; this label is that engine with :data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.chunkers._md_heading import MdHeadingChunker, MdHeadingRules

__all__ = ["RULES", "VERSION", "MdHeadingV2Chunker"]

VERSION = "md-heading-v2"

#: md-heading-v2's row: the default recipe's ``"first-line"`` heading rule, heading path
#: lines recorded whole.
RULES = MdHeadingRules(version=VERSION, embed_headings="first-line", bound_context_lines=False)


class MdHeadingV2Chunker(MdHeadingChunker):
    """The md-heading engine with :data:`RULES` (no other difference)."""

    def __init__(self) -> None:
        super().__init__(RULES)
