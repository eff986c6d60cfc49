"""The labels: one table, one row per immutable version label.

A row (:class:`~kebab_chunk.chunkers.base.Label`) names the engine that makes the label, the
engine's frozen rules for it (:mod:`kebab_chunk.chunkers.rules`), the documents it accepts,
the tokenizers that shape it and a one-line summary. A new label is a new row, usually
``replace(older.rules, field=...)``; a label, once registered, is never removed or
repointed at code with different output (docs/internals/versioning.md). Engines are import paths, so
listing labels imports no engine and a worker loads only the engines it runs. What each
label changed against the one before it, and why, is in docs/internals/label-changes.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain

from kebab_chunk.chunkers.base import Chunker, Label
from kebab_chunk.chunkers.rules import HeaderCharsRules, HybridRules, MdHeadingRules, PageRules
from kebab_chunk.errors import UnknownChunkerError, UsageError
from kebab_chunk.tokenizers import DEFAULT_TOKENIZER

__all__ = [
    "DEFAULT_LABELS_BY_MEDIA_TYPE",
    "LABELS",
    "check_tokenizer_use",
    "get_chunker",
    "label",
    "registered_labels",
]

_LINES = "documents whose blocks carry line spans (Markdown, plain text, HTML, CSV; not PDF)"
_MARKDOWN = "Markdown or plain-text documents (every block one lines span)"
_PDF = (
    "PDF documents (every block a paragraph or heading with one page span, as the pdf-text "
    "parsers make)"
)
_ANY = "any document"
_BYTE_PROXY = frozenset({"bytes-3"})

_MD_HEADING_V2 = MdHeadingRules(embed_headings="first-line", bound_context_lines=False)
_HEADER_CHARS_V1 = HeaderCharsRules(exact_slices=False, title_root=False)
_PDF_PAGE_V2 = PageRules(glue_list_markers=False)
_HYBRID_V1 = HybridRules(
    cite_held_parts=False,
    cut_lists_before_markers=False,
    record_whole_context=False,
    ids_local_to_section=False,
    merge_mixed_kinds=False,
    bound_context_lines=False,
)
_HYBRID_V2 = replace(
    _HYBRID_V1,
    cite_held_parts=True,
    cut_lists_before_markers=True,
    record_whole_context=True,
    ids_local_to_section=True,
)
_HYBRID_V3 = replace(_HYBRID_V2, merge_mixed_kinds=True)

#: Every registered label, in the order ``kebab-chunk labels`` groups them.
LABELS: tuple[Label, ...] = (
    Label(
        "md-heading-v1",
        "kebab_chunk.chunkers.md_heading_v1:MdHeadingV1Chunker",
        None,
        _LINES,
        _BYTE_PROXY,
        "heading boundaries first, code never split, tables whole below twice the target, "
        "sized by the byte proxy; text is the exact source slice (an image or audio chunk's "
        "text is its alt text and caption)",
    ),
    Label(
        "md-heading-v2",
        "kebab_chunk.chunkers._md_heading:MdHeadingChunker",
        _MD_HEADING_V2,
        _LINES,
        None,
        "as md-heading-v1, but a heading always travels with the content below it, cuts and "
        "overlap fall on word or sentence boundaries, sizes are exact under any tokenizer and "
        "never over budget, and slice ids are local to their section",
    ),
    Label(
        "md-heading-v3",
        "kebab_chunk.chunkers._md_heading:MdHeadingChunker",
        replace(_MD_HEADING_V2, embed_headings="leading", bound_context_lines=True),
        _LINES,
        None,
        "md-heading-v2's chunks; embed_text names each heading a chunk opens with once, and "
        "each heading path line is cut to half the budget (with a warning)",
    ),
    Label(
        "md-header-chars-v1",
        "kebab_chunk.chunkers._header_chars:HeaderCharsChunker",
        _HEADER_CHARS_V1,
        _MARKDOWN,
        frozenset({"bytes-3", "chars"}),
        "LangChain-style header sections cut to a budget in characters (target_tokens x 3, or "
        "x 1 with tokenizer 'chars'); also the MarkdownChunker API",
    ),
    Label(
        "md-header-chars-v2",
        "kebab_chunk.chunkers._header_chars:HeaderCharsChunker",
        replace(_HEADER_CHARS_V1, exact_slices=True),
        _MARKDOWN,
        frozenset({"bytes-3", "chars"}),
        "as md-header-chars-v1, but every chunk's text is the exact source slice",
    ),
    Label(
        "md-header-chars-v3",
        "kebab_chunk.chunkers._header_chars:HeaderCharsChunker",
        replace(_HEADER_CHARS_V1, exact_slices=True, title_root=True),
        _MARKDOWN,
        frozenset({"bytes-3", "chars"}),
        "as md-header-chars-v2, but the document's title (front matter, else first level-1 "
        "heading) roots each heading path until a level-1 heading replaces it",
    ),
    Label(
        "pdf-page-v1",
        "kebab_chunk.chunkers.pdf_page_v1:PdfPageV1Chunker",
        None,
        "PDF documents (every block a paragraph with one page span, as pdf-text-v1 makes)",
        _BYTE_PROXY,
        "never crosses a page; long pages split at paragraphs and sentences with overlap, "
        "sized by the byte proxy; page_text[char_start:char_end] == text",
    ),
    Label(
        "pdf-page-v2",
        "kebab_chunk.chunkers._pages:PageChunker",
        _PDF_PAGE_V2,
        _PDF,
        None,
        "as pdf-page-v1, but cuts and overlap on word or sentence boundaries, never over "
        "budget, exact counts under any tokenizer, block-local slice ids; takes pdf-text-v2's "
        "outline headings",
    ),
    Label(
        "pdf-page-v3",
        "kebab_chunk.chunkers._pages:PageChunker",
        replace(_PDF_PAGE_V2, glue_list_markers=True),
        _PDF,
        None,
        "as pdf-page-v2, but never cuts between a line's list marker and its item",
    ),
    Label(
        "hierarchical-v1",
        "kebab_chunk.chunkers.hierarchical_v1:HierarchicalV1Chunker",
        None,
        _ANY,
        None,
        "docling-style: one chunk per element (paragraph, list or list item, table, code, "
        "media reference) with heading path and captions as metadata",
    ),
    Label(
        "hybrid-v1",
        "kebab_chunk.chunkers._hybrid:HybridChunker",
        _HYBRID_V1,
        _ANY,
        None,
        "hierarchical chunks split and merged with their peers so that the contextualised "
        "text fits max_tokens of the policy's tokenizer",
    ),
    Label(
        "hybrid-v2",
        "kebab_chunk.chunkers._hybrid:HybridChunker",
        _HYBRID_V2,
        _ANY,
        None,
        "as hybrid-v1, but a piece cites only the elements it holds, heading_path keeps every "
        "heading (only the embedded context is shortened), slice ids are local to a section "
        "and nothing merges across a heading",
    ),
    Label(
        "hybrid-v3",
        "kebab_chunk.chunkers._hybrid:HybridChunker",
        _HYBRID_V3,
        _ANY,
        None,
        "as hybrid-v2, but a plain-text block merges with the table or list beside it "
        "instead of standing as a one-line chunk",
    ),
    Label(
        "hybrid-v4",
        "kebab_chunk.chunkers._hybrid:HybridChunker",
        replace(_HYBRID_V3, bound_context_lines=True),
        _ANY,
        None,
        "as hybrid-v3, but each heading, caption and repeated table-header line a chunk "
        "records is cut to half the budget (with a warning)",
    ),
)
_BY_NAME: dict[str, Label] = {row.name: row for row in LABELS}

#: Which labels a pipeline run applies when the user names none. The v2 labels replaced
#: the v1 defaults (docs/internals/decisions.md, "Default labels and parsers by measurement"): level
#: retrieval on the evaluation data, exact citations, and the v1 defects gone; the v1
#: labels stay registered and reproduce old outputs with ``--labels``. hybrid-v3 replaced
#: hybrid-v2 for the formats it chunks (docs/internals/decisions.md, "hybrid-v3 merges a
#: slice with a rendered element"): the same chunks except no one-line chunk beside a table or list;
#: pdf-page-v3 replaced pdf-page-v2 ("pdf-page-v3 never cuts after a list marker");
#: hybrid-v4 replaced hybrid-v3 ("Issue 29.7"): the same chunks, with the context lines each
#: chunk records bounded by the budget.
DEFAULT_LABELS_BY_MEDIA_TYPE: dict[str, tuple[str, ...]] = {
    # md-heading-v3 replaced md-heading-v2: the same chunks, embed_text names a heading once
    "text/markdown": ("md-heading-v3",),
    "text/plain": ("md-heading-v3",),
    "application/pdf": ("pdf-page-v3",),
    # Formats whose block text is rendered, not a source slice: the token-aware chunker.
    "text/html": ("hybrid-v4",),
    "text/csv": ("hybrid-v4",),
    "text/tab-separated-values": ("hybrid-v4",),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ("hybrid-v4",),
    "application/vnd.docling+json": ("hybrid-v4",),
}


def registered_labels() -> list[str]:
    """Every registered label, sorted."""
    return sorted(_BY_NAME)


def label(name: str) -> Label:
    """The registry row of ``name``; unknown labels get a one-sentence error."""
    row = _BY_NAME.get(name)
    if row is None:
        raise UnknownChunkerError(
            f"unknown chunker label {name!r}; registered labels are: "
            f"{', '.join(registered_labels())}."
        )
    return row


def get_chunker(name: str) -> Chunker:
    """A fresh chunker for label ``name``: its engine built from its row."""
    row = label(name)
    module_name, _, attr = row.engine.partition(":")
    chunker: Chunker = getattr(importlib.import_module(module_name), attr)(row)
    return chunker


def _uses(name: str, tokenizer: str) -> bool:
    used = label(name).tokenizers
    return used is None or tokenizer in used


def check_tokenizer_use(labels: Sequence[str] | None, tokenizer: str) -> str | None:
    """Refuse a tokenizer that no chunker of the run uses; a warning when only some ignore it.

    ``labels``: the requested chunker labels (None: the defaults per media type);
    ``tokenizer``: the canonical name. The tokenizer is part of every chunk id, so a
    tokenizer a chunker ignores (each chunker says which it uses, ``uses_tokenizers``)
    changes that chunker's ids and nothing else. When every label ignores it, the run is
    refused (UsageError); when only some do, the returned sentence names them (None: all
    use it).
    """
    if tokenizer == DEFAULT_TOKENIZER:
        return None
    run = list(labels) if labels else sorted(set(chain(*DEFAULT_LABELS_BY_MEDIA_TYPE.values())))
    ignoring = [name for name in run if not _uses(name, tokenizer)]
    if not ignoring:
        return None
    names = ", ".join(ignoring)
    if len(ignoring) == len(run):
        users = ", ".join(name for name in registered_labels() if _uses(name, tokenizer))
        raise UsageError(
            f"--tokenizer {tokenizer} is not used by {names} (chunk sizes stay the same) but "
            "would change every chunk id; leave --tokenizer out, or choose a chunker that "
            f"counts with it ({users})"
        )
    return (
        f"--tokenizer {tokenizer} is not used by {names}: their chunks stay the same but "
        "get new chunk ids; run them without --tokenizer to keep their ids"
    )
