"""Chunk records → LangChain ``Document`` (``pip install kebab-chunk[langchain]``).

``Document.id`` is the ``chunk_id``. The records can be given in any form the pipeline's
output is read back in: :class:`~kebab_chunk.model.Chunk` objects, their dict form, rows
of ``pyarrow.Table.to_pylist()``, a pandas ``DataFrame`` from
``pd.read_parquet(OUT / "chunks")`` or a ``pyarrow.Table`` (see
:mod:`kebab_chunk.integrations._common`)::

    frame = pd.read_parquet(OUT / "chunks")
    documents = to_langchain_documents(frame, metadata="flat")

``metadata=`` picks the metadata form:

* ``"full"`` (default): every record field except ``text`` as JSON values (``heading_path``
  and ``block_ids`` as lists, ``source_spans`` as a list of dicts) plus ``content_kind``
  (``"text"`` or ``"embed_text"``; with ``embed_text`` as the content, ``text`` is in the
  metadata instead), so :func:`chunk_from_langchain_document` gives the
  exact record back;
* ``"flat"``: scalars only (``str``/``int``, never a list, dict or ``None``), for vector
  stores such as Chroma that reject anything else: the record's scalar fields,
  ``heading_path`` and ``captions`` joined with ``"\\n"``, ``page``/``page_end``,
  ``line_start``/``line_end``, ``char_start``/``char_end`` of the span range (``0`` for a
  page or line the chunk does not have), ``span_kind``, ``span_count``, ``span_ref`` and
  ``content_kind``. Join on ``chunk_id`` to get the whole record back.

:class:`KebabTextSplitter` (a LangChain ``TextSplitter``, in
:mod:`kebab_chunk.integrations.langchain_splitter`, needing ``langchain-text-splitters``)
chunks LangChain documents with any registered label and returns such Documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kebab_chunk.integrations._common import (
    MetadataMode,
    adapter_metadata,
    adapter_text,
    as_record,
    convert_all,
    lazy_export,
    record_from_content,
    require,
)
from kebab_chunk.model import Chunk

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from kebab_chunk.integrations.langchain_splitter import KebabTextSplitter

__all__ = [
    "KebabTextSplitter",
    "chunk_from_langchain_document",
    "to_langchain_document",
    "to_langchain_documents",
]


def to_langchain_document(
    chunk: Chunk | Mapping[str, Any],
    *,
    contextualized: bool = False,
    metadata: MetadataMode = "full",
) -> Document:
    """One record (in any accepted form) as a ``Document``.

    ``contextualized`` makes the text the record's ``embed_text`` (heading path and captions
    the text lacks, then the text: the one text to embed); the record is recoverable either
    way.
    ``metadata`` is ``"full"`` or ``"flat"`` (module doc).
    """
    documents = require("langchain_core.documents", "langchain-core", "langchain")
    record = as_record(chunk)
    document: Document = documents.Document(
        id=record.chunk_id,
        page_content=adapter_text(record, contextualized=contextualized),
        metadata=adapter_metadata(record, contextualized=contextualized, metadata=metadata),
    )
    return document


def to_langchain_documents(
    chunks: Iterable[Chunk | Mapping[str, Any]] | Any,
    *,
    contextualized: bool = False,
    metadata: MetadataMode = "full",
) -> list[Document]:
    """Records as ``Document`` objects, in the given order.

    ``chunks`` is a list of records or rows, a pandas ``DataFrame`` or a pyarrow
    ``Table``/``RecordBatch``/dataset (module doc).
    """
    one = to_langchain_document
    return convert_all(one, chunks, contextualized=contextualized, metadata=metadata)


def chunk_from_langchain_document(document: Document) -> Chunk:
    """The record a ``Document`` made with full metadata came from.

    A flat-metadata Document gives a one-sentence ``ValueError``: look its ``chunk_id``
    up in the records instead.
    """
    return record_from_content(document.metadata, document.page_content)


__getattr__ = lazy_export(
    __name__, "KebabTextSplitter", "kebab_chunk.integrations.langchain_splitter"
)
