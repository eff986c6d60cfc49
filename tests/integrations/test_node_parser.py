"""KebabNodeParser against the real llama-index-core."""

from __future__ import annotations

import importlib
import itertools
import sys

import pytest
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import Document, MetadataMode, NodeRelationship, TextNode

from kebab_chunk.integrations import FLAT_KEYS
from kebab_chunk.integrations.llamaindex import KebabNodeParser, chunk_from_llama_index_node
from kebab_chunk.model import Chunk, make_policy
from kebab_chunk.model.ids import doc_id
from tests.integrations.conftest import MIXED_CORPUS

MARKDOWN = MIXED_CORPUS["guides/long-section.md"].read_text(encoding="utf-8")


def _document(text: str = MARKDOWN, **metadata: str) -> Document:
    return Document(text=text, id_="user-doc-1", metadata=metadata or {"file_path": "long.md"})


def test_it_is_a_llama_index_node_parser() -> None:
    parser = KebabNodeParser()
    assert isinstance(parser, NodeParser)
    assert parser.chunking.policy == make_policy()
    assert KebabNodeParser.class_name() == "KebabNodeParser"


@pytest.mark.slow
def test_documents_named_like_corpus_files_give_the_pipelines_records(
    pipeline_records: list[Chunk],
) -> None:
    name = "guides/installation.md"
    expected = sorted(
        (r for r in pipeline_records if r.source_uri == name), key=lambda r: r.position
    )
    text = MIXED_CORPUS[name].read_bytes().decode("utf-8")
    nodes = KebabNodeParser().get_nodes_from_documents([_document(text, file_path=name)])
    assert [n.node_id for n in nodes] == [r.chunk_id for r in expected]
    assert [chunk_from_llama_index_node(n) for n in nodes] == expected


def test_nodes_point_at_their_document_and_their_neighbours() -> None:
    document = _document(file_path="long.md", author="ops")
    nodes = KebabNodeParser().get_nodes_from_documents([document])
    assert len(nodes) > 2
    for i, node in enumerate(nodes):
        assert isinstance(node, TextNode)
        assert node.ref_doc_id == "user-doc-1"
        assert node.metadata["doc_id"] == doc_id("long.md")
        assert node.metadata["author"] == "ops"  # LlamaIndex merged the document's metadata
        previous = node.relationships.get(NodeRelationship.PREVIOUS)
        following = node.relationships.get(NodeRelationship.NEXT)
        assert (previous.node_id if previous else None) == (  # type: ignore[union-attr]
            nodes[i - 1].node_id if i else None
        )
        assert (following.node_id if following else None) == (  # type: ignore[union-attr]
            nodes[i + 1].node_id if i + 1 < len(nodes) else None
        )
        # Exact offsets into the document's text, and nothing of ours is embedded.
        record = chunk_from_llama_index_node(node)
        spans = record.source_spans
        assert (node.start_char_idx, node.end_char_idx) == (
            spans[0].char_start,
            spans[-1].char_end,
        )
        if not record.captions:  # an image chunk's text is its alt text and caption
            assert MARKDOWN[spans[0].char_start : spans[-1].char_end] == node.text
        embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
        assert embedded == "file_path: long.md\nauthor: ops\n\n" + node.text


def test_offsets_stay_exact_where_a_passage_repeats() -> None:
    # Every piece after the first is the same sentences again, so a text search from the
    # previous piece's start (LlamaIndex's own rule) lands one period too early.
    text = "# Periodic\n\n" + "Alpha beta gamma. " * 40
    parser = KebabNodeParser(policy=make_policy(target_tokens=20, overlap_tokens=0))
    nodes = parser.get_nodes_from_documents([_document(text, file_path="periodic.md")])
    assert len(nodes) > 3
    records = [chunk_from_llama_index_node(n) for n in nodes]
    offsets = [(n.start_char_idx, n.end_char_idx) for n in nodes if isinstance(n, TextNode)]
    assert offsets == [(r.source_spans[0].char_start, r.source_spans[-1].char_end) for r in records]
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(offsets))


def test_it_runs_in_an_ingestion_pipeline() -> None:
    document = _document(file_path="long.md")
    nodes = IngestionPipeline(transformations=[KebabNodeParser()]).run(documents=[document])
    expected = KebabNodeParser().get_nodes_from_documents([document])
    assert [n.node_id for n in nodes] == [n.node_id for n in expected]


def test_flat_metadata_contextualized_text_and_another_label() -> None:
    policy = make_policy(target_tokens=60, overlap_tokens=0, tokenizer="chars")
    parser = KebabNodeParser("md-header-chars-v1", policy, metadata="flat", contextualized=True)
    full = KebabNodeParser("md-header-chars-v1", policy)
    document = _document(file_path="long.md")
    nodes = parser.get_nodes_from_documents([document])
    for node, full_node in zip(nodes, full.get_nodes_from_documents([document]), strict=True):
        record = chunk_from_llama_index_node(full_node)
        assert record.chunker_version == "md-header-chars-v1"
        assert node.node_id == record.chunk_id
        assert node.get_content(metadata_mode=MetadataMode.NONE) == record.embed_text
        assert list(node.metadata) == ["file_path", *FLAT_KEYS, "content_kind"]
        assert all(type(v) in (str, int) for v in node.metadata.values())


def test_bad_settings_fail_in_one_sentence() -> None:
    with pytest.raises(KeyError, match="unknown chunker label 'nope'"):
        KebabNodeParser("nope")
    with pytest.raises(ValueError, match=r"media_type 'application/pdf' cannot be read from text"):
        KebabNodeParser(media_type="application/pdf")
    with pytest.raises(ValueError, match="metadata must be 'full'"):
        KebabNodeParser(metadata="nested")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="contextualized must be True or False"):
        KebabNodeParser(contextualized="yes")  # type: ignore[arg-type]


def test_missing_llama_index_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.core.node_parser", None)
    monkeypatch.delitem(sys.modules, "kebab_chunk.integrations.llamaindex_parser", raising=False)
    llamaindex = importlib.import_module("kebab_chunk.integrations.llamaindex")
    with pytest.raises(ImportError, match=r"pip install llama-index-core"):
        llamaindex.KebabNodeParser  # noqa: B018
