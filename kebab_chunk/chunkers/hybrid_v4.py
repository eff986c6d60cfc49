"""``hybrid-v4``: ``hybrid-v3``, with the heading and caption lines a chunk records bounded.

Everything is ``hybrid-v3``'s (whose output stays frozen) but what ``heading_path`` and
``captions`` hold: the same engine (:mod:`kebab_chunk.chunkers._hybrid`) with
:attr:`~kebab_chunk.chunkers._hybrid.HybridRules.bound_context_lines` set too. ``hybrid-v2``
and ``v3`` record every heading and caption of an element whole on each of its chunks, and a
split table repeats its header row as a caption on every continuation: a CSV whose header
row is 1.09 MB long made 1,811 chunks that each carried it, 1.97 G characters from a 1.39 MB
file (docs/internals/decisions.md, "Issue 29.7"). Here each such line is recorded cut to its longest
prefix that costs at most half the budget under the policy's tokenizer and holds at most
twice the budget in characters (:func:`~kebab_chunk.chunkers._context.bound_line`; at a
word end when one fits), with one document warning per line cut, so the context a chunk
repeats is bounded by the budget and a document's chunks stay proportional to its size.
Lines within the bound (every heading and caption of the fixtures at the default policy)
are recorded whole, as in ``v3``; ``embed_text`` and ``token_estimate`` follow from the
recorded lines by ``v2``'s rules.
"""

from __future__ import annotations

from kebab_chunk.chunkers._hybrid import HybridChunker, HybridRules

__all__ = ["RULES", "VERSION", "HybridV4Chunker"]

VERSION = "hybrid-v4"

#: hybrid-v3's row with each recorded heading and caption line bounded.
RULES = HybridRules(
    cite_held_parts=True,
    cut_lists_before_markers=True,
    record_whole_context=True,
    ids_local_to_section=True,
    merge_mixed_kinds=True,
    bound_context_lines=True,
)


class HybridV4Chunker(HybridChunker):
    """The hybrid engine with :data:`RULES` (no other difference)."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "any document: hybrid-v3's chunks, with each heading and caption line a chunk "
        "records (a repeated table header too) cut to half the budget"
    )
