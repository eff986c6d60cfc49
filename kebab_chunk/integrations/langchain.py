"""Chunk records → LangChain ``Document`` (``pip install langchain-core``).

``Document.id`` is the ``chunk_id``; ``metadata`` holds every other record field as JSON
values plus ``content_kind`` (``"text"`` or ``"contextualized"``), so
:func:`chunk_from_langchain_document` gives the exact record back.

Some vector stores accept only scalar metadata values; filter the lists (spans, block ids,
heading path) with the store's own helper before adding, and keep ``chunk_id`` to join
back to the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kebab_chunk.integrations._common import (
    CONTENT_KIND_KEY,
    as_record,
    contextualize,
    record_from_metadata,
    record_metadata,
    require,
    strip_context,
)
from kebab_chunk.model import Chunk

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = ["chunk_from_langchain_document", "to_langchain_document", "to_langchain_documents"]


def to_langchain_document(
    chunk: Chunk | Mapping[str, Any], *, contextualized: bool = False
) -> Document:
    """One record as a ``Document``.

    ``contextualized`` makes the text ``contextualize(chunk)`` (heading path and captions
    first), the string to embed; the record's own text is recoverable either way.
    """
    documents = require("langchain_core.documents", "langchain-core", "langchain")
    record = as_record(chunk)
    metadata = record_metadata(record)
    metadata[CONTENT_KIND_KEY] = "contextualized" if contextualized else "text"
    document: Document = documents.Document(
        id=record.chunk_id,
        page_content=contextualize(record) if contextualized else record.text,
        metadata=metadata,
    )
    return document


def to_langchain_documents(
    chunks: Iterable[Chunk | Mapping[str, Any]], *, contextualized: bool = False
) -> list[Document]:
    """Records as ``Document`` objects, in the given order."""
    return [to_langchain_document(chunk, contextualized=contextualized) for chunk in chunks]


def chunk_from_langchain_document(document: Document) -> Chunk:
    """The record a ``Document`` made by :func:`to_langchain_document` came from."""
    metadata = document.metadata
    text = document.page_content
    if metadata.get(CONTENT_KIND_KEY) == "contextualized":
        text = strip_context(metadata, text)
    return record_from_metadata(metadata, text)
