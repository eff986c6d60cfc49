"""``hybrid-v3``: ``hybrid-v2``, with pieces of different anchor kinds merged in one chunk.

Everything is ``hybrid-v2``'s (whose output stays frozen; its docstring has the details)
but one merge rule: the same engine (:mod:`kebab_chunk.chunkers._hybrid`) with
:attr:`~kebab_chunk.chunkers._hybrid.HybridRules.merge_mixed_kinds` set. ``hybrid-v2``
never merged a source slice with a structured or rendered element, so that an exact chunk
never became inexact. In HTML that kept a block whose text happens to be plain source text
(``<summary>History</summary>``, ``<p>Added in: v0.1.98</p>``) apart from the table or list
rendered after it, and such one-line pieces became chunks on their own: 13.5% of the chunks
of the 244 HTML manuals under ``/usr/share/doc`` were shorter than 25 characters
(``History``), against 1.0% with this rule (docs/internals/decisions.md, "hybrid-v3 merges a slice
with a rendered element").

Here a slice and a non-slice of one section, with the same headings and captions, merge
while they fit, joined by ``"\\n"`` as two non-slices are; the merged chunk is rendered
text citing one span per element, like any merged HTML or DOCX chunk. Two slices still
merge only over a gap the spans pin down, so a Markdown or text chunk of slices stays one
exact source slice. Ids, budgets, counts and citations follow ``hybrid-v2``'s rules.
"""

from __future__ import annotations

from kebab_chunk.chunkers._hybrid import HybridChunker, HybridRules

__all__ = ["RULES", "VERSION", "HybridV3Chunker"]

VERSION = "hybrid-v3"

#: hybrid-v2's row with a slice and a structured or rendered piece merged while they fit.
RULES = HybridRules(
    cite_held_parts=True,
    cut_lists_before_markers=True,
    record_whole_context=True,
    ids_local_to_section=True,
    merge_mixed_kinds=True,
    bound_context_lines=False,
)


class HybridV3Chunker(HybridChunker):
    """The hybrid engine with :data:`RULES` (no other difference)."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "any document: hybrid-v2's chunks, with a plain-text block merged with the table or "
        "list beside it instead of left as a chunk on its own"
    )
