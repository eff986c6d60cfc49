"""``md-header-chars-v2``: header sections cut to a character budget, every chunk an exact slice.

The same LangChain-style strategy as ``md-header-chars-v1`` (whose output stays frozen):
split on Markdown headers, then split long sections recursively by characters, on our
parser's blocks. What changed, and why:

- **Chunk text is the exact source slice.** A chunk's text is
  ``source[first_span.char_start:last_span.char_end]`` for every document it accepts:
  Markdown and plain text, LF, CRLF or CR. v1 joined a section's blocks with one ``"\\n"``
  per line break, so CRLF between blocks, trailing blanks, thematic breaks and link
  reference definitions (which are no blocks) silently became ``"\\n"``: its text was not
  what its spans cite. v2 joins two blocks only by the gap their spans pin down (no
  characters on the same line, or ``k`` line breaks of the document's one line-break
  style, see ``_separators.join_gap``), and counts those characters against the budget.
- **A gap the spans cannot pin down ends a run.** A chunker sees blocks, not the text
  between them; where that text is unknown (a thematic break, link definitions, trailing
  spaces after a block, mixed line breaks), v2 never invents it: the blocks on either side
  go to different chunks, and the unknown text is in none (in v1 it was in none either).
  A section is therefore one or more *runs* of blocks, each one exact slice; a section
  that fits the budget and has one run is one chunk, as in v1.
- **The one assumption.** A line break between blocks is one of the document's line-break
  style, read from the blocks that contain line breaks; when no block contains one, LF is
  assumed (as ``md-heading-v2`` does). A lone CR is as long as an LF, so a document whose
  blocks are separated by lone CRs (classic Mac OS line ends) while no block shows a line
  break of its own is the one case where a gap is written as LF and the text is not the
  exact slice.

Everything else is v1's contract:

- **Sections.** Every heading (levels 1–6) opens a new section; the blocks before the
  first heading form a headerless section. ``headers`` of a section is the stack of
  enclosing headings ``(level, title)``, outermost first, ending with its own heading. A
  heading's own source line is the first text of its section (LangChain's
  ``strip_headers=False``).
- **Budget.** ``max_chars`` / ``overlap_chars`` come from the policy (``char_budget``). A
  run that fits is one chunk. A longer run is split between blocks, and any piece still too
  long is split at the next level: blank lines, line breaks, whitespace, and finally hard
  every ``max_chars`` characters (code blocks and tables too: no chunk is ever longer than
  ``max_chars``). Consecutive pieces of one level merge greedily up to ``max_chars``, and a
  new chunk repeats the trailing pieces of the previous one that fit in ``overlap_chars``
  (hard cuts overlap by exactly ``overlap_chars``). Overlap never crosses a heading or an
  unknown gap. Every chunk of a section that gives more than one chunk has
  ``recursive_chunk`` set.
- **Records.** A chunk lists one span per block it touches (the exact piece of that
  block), the ids of those blocks in order, and uses the slice guard
  (``policy_hash#c<char_start>`` of its first span) in its id when any piece is less than
  its whole block.

Offsets are computed from the block spans while cutting, never found by searching.

Made by the md-header-chars engine (``_header_chars.py``) with :data:`RULES`; the change
from v1 is one field of it (``exact_slices``), not a copied module.
"""

from __future__ import annotations

from kebab_chunk.chunkers._header_chars import HeaderCharsChunker, HeaderCharsRules

__all__ = [
    "RULES",
    "VERSION",
    "MdHeaderCharsV2Chunker",
    "plan_chunks",
    "records_from_plan",
]

VERSION = "md-header-chars-v2"

#: Blocks joined only by the gaps their spans pin down; an unknown gap ends a run.
RULES = HeaderCharsRules(exact_slices=True)


class MdHeaderCharsV2Chunker(HeaderCharsChunker):
    """Header sections with a character budget, exact slices; see the module docstring."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "Markdown or plain-text documents (every block one lines span); budget in characters: "
        "target_tokens x 3, or x 1 with tokenizer 'chars'; chunk text is the exact source slice"
    )


#: The chunks of a document before they become records (``MarkdownChunker`` reads them).
plan_chunks = MdHeaderCharsV2Chunker.plan_chunks
#: Planned chunks as this label's records.
records_from_plan = MdHeaderCharsV2Chunker.records_from_plan
