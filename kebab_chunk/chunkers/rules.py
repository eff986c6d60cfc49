"""The rules of each chunking engine: every behavioural difference between the labels one
engine makes, as a frozen value (everything else is the engine's, the same for every label).

A label is a row of the registry (:mod:`kebab_chunk.chunkers.registry`): a name, an engine
and one of these values. A new label is a new row, usually ``replace(older.rules, ...)``
with the one field it changes; a new behaviour is a new field here, defaulting nowhere, and
one branch in the engine. This module holds data only, so listing labels imports no engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from kebab_chunk.chunkers.embedding import HeadingRule

__all__ = ["HeaderCharsRules", "HybridRules", "MdHeadingRules", "PageRules", "Rules"]


@dataclass(frozen=True, slots=True)
class HybridRules:
    """What distinguishes the ``hybrid-*`` labels (:mod:`kebab_chunk.chunkers._hybrid`)."""

    #: True (hybrid-v2 on): a piece of a block assembled from several source elements (a
    #: DOCX or docling list with a span per item, a docling paragraph joined from several
    #: text items) cites only the parts whose text it holds, each cut to the characters it
    #: holds (``_hybrid.part_ranges``). False (hybrid-v1): every piece cites the block's spans.
    cite_held_parts: bool
    #: True (hybrid-v2 on): a list is cut before an item's marker, never between the marker
    #: and the item's text. False (hybrid-v1): at any cut of the list's levels, so a piece
    #: may end with a bare marker (``-``, ``2.``).
    cut_lists_before_markers: bool
    #: True (hybrid-v2 on): ``heading_path`` and ``captions`` hold every heading and
    #: caption of the element, and only the text counted and embedded is shortened
    #: (``_hybrid.trim_context``, ``_hybrid.embedded_text``). False (hybrid-v1): the
    #: outermost lines of a split element's context are left out of the record itself,
    #: whole, until the rest costs at most half the budget (all of them when the innermost
    #: alone costs more).
    record_whole_context: bool
    #: True (hybrid-v2 on): a slice's id uses the offset of its start inside its first
    #: block's text, and pieces never merge across a heading (two sections with the same
    #: heading path pack apart), so an edit changes no id outside its own section. False
    #: (hybrid-v1): the offset in the document, and peers merge across sections.
    ids_local_to_section: bool
    #: True (hybrid-v3 on): a source slice and a structured or rendered piece of one
    #: section, with the same headings and captions, merge while they fit, joined by
    #: ``"\n"``. False (hybrid-v1, v2): they stay apart, so an exact chunk never becomes inexact.
    merge_mixed_kinds: bool
    #: True (hybrid-v4 on): each heading-path and caption line a chunk records (a repeated
    #: table header included) is cut by :func:`~kebab_chunk.chunkers._context.bound_line`,
    #: so the context repeated on every chunk of an element is bounded by the budget, not by
    #: the input. False (hybrid-v1 to v3): the lines are recorded whole.
    bound_context_lines: bool


@dataclass(frozen=True, slots=True)
class MdHeadingRules:
    """What distinguishes the ``md-heading-*`` labels of :mod:`kebab_chunk.chunkers._md_heading`
    (``md-heading-v1`` has an engine of its own)."""

    #: Which heading path lines the chunk's ``embed_text`` leaves out because its text
    #: already holds them (:data:`kebab_chunk.chunkers.embedding.HeadingRule`).
    embed_headings: HeadingRule
    #: Each ``heading_path`` line a chunk records is cut by
    #: :func:`kebab_chunk.chunkers._context.bound_line` (at most half the budget), with one
    #: warning per line cut, so the headings repeated on every chunk of a section are bounded
    #: by the budget, not by the input (md-heading-v3; v2 records them whole). Chunk text is
    #: never cut for it: a heading line in the text is a source slice.
    bound_context_lines: bool


@dataclass(frozen=True, slots=True)
class PageRules:
    """What distinguishes the ``pdf-page-*`` labels of :mod:`kebab_chunk.chunkers._pages`
    (``pdf-page-v1`` has an engine of its own)."""

    #: No cut falls after a line's leading list marker (``4.``, ``b)``, ``iv.``, ``(2)``,
    #: ``•``, ``-`` ...) and before the first word of its item; a cut before the marker, at
    #: the line break, stays allowed, and overlap starts obey it too (pdf-page-v3;
    #: pdf-page-v2 took the space after ``4.`` for a sentence end).
    glue_list_markers: bool


@dataclass(frozen=True, slots=True)
class HeaderCharsRules:
    """What distinguishes the ``md-header-chars-*`` labels
    (:mod:`kebab_chunk.chunkers._header_chars`)."""

    #: How the text between two consecutive blocks of a section is written. True: only as
    #: the gap their spans pin down (nothing on one line, or ``k`` line breaks of the
    #: document's one line-break style, :func:`kebab_chunk.chunkers._separators.join_gap`),
    #: and a gap they cannot pin down (a thematic break, link definitions, trailing spaces,
    #: mixed line breaks) ends a run, so every chunk text is the exact source slice its spans
    #: cite (md-header-chars-v2). False: one ``"\n"`` per line break between them (at least
    #: one, never more than the characters between them), so a section is one run and CRLF,
    #: trailing blanks, thematic breaks and link definitions between blocks become ``"\n"``
    #: (md-header-chars-v1).
    exact_slices: bool
    #: The document's title (a front matter ``title``, else its first level-1 heading) is
    #: the root of every chunk's ``heading_path`` until a level-1 heading replaces it, as
    #: static-site pages (Hugo, Jekyll, MkDocs, Docusaurus) render the front matter title
    #: as the page's level-1 heading (md-header-chars-v3). Off, a page without a level-1
    #: heading gives its chunks no page-level context (md-header-chars-v1, v2).
    title_root: bool


#: The rules of any engine; ``None`` in a registry row is an engine with one label only.
Rules = HybridRules | MdHeadingRules | PageRules | HeaderCharsRules
