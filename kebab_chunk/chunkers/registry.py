"""Chunkers keyed by immutable version label.

Entries are import paths, so listing labels imports nothing heavy and a worker only loads
the chunkers it runs. A label, once registered, is never removed or repointed at code
with different output: a change in output is a new label (see docs/internals/versioning.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from itertools import chain

from kebab_chunk.chunkers.base import Chunker
from kebab_chunk.errors import UnknownChunkerError, UsageError
from kebab_chunk.tokenizers import DEFAULT_TOKENIZER

__all__ = [
    "DEFAULT_LABELS_BY_MEDIA_TYPE",
    "check_tokenizer_use",
    "get_chunker",
    "registered_labels",
]

_REGISTRY: dict[str, str] = {
    "md-heading-v1": "kebab_chunk.chunkers.md_heading_v1:MdHeadingV1Chunker",
    "md-heading-v2": "kebab_chunk.chunkers.md_heading_v2:MdHeadingV2Chunker",
    "md-heading-v3": "kebab_chunk.chunkers.md_heading_v3:MdHeadingV3Chunker",
    "md-header-chars-v1": "kebab_chunk.chunkers.md_header_chars_v1:MdHeaderCharsV1Chunker",
    "md-header-chars-v2": "kebab_chunk.chunkers.md_header_chars_v2:MdHeaderCharsV2Chunker",
    "pdf-page-v1": "kebab_chunk.chunkers.pdf_page_v1:PdfPageV1Chunker",
    "pdf-page-v2": "kebab_chunk.chunkers.pdf_page_v2:PdfPageV2Chunker",
    "pdf-page-v3": "kebab_chunk.chunkers.pdf_page_v3:PdfPageV3Chunker",
    "hierarchical-v1": "kebab_chunk.chunkers.hierarchical_v1:HierarchicalV1Chunker",
    "hybrid-v1": "kebab_chunk.chunkers.hybrid_v1:HybridV1Chunker",
    "hybrid-v2": "kebab_chunk.chunkers.hybrid_v2:HybridV2Chunker",
    "hybrid-v3": "kebab_chunk.chunkers.hybrid_v3:HybridV3Chunker",
    "hybrid-v4": "kebab_chunk.chunkers.hybrid_v4:HybridV4Chunker",
}

#: Which labels a pipeline run applies when the user names none. The v2 labels replaced
#: the v1 defaults (docs/internals/decisions.md, "Default labels and parsers by measurement"): level
#: retrieval on the evaluation data, exact citations, and the v1 defects gone; the v1
#: labels stay registered and reproduce old outputs with ``--chunkers``. hybrid-v3 replaced
#: hybrid-v2 for the formats it chunks (docs/internals/decisions.md, "hybrid-v3 merges a slice
#: with a rendered element"): the same chunks except no one-line chunk beside a table or list;
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
    return sorted(_REGISTRY)


def get_chunker(label: str) -> Chunker:
    """A fresh chunker instance for ``label``; unknown labels get a one-sentence error."""
    target = _REGISTRY.get(label)
    if target is None:
        raise UnknownChunkerError(
            f"unknown chunker label {label!r}; registered labels are: "
            f"{', '.join(registered_labels())}."
        )
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    chunker: Chunker = cls()
    return chunker


def _uses(label: str, tokenizer: str) -> bool:
    used = get_chunker(label).uses_tokenizers
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
    ignoring = [label for label in run if not _uses(label, tokenizer)]
    if not ignoring:
        return None
    names = ", ".join(ignoring)
    if len(ignoring) == len(run):
        users = ", ".join(label for label in registered_labels() if _uses(label, tokenizer))
        raise UsageError(
            f"--tokenizer {tokenizer} is not used by {names} (chunk sizes stay the same) but "
            "would change every chunk id; leave --tokenizer out, or choose a chunker that "
            f"counts with it ({users})"
        )
    return (
        f"--tokenizer {tokenizer} is not used by {names}: their chunks stay the same but "
        "get new chunk ids; run them without --tokenizer to keep their ids"
    )
