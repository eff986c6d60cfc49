"""What every adapter shares: record ↔ metadata, contextualised text, lazy imports.

Contextualised text is the project's one :func:`~kebab_chunk.chunkers.contextualize.contextualize`
(heading path lines, caption lines, then the text), the same string ``hybrid-v1`` budgets.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from kebab_chunk.chunkers.contextualize import context_prefix, contextualize
from kebab_chunk.model import Chunk

__all__ = [
    "CONTENT_KIND_KEY",
    "as_record",
    "contextualize",
    "record_from_metadata",
    "record_metadata",
    "require",
    "strip_context",
]

#: Metadata key saying whether the target's text is the chunk text or contextualised.
CONTENT_KIND_KEY = "content_kind"

_RECORD_FIELDS = tuple(name for name in Chunk.model_fields if name != "text")


def record_metadata(chunk: Chunk) -> dict[str, Any]:
    """Every field of the record except ``text``, as plain JSON values (lists, dicts)."""
    return chunk.model_dump(mode="json", exclude={"text"})


def record_from_metadata(metadata: Mapping[str, Any], text: str) -> Chunk:
    """Rebuild the record from adapter metadata and the chunk's own text.

    Keys that are not record fields (for example ones a vector store added) are ignored.
    """
    return Chunk.model_validate(
        {**{key: metadata[key] for key in _RECORD_FIELDS if key in metadata}, "text": text}
    )


def strip_context(metadata: Mapping[str, Any], content: str) -> str:
    """Invert :func:`contextualize` using the heading path and captions in ``metadata``."""
    prefix = context_prefix(metadata.get("heading_path", ()), metadata.get("captions", ()))
    if prefix:
        prefix += "\n"
    if not content.startswith(prefix):
        raise ValueError(
            "the content does not start with the chunk's heading path and captions, so "
            "contextualize() did not make it; pass the original chunk text instead."
        )
    return content[len(prefix) :]


def as_record(element: Chunk | Mapping[str, Any]) -> Chunk:
    """A chunk record from a record or its JSON form (as a pipeline may carry it)."""
    if isinstance(element, Chunk):
        return element
    if isinstance(element, Mapping):
        return Chunk.model_validate(element)
    raise TypeError(
        f"expected a kebab_chunk Chunk record or its dict form, got {type(element).__name__}; "
        "feed the adapter the output of the chunking step."
    )


def require(module: str, package: str, extra: str) -> ModuleType:
    """Import an optional dependency, or fail with a one-sentence install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this adapter needs the optional package {package!r}, which is not installed; "
            f"install it with `pip install {package}` (or `pip install kebab-chunk[{extra}]`)."
        ) from exc
