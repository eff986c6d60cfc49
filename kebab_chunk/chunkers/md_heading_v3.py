"""``md-heading-v3``: ``md-heading-v2``'s chunks, with an ``embed_text`` that names each
heading once and heading path lines bounded by the budget.

The chunks (boundaries, text, spans, token counts) are exactly ``md-heading-v2``'s (whose
output stays frozen), made by the same engine (:mod:`kebab_chunk.chunkers._md_heading`,
whose docstring has the details); only the label, the ``embed_text`` rule and how long a
heading path line may be differ, as data
(:class:`kebab_chunk.chunkers._md_heading.MdHeadingRules`).

Why ``embed_text``: ``md-heading-v2`` glues a heading with an empty body to the first chunk
of its subsection, so a chunk can open with two headings (``## Examples`` then
``### Measuring``) while its heading path ends with both. The default ``embed_text`` recipe
left out only the innermost heading, and only when the text's first line is it, so those
chunks embedded ``Examples`` and ``Measuring`` twice (539 of 7,216 chunks of one real
documentation folder). Here the heading path lines leave out every heading the text opens
with (the ``"leading"`` rule of :data:`kebab_chunk.chunkers.embedding.HeadingRule`; the
exact rule is in docs/internals/versioning.md).

Why bounded heading paths: ``md-heading-v2`` records every heading of a chunk's path whole
on each chunk of its section (and ``embed_text`` repeats the ones the text does not open
with), so one 20,000-character heading line above 200 paragraphs made output about 30
times the input (docs/internals/decisions.md, "Issue 29.7 (Markdown)"). Here each heading path line
is recorded as ``hybrid-v4`` records its context lines
(:func:`kebab_chunk.chunkers._context.bound_line`: at most half the budget in tokens and
twice it in characters), with one warning per line cut; a heading line inside a chunk's
text is a source slice and is never cut. Where every heading fits the bound (every heading
of the fixtures at the default policy) the chunks are ``md-heading-v2``'s in every field
but ``embed_text``.
"""

from __future__ import annotations

from kebab_chunk.chunkers._md_heading import MdHeadingChunker, MdHeadingRules

__all__ = ["RULES", "VERSION", "MdHeadingV3Chunker"]

VERSION = "md-heading-v3"

#: md-heading-v3's row: md-heading-v2's chunks, the ``"leading"`` heading rule and heading
#: path lines bounded.
RULES = MdHeadingRules(version=VERSION, embed_headings="leading", bound_context_lines=True)


class MdHeadingV3Chunker(MdHeadingChunker):
    """The md-heading engine with :data:`RULES` (no other difference)."""

    accepts_description = (
        "documents whose blocks carry line spans (Markdown, plain text, HTML, CSV); not PDF; "
        "md-heading-v2's chunks, with embed_text naming each heading a chunk opens with once "
        "and each heading path line cut to half the budget"
    )

    def __init__(self) -> None:
        super().__init__(RULES)
