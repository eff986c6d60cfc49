"""``hybrid-v1``: hierarchical chunks refined to a hard token budget (docling's HybridChunker).

Budget: ``policy.max_tokens`` if set (the user's value wins, above or below the model's),
else the tokenizer's ``max_tokens`` (MiniLM: 256), else ``policy.target_tokens``. Tokens
are counted with ``policy.tokenizer`` on the *contextualised* form (``contextualize``:
heading path, captions, text), and every chunk satisfies
``count_tokens(contextualize(chunk)) <= budget``; ``token_estimate`` is exactly that count.

1. Start from the ``hierarchical-v1`` elements (``_token_aware.iter_elements``, same
   ``merge_list_items``).
2. Split every element whose contextualised form exceeds the budget into pieces that are
   exact slices of it (``is_slice``; exact sub-spans when the element's text is the source
   slice of its span), cutting at list items or table rows first, then blank lines,
   sentences/lines, whitespace, and as a last resort anywhere. A table is cut between rows,
   and the pieces after the first carry the table's header line(s) in ``captions``, so the
   header is repeated in their contextualised form. ``overlap_tokens`` (capped at half the
   budget; not for tables) makes each piece start with the tail of the previous one.
   When an element must be split but its headings and captions take more than half the
   budget, the outermost lines are dropped until they fit in half, and a warning is
   recorded: the content itself is never dropped.
3. With ``merge_peers`` (default true), merge consecutive pieces of different elements
   that share ``heading_path`` and ``captions`` while the merged contextualised form fits
   (decided on an estimate from the parts' counts, then counted exactly). Pieces of source
   slices (Markdown, text, CSV, PDF pages) join only when the source between them is known
   from the spans (see ``_separators.join_gap``), so the merged text is one exact source
   slice; otherwise they stay apart. Structured sources (DOCX, docling JSON) and rendered text
   (HTML) have no source text between elements: their pieces are joined with ``"\\n"`` and
   keep one span per element. A source slice is never merged with anything else.

The only way a chunk can exceed the budget is a single character that alone does not fit
(a budget of a few tokens); it is emitted with a warning rather than dropped.

Counting (speed only, never output): where the tokenizer proves that counts add up over a
cut (``tokenizers.base.cut_rule``), a contextualised text is counted as its section's
prefix (each line counted once) plus the text, and a merged chunk's exact count is derived
from its parts' (plus, when the cut before the gap is not proven, the short tail of the left
part after its last proven cut, counted with and without the gap) instead of counting the
whole merged text again. Merge decisions use the same estimate either way.

``iter_chunks`` streams: one element and one group of peers are held at a time.

Made by the hybrid engine (:mod:`kebab_chunk.chunkers._hybrid`) with :data:`RULES`, every
rule off: what the later labels change are fields of
:class:`~kebab_chunk.chunkers._hybrid.HybridRules` (``hybrid-v2`` four, v3 and v4 one each).
"""

from __future__ import annotations

from kebab_chunk.chunkers._hybrid import HybridChunker, HybridRules

__all__ = ["RULES", "VERSION", "HybridV1Chunker"]

VERSION = "hybrid-v1"

#: Block spans cited whole, lists cut anywhere, context lines dropped from the record when
#: they cost more than half the budget, document offsets in ids, peers merged across
#: sections, a slice never merged with anything else, context lines recorded as they are.
RULES = HybridRules(
    cite_held_parts=False,
    cut_lists_before_markers=False,
    record_whole_context=False,
    ids_local_to_section=False,
    merge_mixed_kinds=False,
    bound_context_lines=False,
)


class HybridV1Chunker(HybridChunker):
    """The hybrid engine with :data:`RULES` (no other difference)."""

    version = VERSION
    rules = RULES
    accepts_description = (
        "any document: hierarchical chunks split and merged so that the contextualised "
        "text fits max_tokens of the policy's tokenizer"
    )
