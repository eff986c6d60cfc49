"""``KebabNodeParser``: a LlamaIndex ``NodeParser`` that chunks with a kebab-chunk label.

Needs ``llama-index-core`` (``pip install kebab-chunk[llamaindex]``). It is a real
``llama_index.core.node_parser.NodeParser``, so it goes wherever LlamaIndex takes one:
``get_nodes_from_documents``, an ``IngestionPipeline``'s transformations,
``Settings.node_parser``, ``VectorStoreIndex.from_documents(..., transformations=[...])``::

    parser = KebabNodeParser()                           # md-heading-v3, default policy
    parser = KebabNodeParser("hybrid-v3", make_policy(target_tokens=256), metadata="flat")
    nodes = parser.get_nodes_from_documents(SimpleDirectoryReader("docs").load_data())

Each document's text is parsed as the media type its metadata or name implies (Markdown by
default) and chunked by the label (the pipeline's default for that media type unless one is
given) under the policy (``ChunkPolicy()`` unless given); the rules are in
:mod:`kebab_chunk.integrations._split`.

Every node is a ``TextNode`` made by
:func:`kebab_chunk.integrations.llamaindex.to_llama_index_node`: ``id_`` is the
``chunk_id`` (``id_func`` is not used: ids are content-addressed), metadata the record in
the chosen form (``"full"``: exact spans, ``"flat"``: scalars only) under which LlamaIndex
puts the source document's metadata (``include_metadata``; on a clash the
record's keys win), our keys hidden from embedding and LLM text. Unlike the record
adapter, SOURCE points at the LlamaIndex document the node came from, so
``ref_doc_id`` and ``delete_ref_doc`` work on the caller's document ids; the record's own
``doc_id`` stays in the metadata. PREVIOUS/NEXT link neighbours of one document
(``include_prev_next_rel``). ``start_char_idx``/``end_char_idx`` are the exact source range
of line-located chunks in the document's text (the first span's start, the last span's
end; the text itself is a slice of it except where a chunker renders a block, such as an
image with its caption) and ``None`` for other chunks (LlamaIndex's own
text search would pick the first repeat of a repeated passage, or a rendered text's
accidental match).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from kebab_chunk.errors import WrongTypeError
from kebab_chunk.integrations._common import check_metadata_mode, install_hint
from kebab_chunk.integrations._split import TextChunking
from kebab_chunk.integrations.llamaindex import to_llama_index_node
from kebab_chunk.model import Chunk, ChunkPolicy

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.schema import BaseNode, Document, MetadataMode, NodeRelationship, TextNode
    from llama_index.core.utils import get_tqdm_iterable
except ImportError as exc:  # pragma: no cover - exercised by a test that hides the package
    raise ImportError(install_hint("llama-index-core", "llamaindex")) from exc

__all__ = ["KebabNodeParser"]


def _merged(first: Sequence[str], second: Sequence[str]) -> list[str]:
    """``first`` then the keys of ``second`` not already in it (order kept, no repeats)."""
    return list(dict.fromkeys([*first, *second]))


class KebabNodeParser(NodeParser):
    """LlamaIndex ``NodeParser`` over a registered kebab-chunk label (module doc).

    ``chunker``: a registered label, or ``None`` for the pipeline's default per media type
    (``md-heading-v3`` for Markdown). ``policy``: a ``ChunkPolicy`` (``None``: the
    default). ``media_type``: read every text as this type instead of deciding per
    document. ``parser_version``: a registered parser version to use for the media type
    it reads. ``contextualized``: nodes hold each chunk's ``embed_text``. ``metadata``:
    ``"full"`` or ``"flat"``. Bad values fail here, with one sentence.
    """

    chunker: str | None = Field(
        default=None, description="Chunker label; None: the default for each media type."
    )
    policy: ChunkPolicy = Field(default_factory=ChunkPolicy, description="Chunk policy.")
    media_type: str | None = Field(
        default=None, description="Media type of every text; None: decided per document."
    )
    parser_version: str | None = Field(default=None, description="Parser version to use.")
    contextualized: bool = Field(
        default=False, description="Node text is the chunk's embed_text, not the chunk text."
    )
    metadata: Literal["full", "flat"] = Field(
        default="full", description="'full': the whole record; 'flat': scalars only."
    )
    _chunking: TextChunking | None = PrivateAttr(default=None)

    def __init__(
        self,
        chunker: str | None = None,
        policy: ChunkPolicy | None = None,
        *,
        media_type: str | None = None,
        parser_version: str | None = None,
        contextualized: bool = False,
        metadata: Literal["full", "flat"] = "full",
        **kwargs: Any,
    ) -> None:
        chunking = TextChunking(
            chunker=chunker,
            policy=ChunkPolicy() if policy is None else policy,
            media_type=media_type,
            parser_version=parser_version,
        )
        if not isinstance(contextualized, bool):
            raise WrongTypeError(f"contextualized must be True or False, got {contextualized!r}.")
        super().__init__(
            chunker=chunker,
            policy=chunking.policy,
            media_type=media_type,
            parser_version=parser_version,
            contextualized=contextualized,
            metadata=check_metadata_mode(metadata),
            **kwargs,
        )
        self._chunking = chunking

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises this component under."""
        return "KebabNodeParser"

    @property
    def chunking(self) -> TextChunking:
        """The label, policy and media-type rule this parser applies.

        Made by ``__init__``; rebuilt from the fields for an instance pydantic made without
        it (``model_validate``).
        """
        if self._chunking is None:
            self._chunking = TextChunking(
                chunker=self.chunker,
                policy=self.policy,
                media_type=self.media_type,
                parser_version=self.parser_version,
            )
        return self._chunking

    def split_records(self, node: BaseNode) -> list[Chunk]:
        """The chunk records of one document or node (what its parsed nodes are made of)."""
        text = node.get_content(metadata_mode=MetadataMode.NONE)
        return self.chunking.chunks(text, node.metadata)

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Chunking documents"):
            for record in self.split_records(node):
                child: TextNode = to_llama_index_node(
                    record, contextualized=self.contextualized, metadata=self.metadata
                )
                child.relationships[NodeRelationship.SOURCE] = node.as_related_node_info()
                child.excluded_embed_metadata_keys = _merged(
                    child.excluded_embed_metadata_keys, node.excluded_embed_metadata_keys
                )
                child.excluded_llm_metadata_keys = _merged(
                    child.excluded_llm_metadata_keys, node.excluded_llm_metadata_keys
                )
                parsed.append(child)
        return parsed

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        """LlamaIndex's metadata merge and neighbour links, keeping our exact offsets."""
        exact = [
            (node.start_char_idx, node.end_char_idx) if isinstance(node, TextNode) else None
            for node in nodes
        ]
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node, offsets in zip(nodes, exact, strict=True):
            if isinstance(node, TextNode) and offsets is not None:
                node.start_char_idx, node.end_char_idx = offsets
        return nodes
