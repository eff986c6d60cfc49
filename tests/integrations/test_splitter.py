"""KebabTextSplitter against the real langchain-text-splitters and langchain-core."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator

import pytest
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import BaseDocumentTransformer, Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import TextSplitter

from kebab_chunk.errors import UnknownChunkerError
from kebab_chunk.integrations import FLAT_KEYS
from kebab_chunk.integrations.langchain import KebabTextSplitter, chunk_from_langchain_document
from kebab_chunk.model import Chunk, LineSpan, make_policy
from kebab_chunk.model.ids import doc_id
from tests.integrations.conftest import MIXED_CORPUS

MARKDOWN = MIXED_CORPUS["guides/long-section.md"].read_text(encoding="utf-8")


def _text(name: str) -> str:
    return MIXED_CORPUS[name].read_bytes().decode("utf-8")


def test_it_is_a_langchain_text_splitter() -> None:
    splitter = KebabTextSplitter()
    assert isinstance(splitter, TextSplitter)
    assert isinstance(splitter, BaseDocumentTransformer)
    assert splitter.chunking.policy == make_policy()


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["guides/installation.md", "notes/release-notes-2.4.txt", "web/article.html"]
)
def test_documents_named_like_corpus_files_give_the_pipelines_records(
    name: str, pipeline_records: list[Chunk]
) -> None:
    expected = sorted(
        (r for r in pipeline_records if r.source_uri == name), key=lambda r: r.position
    )
    assert expected, name
    source = Document(page_content=_text(name), metadata={"source": name, "author": "ops"})
    documents = KebabTextSplitter().split_documents([source])
    assert [d.id for d in documents] == [r.chunk_id for r in expected]
    assert [chunk_from_langchain_document(d) for d in documents] == expected
    for document in documents:
        assert document.metadata["author"] == "ops"  # the source Document's metadata stays
        assert document.metadata["source"] == name


def test_spans_locate_each_chunk_in_the_text_given() -> None:
    documents = KebabTextSplitter().create_documents([MARKDOWN], [{"source": "long.md"}])
    assert len(documents) > 2
    for document in documents:
        record = chunk_from_langchain_document(document)
        spans = record.source_spans
        assert all(isinstance(s, LineSpan) for s in spans)
        # md-heading-v1: the chunk text is the exact slice its spans cover (an image's
        # chunk excepted: its text is the alt text and caption).
        if not record.captions:
            assert MARKDOWN[spans[0].char_start : spans[-1].char_end] == document.page_content
        assert document.metadata["doc_id"] == doc_id("long.md")


def test_split_text_create_and_transform_agree() -> None:
    splitter = KebabTextSplitter()
    documents = splitter.create_documents([MARKDOWN])
    assert splitter.split_text(MARKDOWN) == [d.page_content for d in documents]
    source = Document(page_content=MARKDOWN)
    assert splitter.transform_documents([source]) == documents
    assert splitter.split_documents([source]) == documents
    # Unnamed text gets a content-addressed name: the same ids every time, another text
    # another document.
    assert documents[0].metadata["source_uri"].startswith("inline-")
    assert splitter.create_documents([MARKDOWN]) == documents
    other = splitter.create_documents([MARKDOWN + "\n\nOne more paragraph.\n"])
    assert other[0].metadata["doc_id"] != documents[0].metadata["doc_id"]


def test_any_label_and_policy() -> None:
    policy = make_policy(target_tokens=60, overlap_tokens=0, tokenizer="chars")
    splitter = KebabTextSplitter("md-header-chars-v1", policy)
    documents = splitter.create_documents([MARKDOWN], [{"source": "long.md"}])
    assert {d.metadata["chunker_version"] for d in documents} == {"md-header-chars-v1"}
    assert {d.metadata["policy_hash"] for d in documents} == {policy.policy_hash}
    assert all(len(d.page_content) <= 60 for d in documents)
    assert splitter._chunk_size == 60  # LangChain's own attribute mirrors the policy


def parsed_as(
    text: str, metadata: dict[str, str], splitter: KebabTextSplitter | None = None
) -> set[tuple[str, str]]:
    """(parser version, label) of the chunks a splitter makes of ``text``."""
    documents = (splitter or KebabTextSplitter()).create_documents([text], [metadata])
    return {(d.metadata["parser_version"], d.metadata["chunker_version"]) for d in documents}


def test_the_media_type_comes_from_metadata_the_name_or_the_splitter() -> None:
    html = _text("web/article.html")

    assert parsed_as(html, {"source": "page.html"}) == {("html-v3", "hybrid-v4")}
    assert parsed_as(html, {"source": "page", "media_type": "text/html"}) == {
        ("html-v3", "hybrid-v4")
    }
    # LlamaIndex readers' keys work too.
    assert parsed_as(html, {"file_path": "/data/page.htm"}) == {("html-v3", "hybrid-v4")}
    # A loader's extracted PDF text is plain text; unknown names are Markdown.
    assert parsed_as("Page one text.\n", {"source": "scan.pdf", "page": "3"}) == {
        ("text-plain-v2", "md-heading-v3")
    }
    assert parsed_as("# Title\n\nBody.\n", {"source": "notes.rst"}) == {
        ("md-pyromark-v1", "md-heading-v3")
    }
    forced = KebabTextSplitter(media_type="text/plain", parser_version="text-plain-v1")
    assert parsed_as(html, {"source": "page.html"}, forced) == {("text-plain-v1", "md-heading-v3")}
    mistune = KebabTextSplitter(parser_version="md-mistune-v1")
    assert parsed_as(MARKDOWN, {}, mistune) == {("md-mistune-v1", "md-heading-v3")}


def test_flat_metadata_and_contextualized_text() -> None:
    splitter = KebabTextSplitter(metadata="flat", contextualized=True)
    source = {"source": "long.md", "tags": "guide"}
    documents = splitter.create_documents([MARKDOWN], [source])
    full = KebabTextSplitter().create_documents([MARKDOWN], [source])
    for flat_doc, full_doc in zip(documents, full, strict=True):
        record = chunk_from_langchain_document(full_doc)
        assert flat_doc.id == record.chunk_id
        assert flat_doc.page_content == record.embed_text
        assert list(flat_doc.metadata) == ["source", "tags", *FLAT_KEYS, "content_kind"]
        assert all(type(v) in (str, int) for v in flat_doc.metadata.values())


def test_the_documents_go_into_a_langchain_vector_store_under_their_chunk_ids() -> None:
    documents = KebabTextSplitter().create_documents([MARKDOWN], [{"source": "long.md"}])
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    ids = store.add_documents(documents)
    assert ids == [d.id for d in documents]
    store.add_documents(documents)  # re-ingesting upserts instead of duplicating
    assert len(store.store) == len(documents)
    [hit] = store.get_by_ids([documents[1].id or ""])
    assert chunk_from_langchain_document(hit) == chunk_from_langchain_document(documents[1])


def test_a_loader_splits_with_it() -> None:
    class Loader(BaseLoader):
        def lazy_load(self) -> Iterator[Document]:
            yield Document(page_content=MARKDOWN, metadata={"source": "long.md"})

    splitter = KebabTextSplitter()
    assert Loader().load_and_split(splitter) == splitter.split_documents(Loader().load())
    assert len(Loader().load_and_split(splitter)) > 2


def test_bad_settings_fail_in_one_sentence() -> None:
    with pytest.raises(UnknownChunkerError, match="unknown chunker label 'nope'"):
        KebabTextSplitter("nope")
    with pytest.raises(ValueError, match=r"media_type 'application/pdf' cannot be read from text"):
        KebabTextSplitter(media_type="application/pdf")
    with pytest.raises(ValueError, match="metadata must be 'full'"):
        KebabTextSplitter(metadata="nested")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="policy must be a ChunkPolicy"):
        KebabTextSplitter(policy={"target_tokens": 5})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got 2 texts but 1 metadata dicts"):
        KebabTextSplitter().create_documents(["a", "b"], [{}])
    with pytest.raises(TypeError, match="wrap a single text in a list"):
        KebabTextSplitter().create_documents("# one text")  # type: ignore[arg-type]


def test_missing_text_splitters_give_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_text_splitters", None)
    monkeypatch.delitem(sys.modules, "kebab_chunk.integrations.langchain_splitter", raising=False)
    langchain = importlib.import_module("kebab_chunk.integrations.langchain")
    with pytest.raises(ImportError, match=r"pip install langchain-text-splitters"):
        langchain.KebabTextSplitter  # noqa: B018


def test_unknown_attributes_still_raise_attribute_error() -> None:
    langchain = importlib.import_module("kebab_chunk.integrations.langchain")
    with pytest.raises(AttributeError):
        langchain.KebabTextSplitterr  # noqa: B018
