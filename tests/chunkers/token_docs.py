"""Hand-built CanonicalDocuments for the hierarchical-v1 / hybrid-v1 tests.

``build`` writes a Markdown-like source block by block and records each block's exact
span, so tests can check that chunk text is the source slice its span names without
depending on a parser. ``page_doc``, ``element_doc`` and ``rendered_doc`` cover the other
span kinds and blocks whose text is not a source slice (rendered HTML).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.model import (
    AudioRefBlock,
    Block,
    CanonicalDocument,
    Chunk,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    LineSpan,
    ListBlock,
    PageSpan,
    ParagraphBlock,
    SourceSpan,
    TableBlock,
)
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import ElementSpan
from kebab_chunk.parsers.base import BlockIds
from kebab_chunk.tokenizers import get_tokenizer

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class H:
    level: int
    title: str


@dataclass(frozen=True)
class P:
    text: str


@dataclass(frozen=True)
class Items:
    items: tuple[str, ...]  # each item as written, marker included
    ordered: bool = False


@dataclass(frozen=True)
class Code:
    body: str
    language: str | None = None


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Img:
    alt: str
    src: str
    caption: str | None = None
    audio: bool = False


@dataclass
class Built:
    source: str
    doc: CanonicalDocument
    blocks: list[Block] = field(default_factory=list)


def _breaks_before(text: str, offset: int) -> int:
    """Line breaks that end before ``offset`` ("\\r\\n" counts once, at its "\\n")."""
    return sum(1 for m in _BREAK.finditer(text, 0, offset) if m.end() - 1 < offset)


def build(
    parts: Sequence[H | P | Items | Code | Table | Img],
    *,
    nl: str = "\n",
    seps: Sequence[str] | None = None,
    uri: str = "doc.md",
) -> Built:
    """Render ``parts`` separated by blank lines (or ``seps[i]`` before part i > 0)."""
    the_doc = doc_id(uri)
    ids = BlockIds(the_doc)
    source = ""
    path: list[tuple[int, str]] = []
    blocks: list[Block] = []
    line = 1  # line of the next character appended
    for index, part in enumerate(parts):
        if index:
            sep = seps[index - 1] if seps is not None else nl * 2
            source += sep
            line += _breaks_before(sep, len(sep))
        text = _render(part, nl)
        start = len(source)
        source += text
        end = len(source)
        span = LineSpan(
            line_start=line,
            line_end=line + _breaks_before(text, max(len(text) - 1, 0)),
            char_start=start,
            char_end=end,
        )
        line += _breaks_before(text, len(text))
        blocks.append(_block(part, text, span, ids, path))
    doc = doc_with(blocks, uri, raw=source.encode(), parser_version="test-built")
    return Built(source, doc, blocks)


def _render(part: H | P | Items | Code | Table | Img, nl: str) -> str:
    if isinstance(part, H):
        return "#" * part.level + " " + part.title
    if isinstance(part, P):
        return part.text.replace("\n", nl)
    if isinstance(part, Items):
        return nl.join(i.replace("\n", nl) for i in part.items)
    if isinstance(part, Code):
        return nl.join([f"```{part.language or ''}", *part.body.split("\n"), "```"])
    if isinstance(part, Table):
        lines = ["| " + " | ".join(part.header) + " |", "|" + "---|" * len(part.header)]
        lines += ["| " + " | ".join(row) + " |" for row in part.rows]
        return nl.join(lines)
    title = f' "{part.caption}"' if part.caption else ""
    return f"![{part.alt}]({part.src}{title})"


def _block(
    part: H | P | Items | Code | Table | Img,
    text: str,
    span: LineSpan,
    ids: BlockIds,
    path: list[tuple[int, str]],
) -> Block:
    if isinstance(part, H):
        while path and path[-1][0] >= part.level:
            path.pop()
        path.append((part.level, part.title))
    kind, cls, fields = _block_shape(part)
    block: Block = cls(
        block_id=ids.next(kind, text),
        text=text,
        heading_path=tuple(t for _, t in path),
        spans=(span,),
        **fields,
    )
    return block


def _block_shape(part: H | P | Items | Code | Table | Img) -> tuple[str, Any, dict[str, Any]]:
    """The block kind, model class and kind-specific fields of ``part``."""
    if isinstance(part, H):
        return "heading", HeadingBlock, {"level": part.level, "title": part.title}
    if isinstance(part, P):
        return "paragraph", ParagraphBlock, {}
    if isinstance(part, Items):
        return "list", ListBlock, {"ordered": part.ordered, "items": part.items}
    if isinstance(part, Code):
        return "code", CodeBlock, {"language": part.language}
    if isinstance(part, Table):
        return "table", TableBlock, {"header": part.header, "rows": part.rows}
    if part.audio:
        return "audio_ref", AudioRefBlock, {"src": part.src, "caption": part.caption}
    return "image_ref", ImageRefBlock, {"alt": part.alt, "src": part.src, "caption": part.caption}


def doc_with(
    blocks: Sequence[Block],
    uri: str = "doc.md",
    media_type: str = "text/markdown",
    *,
    raw: bytes | None = None,
    parser_version: str = "test",
) -> CanonicalDocument:
    """A document holding ``blocks`` as given; its content hash is that of ``raw``, or "0"."""
    return CanonicalDocument(
        doc_id=doc_id(uri),
        source_uri=uri,
        media_type=media_type,
        content_hash="0" if raw is None else content_hash(raw),
        parser_version=parser_version,
        blocks=tuple(blocks),
    )


def _paragraphs(
    uri: str,
    texts: Sequence[str],
    spans: Sequence[SourceSpan],
    heading_path: tuple[str, ...] = (),
) -> list[Block]:
    """One paragraph per text, with its span and the ids a parser would give them."""
    ids = BlockIds(doc_id(uri))
    return [
        ParagraphBlock(
            block_id=ids.next("paragraph", text),
            text=text,
            heading_path=heading_path,
            spans=(span,),
        )
        for text, span in zip(texts, spans, strict=True)
    ]


def page_doc(
    pages: Sequence[str],
    uri: str = "doc.pdf",
    *,
    raw: bytes | None = None,
    parser_version: str = "test-built",
) -> CanonicalDocument:
    """One paragraph per page with an exact page span (the PDF parser's shape); the content
    hash is that of ``raw``, by default the pages' texts joined."""
    spans = [PageSpan(page=n, char_start=0, char_end=len(t)) for n, t in enumerate(pages, 1)]
    raw = "".join(pages).encode() if raw is None else raw
    blocks = _paragraphs(uri, pages, spans)
    return doc_with(blocks, uri, "application/pdf", raw=raw, parser_version=parser_version)


def element_doc(texts: Sequence[str], uri: str = "doc.docx") -> CanonicalDocument:
    """One paragraph per element with an exact element span (DOCX / docling JSON shape)."""
    spans = [
        ElementSpan(ref=f"#/texts/{i}", page=1, char_start=0, char_end=len(text))
        for i, text in enumerate(texts)
    ]
    blocks = _paragraphs(uri, texts, spans, ("Doc",))
    raw = "|".join(texts).encode()
    return doc_with(blocks, uri, "application/json", raw=raw, parser_version="test-built")


def rendered_doc(texts: Sequence[str], uri: str = "doc.html") -> CanonicalDocument:
    """Paragraphs whose text is rendered, not a source slice: each span covers markup."""
    spans: list[SourceSpan] = []
    offset = 0
    for i, text in enumerate(texts):
        markup = len(text) + len("<p></p>")
        spans.append(
            LineSpan(line_start=i + 1, line_end=i + 1, char_start=offset, char_end=offset + markup)
        )
        offset += markup + 1
    blocks = _paragraphs(uri, texts, spans, ("Page",))
    raw = "|".join(texts).encode()
    return doc_with(blocks, uri, "text/html", raw=raw, parser_version="test-built")


def check_chunks(
    chunks: Sequence[Chunk], tokenizer: str, budget: int, source: str | None = None
) -> None:
    """Invariants of every hybrid-v1 output: budget, stated counts, order, ids, exactness."""
    tok = get_tokenizer(tokenizer)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for chunk in chunks:
        count = tok.count_tokens(contextualize(chunk))
        # The documented exception: one character that alone (with its context) does not fit.
        assert count <= budget or len(chunk.text) == 1, (count, budget, contextualize(chunk))
        assert chunk.token_estimate == count
        assert chunk.text.strip()
        if source is not None and len(chunk.source_spans) == 1:
            (span,) = chunk.source_spans
            assert isinstance(span, LineSpan)
            assert source[span.char_start : span.char_end] == chunk.text
            view = source.replace("\r\n", " \n").replace("\r", "\n")
            assert span.line_start == 1 + view.count("\n", 0, span.char_start)
            assert span.line_end == 1 + view.count("\n", 0, max(span.char_end - 1, 0))
