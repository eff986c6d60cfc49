"""``hybrid-v2``: ``hybrid-v1``'s token-budget chunks, citing only what a chunk holds, never
losing a heading, and with ids that an edit in another section cannot change.

The chunks are made as in ``hybrid-v1`` (whose output stays frozen; its docstring has the
details): the ``hierarchical-v1`` elements, each split at list items, table rows, blank
lines, sentences, whitespace (in that order of preference) until its contextualised form
(heading path, captions, text, one per line) fits the budget, then consecutive pieces with
the same headings and captions merged while they fit. Budget: ``policy.max_tokens`` if set,
else the tokenizer's ``max_tokens``, else ``policy.target_tokens``. What changed, and why:

- **Citations.** A block whose text is assembled from several source elements (a DOCX or
  docling list with a span per item, a docling paragraph joined from several text items)
  gets, for each piece, only the spans of the parts whose text the piece holds, each cut to
  the characters it holds. The parts are located by arithmetic on the spans, never by
  searching: one line per item ending with the item (the layout ``merge_list_items=false``
  already relies on), or the spans' lengths tiling the text with single whitespace
  characters (list lines: a line break and a list marker) between them. When neither layout
  holds, a piece cites the block's spans as in v1. ``hybrid-v1`` cited every item of a list
  from every piece of it. A list is cut before an item's marker, never between the marker
  and the item's text (v1 cut DOCX and docling lists there, ending a piece with ``-``, and
  at small budgets any list, leaving pieces such as ``2.``).
- **Headings are never dropped.** ``heading_path`` and ``captions`` always hold the full
  headings and captions of the element. ``hybrid-v1`` removed from the record itself the
  lines that did not fit the budget, so a heading too long for it was in no field of any
  chunk. Only the text that is counted and embedded may be shortened (see
  :func:`embedded_text`): when the heading path, captions and text of a chunk together
  exceed the budget, the outermost context lines are left out until the rest costs at most
  half the budget, and when even the innermost line alone costs more, it is cut to its
  longest prefix that does (at a word end when one fits, else at a character).
- **Local ids, packing per section.** A chunk that is a slice of its block(s) takes the id
  policy ``policy_hash#c<offset of its start inside its first block's text>``, never a
  document offset, so growing one block changes no id outside the chunks that hold it.
  Pieces never merge across a heading: two sections with the same heading path (two
  ``Examples`` sections under one parent, in a DOCX or docling document) pack separately,
  so an edit cannot move a chunk boundary outside its own section.

``token_estimate`` is the exact count of :meth:`HybridV2Chunker.embed_text` under the
policy's tokenizer, and never exceeds the budget (a single character that alone does not
fit is kept as a chunk with a warning, as in v1). ``iter_chunks`` streams.

Made by the hybrid engine (:mod:`kebab_chunk.chunkers._hybrid`) with :data:`RULES`: the
three changes above are the four fields ``hybrid-v1``'s row has off (``cite_held_parts``,
``cut_lists_before_markers``, ``record_whole_context``, ``ids_local_to_section`` of
:class:`~kebab_chunk.chunkers._hybrid.HybridRules`); v3 and v4 change one field each.
"""

from __future__ import annotations

from kebab_chunk.chunkers._hybrid import HybridChunker, HybridRules

__all__ = ["RULES", "VERSION", "HybridV2Chunker"]

VERSION = "hybrid-v2"

#: A slice never merges with a structured or rendered piece; context lines recorded whole.
RULES = HybridRules(
    cite_held_parts=True,
    cut_lists_before_markers=True,
    record_whole_context=True,
    ids_local_to_section=True,
    merge_mixed_kinds=False,
    bound_context_lines=False,
)


class HybridV2Chunker(HybridChunker):
    """The hybrid engine with :data:`RULES` (no other difference)."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "any document: hierarchical chunks split and merged so that the contextualised "
        "text fits max_tokens of the policy's tokenizer; cites only what a chunk holds"
    )
