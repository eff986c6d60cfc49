"""``md-header-chars-v1``: header sections cut to a character budget (docs/internals/decisions.md).

This is the LangChain-style "split on Markdown headers, then split long sections
recursively by characters" strategy, built on our parser's blocks so every piece keeps an
exact source location. For a document whose blocks all carry one ``lines`` span:

- **Sections.** Every heading (levels 1–6) opens a new section; the blocks before the
  first heading form a headerless section. ``headers`` of a section is the stack of
  enclosing headings ``(level, title)``, outermost first, ending with its own heading.
  A heading's own source line is kept as the first text of its section (LangChain's
  ``strip_headers=False``), so the chunk text reads as written and the spans stay simple.
- **Section text.** A section reads as its blocks' texts (exact source slices) joined
  by the line breaks between them, written as one ``"\\n"`` per source line break. When
  only LF line breaks separate the blocks this *is* the source slice; otherwise the gap
  (CRLF, trailing blanks, a thematic break or link definition, which are not blocks) is
  normalised that way. It is never longer than the source slice.
- **Budget.** ``max_chars`` / ``overlap_chars`` come from the policy (:func:`char_budget`).
  A section that fits is one chunk. A longer section is split between blocks, and any
  piece still too long is split at the next level: blank lines, line breaks, whitespace,
  and finally hard every ``max_chars`` characters (so code blocks and tables are cut
  too: no chunk is ever longer than ``max_chars``). Consecutive pieces of one
  level merge greedily up to ``max_chars``, and a new chunk repeats the trailing pieces
  of the previous one that fit in ``overlap_chars`` (hard cuts overlap by exactly
  ``overlap_chars``). Overlap never crosses a heading. Every chunk of a split section
  has ``recursive_chunk`` set.
- **Records.** A chunk lists one span per block it touches (the exact piece of that
  block), the ids of those blocks in order, and uses the slice guard in its id when any
  piece is less than its whole block.

Offsets are computed from the block spans while cutting, never found by searching.

Made by the md-header-chars engine (``_header_chars.py``) with :data:`RULES`: the one
difference from the other labels of the family is data (:class:`HeaderCharsRules`).
"""

from __future__ import annotations

from kebab_chunk.chunkers._header_chars import (
    CHARS_TOKENIZER,
    BlockPart,
    Header,
    HeaderCharsChunker,
    HeaderCharsRules,
    PlannedChunk,
    char_budget,
)

__all__ = [
    "CHARS_TOKENIZER",
    "RULES",
    "VERSION",
    "BlockPart",
    "Header",
    "MdHeaderCharsV1Chunker",
    "PlannedChunk",
    "char_budget",
    "plan_chunks",
    "records_from_plan",
]

VERSION = "md-header-chars-v1"

#: One ``"\n"`` per line break between blocks, whatever the source holds there.
RULES = HeaderCharsRules(exact_slices=False)


class MdHeaderCharsV1Chunker(HeaderCharsChunker):
    """Header sections with a character budget; see the module docstring for the contract."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "Markdown or plain-text documents (every block one lines span); budget in characters: "
        "target_tokens x 3, or x 1 with tokenizer 'chars'"
    )


#: The chunks of a document before they become records (``MarkdownChunker`` reads them).
plan_chunks = MdHeaderCharsV1Chunker.plan_chunks
#: Planned chunks as this label's records.
records_from_plan = MdHeaderCharsV1Chunker.records_from_plan
