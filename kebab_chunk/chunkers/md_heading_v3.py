"""``md-heading-v3``: ``md-heading-v2``'s chunks, with an ``embed_text`` that names each
heading once.

The chunks (boundaries, text, spans, heading paths, token counts) are exactly
``md-heading-v2``'s, made by the same engine (whose output stays frozen; its docstring has
the details); only the label and the ``embed_text`` rule differ, as data
(:class:`kebab_chunk.chunkers.md_heading_v2.MdHeadingRules`).

Why: ``md-heading-v2`` glues a heading with an empty body to the first chunk of its
subsection, so a chunk can open with two headings (``## Examples`` then ``### Measuring``)
while its heading path ends with both. The default ``embed_text`` recipe left out only the
innermost heading, and only when the text's first line is it, so those chunks embedded
``Examples`` and ``Measuring`` twice (539 of 7,216 chunks of one real documentation folder).
Here the heading path lines leave out every heading the text opens with (the
``"leading"`` rule of :data:`kebab_chunk.chunkers.embedding.HeadingRule`; the exact rule is
in docs/versioning.md).
"""

from __future__ import annotations

from kebab_chunk.chunkers.md_heading_v2 import MdHeadingRules, MdHeadingV2Chunker

__all__ = ["RULES", "MdHeadingV3Chunker"]

RULES = MdHeadingRules(version="md-heading-v3", embed_headings="leading")


class MdHeadingV3Chunker(MdHeadingV2Chunker):
    """The md-heading engine with :data:`RULES` (no other difference)."""

    accepts_description = (
        "documents whose blocks carry line spans (Markdown, plain text, HTML, CSV); not PDF; "
        "md-heading-v2's chunks, with embed_text naming each heading a chunk opens with once"
    )

    def __init__(self) -> None:
        super().__init__(RULES)
