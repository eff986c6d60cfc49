"""``KebabTextSplitter``: a LangChain ``TextSplitter`` that chunks with a kebab-chunk label.

Needs ``langchain-text-splitters`` (``pip install kebab-chunk[langchain]``). It is a real
subclass of ``langchain_text_splitters.TextSplitter`` (and so a
``BaseDocumentTransformer``), so it goes wherever LangChain takes one: ``split_text``,
``create_documents``, ``split_documents``, ``transform_documents``, a loader's
``load_and_split``, any field typed as a ``TextSplitter``::

    splitter = KebabTextSplitter()                        # md-heading-v3, default policy
    splitter = KebabTextSplitter("hybrid-v3", make_policy(target_tokens=256),
                                 metadata="flat")
    chunks = splitter.split_documents(TextLoader("guide.md").load())

Each text is parsed as the media type its metadata or name implies (Markdown by default)
and chunked by the label (the pipeline's default for that media type unless one is
given) under the policy (``ChunkPolicy()`` unless given); the rules are in
:mod:`kebab_chunk.integrations._split`. Named by ``source`` the way the pipeline names a
file (its corpus-relative path), a text gives the very records the pipeline writes.

Every Document it returns has ``id = chunk_id``, ``page_content`` = the chunk text (or
``embed_text`` with ``contextualized=True``) and metadata = a copy of the source
Document's metadata updated with the record in the chosen form (``metadata="full"``:
every field with exact spans, ``"flat"``: scalars only, see
:mod:`kebab_chunk.integrations.langchain`); on a clash the record's keys win.
LangChain's ``chunk_size`` / ``chunk_overlap`` attributes mirror the policy's
``target_tokens`` / ``overlap_tokens``; the policy alone sizes the chunks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kebab_chunk.errors import ConfigurationError, WrongTypeError
from kebab_chunk.integrations._common import (
    MetadataMode,
    check_metadata_mode,
    install_hint,
)
from kebab_chunk.integrations._split import TextChunking
from kebab_chunk.integrations.langchain import to_langchain_document
from kebab_chunk.model import Chunk, ChunkPolicy

try:
    from langchain_core.documents import Document
    from langchain_text_splitters import TextSplitter
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(install_hint("langchain-text-splitters", "langchain")) from exc

__all__ = ["KebabTextSplitter"]


class KebabTextSplitter(TextSplitter):
    """LangChain ``TextSplitter`` over a registered kebab-chunk label (module doc).

    ``chunker``: a registered label, or ``None`` for the pipeline's default per media type
    (``md-heading-v3`` for Markdown). ``policy``: a ``ChunkPolicy`` (``None``: the
    default). ``media_type``: read every text as this type instead of deciding per
    document. ``parser_version``: a registered parser version to use for the media type
    it reads. ``contextualized``: Documents hold each chunk's ``embed_text``. ``metadata``:
    ``"full"`` or ``"flat"``. Bad values fail here, with one sentence.
    """

    def __init__(
        self,
        chunker: str | None = None,
        policy: ChunkPolicy | None = None,
        *,
        media_type: str | None = None,
        parser_version: str | None = None,
        contextualized: bool = False,
        metadata: MetadataMode = "full",
    ) -> None:
        self._chunking = TextChunking(
            chunker=chunker,
            policy=ChunkPolicy() if policy is None else policy,
            media_type=media_type,
            parser_version=parser_version,
        )
        if not isinstance(contextualized, bool):
            raise WrongTypeError(f"contextualized must be True or False, got {contextualized!r}.")
        self._contextualized = contextualized
        self._metadata: MetadataMode = check_metadata_mode(metadata)
        resolved = self._chunking.policy
        super().__init__(
            chunk_size=resolved.target_tokens,
            chunk_overlap=resolved.overlap_tokens,
            add_start_index=False,
            strip_whitespace=False,
        )

    @property
    def chunking(self) -> TextChunking:
        """The label, policy and media-type rule this splitter applies."""
        return self._chunking

    def split_records(self, text: str, metadata: Mapping[str, Any] | None = None) -> list[Chunk]:
        """The chunk records of one text (the records behind :meth:`create_documents`)."""
        return self._chunking.chunks(text, metadata)

    def split_text(self, text: str) -> list[str]:
        """The page contents the chunks of ``text`` (read as its media type) would get."""
        documents = self.create_documents([text])
        return [document.page_content for document in documents]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One Document per chunk of every text, in order; ``metadatas[i]`` describes text i."""
        if isinstance(texts, str):
            raise WrongTypeError("texts must be a list of str; wrap a single text in a list.")
        sources: list[dict[Any, Any]] = [{} for _ in texts] if metadatas is None else metadatas
        if len(sources) != len(texts):
            raise ConfigurationError(
                f"got {len(texts)} texts but {len(sources)} metadata dicts; pass one "
                "metadata dict per text, or none."
            )
        documents: list[Document] = []
        for text, source in zip(texts, sources, strict=True):
            for record in self._chunking.chunks(text, source):
                made = to_langchain_document(
                    record, contextualized=self._contextualized, metadata=self._metadata
                )
                merged = {**copy.deepcopy(source), **made.metadata}
                documents.append(
                    Document(id=made.id, page_content=made.page_content, metadata=merged)
                )
        return documents
