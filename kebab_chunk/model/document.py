"""The parser's output: one document as ordered blocks with provenance."""

from __future__ import annotations

from typing import Any

from pydantic import Field, JsonValue, field_validator

from kebab_chunk._quote import MAX_MESSAGE_CHARS, cap
from kebab_chunk.model._base import Frozen, trusted
from kebab_chunk.model.blocks import (
    AudioRefBlock,
    Block,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
)

__all__ = ["CanonicalDocument", "make_document"]


class CanonicalDocument(Frozen):
    """One parsed document.

    ``source_uri`` is the corpus-relative POSIX path; ``content_hash`` is the blake3 of the
    raw bytes; ``warnings`` records every degradation (bad encoding, empty page, ...), so
    nothing is lost silently. Each warning is capped at ``MAX_MESSAGE_CHARS`` characters:
    one that quotes document text (a header cell, a YAML tag, a pypdf font dictionary)
    would otherwise grow with the document and end as one huge log line.
    """

    doc_id: str
    source_uri: str
    media_type: str
    content_hash: str
    parser_version: str
    title: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()

    @field_validator("warnings")
    @classmethod
    def _cap_warnings(cls, warnings: tuple[str, ...]) -> tuple[str, ...]:
        return _capped(warnings)


def _capped(warnings: tuple[str, ...]) -> tuple[str, ...]:
    if all(len(w) <= MAX_MESSAGE_CHARS for w in warnings):
        return warnings
    return tuple(cap(w) for w in warnings)


_FIELDS = tuple(CanonicalDocument.model_fields)
_STR_FIELDS = ("doc_id", "source_uri", "media_type", "content_hash", "parser_version")
_BLOCK_CLASSES = frozenset(
    (
        HeadingBlock,
        ParagraphBlock,
        ListBlock,
        CodeBlock,
        TableBlock,
        ImageRefBlock,
        AudioRefBlock,
    )
)


def make_document(**values: Any) -> CanonicalDocument:
    """``CanonicalDocument(**values)``, skipping validation where it would change nothing.

    A parser's hot path: when every field is given and already has exactly the schema's
    type (plain ``str`` fields, ``title`` a ``str`` or None, no metadata, ``blocks`` a tuple
    of block instances, ``warnings`` a tuple of ``str``), the record is assembled as it is
    (see :func:`kebab_chunk.model._base.trusted`); otherwise, e.g. with front-matter
    metadata to check, the validating constructor runs.
    """
    if (
        len(values) == len(_FIELDS)
        and all(values.get(name).__class__ is str for name in _STR_FIELDS)
        and (values["title"] is None or values["title"].__class__ is str)
        and values["metadata"].__class__ is dict
        and not values["metadata"]
        and values["blocks"].__class__ is tuple
        and all(block.__class__ in _BLOCK_CLASSES for block in values["blocks"])
        and values["warnings"].__class__ is tuple
        and all(
            warning.__class__ is str and len(warning) <= MAX_MESSAGE_CHARS
            for warning in values["warnings"]
        )
    ):
        return trusted(CanonicalDocument, {name: values[name] for name in _FIELDS}, set(_FIELDS))
    return CanonicalDocument(**values)
