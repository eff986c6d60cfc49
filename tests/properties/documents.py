"""Generated documents in every format the parsers read, for the cross-chunker properties.

One abstract document (a list of parts: headings, paragraphs, lists, code, tables,
images) is rendered to Markdown (LF or CRLF), plain text, HTML, CSV, DOCX and PDF and
parsed by the registered parser for that format, so the chunkers see exactly the
documents a pipeline run gives them. PDF pages are written by hand (one text line per
``Tj``) so pypdf extracts them quickly and exactly. Words are ASCII letters, digits and
some punctuation for PDF (core fonts), plus non-ASCII letters elsewhere.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable
from dataclasses import dataclass

import docx
from hypothesis import strategies as st

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import parse_document
from tests.hostile.corpus import minimal_pdf

__all__ = ["FORMATS", "Generated", "Part", "parts", "render"]


@dataclass(frozen=True)
class Part:
    kind: str  # heading | paragraph | list | code | table | image
    texts: tuple[str, ...]
    level: int = 1


@dataclass(frozen=True)
class Generated:
    """A parsed document and the text its ``lines`` spans index (None for other spans)."""

    fmt: str
    raw: bytes
    doc: CanonicalDocument
    source: str | None
    pages: tuple[str, ...] | None  # PDF: the whole extracted text of each page

    def reparse(self) -> CanonicalDocument:
        """The same bytes parsed again (a DOCX re-rendered would carry a new timestamp)."""
        return parse_document(self.raw, self.doc.source_uri)

    @property
    def exact(self) -> bool:
        """Whether block texts are source slices: Markdown, text, CSV (not HTML, DOCX)."""
        return self.fmt in ("md", "md-crlf", "txt", "csv")


_ascii_word = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    min_size=1,
    max_size=12,
)
_word = st.one_of(
    _ascii_word, st.sampled_from(["naïve", "Größe", "한국어", "日本語", "e.g.", "3.14", "🙂"])
)
_sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(_word, min_size=1, max_size=14),
    st.sampled_from([".", "!", "?", "", "."]),
)
_paragraph = st.lists(_sentence, min_size=1, max_size=6).map(" ".join)

_part = st.one_of(
    st.builds(lambda lv, t: Part("heading", (t,), lv), st.integers(1, 4), _ascii_word),
    _paragraph.map(lambda t: Part("paragraph", (t,))),
    _paragraph.map(lambda t: Part("paragraph", (t,))),
    st.lists(_sentence, min_size=1, max_size=5).map(lambda ts: Part("list", tuple(ts))),
    st.lists(st.lists(_ascii_word, max_size=5).map(" ".join), min_size=1, max_size=6).map(
        lambda ls: Part("code", tuple(ls))
    ),
    st.lists(_ascii_word, min_size=2, max_size=4).flatmap(
        lambda header: st.lists(
            st.lists(_ascii_word, min_size=len(header), max_size=len(header)), max_size=5
        ).map(lambda rows: Part("table", tuple([",".join(header), *map(",".join, rows)])))
    ),
    _ascii_word.map(lambda alt: Part("image", (alt,))),
)

#: Abstract documents: up to 10 parts.
parts = st.lists(_part, max_size=10)


def _md(ps: list[Part], nl: str) -> bytes:
    out = []
    for p in ps:
        if p.kind == "heading":
            out.append("#" * p.level + " " + p.texts[0])
        elif p.kind == "paragraph":
            out.append(p.texts[0])
        elif p.kind == "list":
            out.append("\n".join(f"- {t}" for t in p.texts))
        elif p.kind == "code":
            out.append("```\n" + "\n".join(p.texts) + "\n```")
        elif p.kind == "table":
            rows = [r.split(",") for r in p.texts]
            lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
            out.append("\n".join(lines))
        else:
            out.append(f"![{p.texts[0]}](pic.png)")
    return ("\n\n".join(out) + "\n").replace("\n", nl).encode()


def _txt(ps: list[Part]) -> bytes:
    return ("\n\n".join(t for p in ps for t in p.texts) + "\n").encode()


def _html(ps: list[Part]) -> bytes:
    e = html.escape
    out = ["<html><body>"]
    for p in ps:
        if p.kind == "heading":
            out.append(f"<h{p.level}>{e(p.texts[0])}</h{p.level}>")
        elif p.kind == "paragraph":
            out.append(f"<p>{e(p.texts[0])}</p>")
        elif p.kind == "list":
            out.append("<ul>" + "".join(f"<li>{e(t)}</li>" for t in p.texts) + "</ul>")
        elif p.kind == "code":
            out.append("<pre><code>" + e("\n".join(p.texts)) + "</code></pre>")
        elif p.kind == "table":
            rows = [r.split(",") for r in p.texts]
            head = "".join(f"<th>{e(c)}</th>" for c in rows[0])
            cells = ("".join(f"<td>{e(c)}</td>" for c in r) for r in rows[1:])
            body = "".join(f"<tr>{c}</tr>" for c in cells)
            out.append(f"<table><tr>{head}</tr>{body}</table>")
        else:
            out.append(f'<img alt="{e(p.texts[0])}" src="pic.png">')
    out.append("</body></html>")
    return "\n".join(out).encode()


def _csv(ps: list[Part]) -> bytes:
    tables = [p for p in ps if p.kind == "table"] or [Part("table", ("a,b", "1,2"))]
    return ("\n".join(tables[0].texts) + "\n").encode()


def _docx(ps: list[Part]) -> bytes:
    document = docx.Document()
    for p in ps:
        if p.kind == "heading":
            document.add_heading(p.texts[0], p.level)
        elif p.kind in ("paragraph", "code"):
            document.add_paragraph("\n".join(p.texts) if p.kind == "code" else p.texts[0])
        elif p.kind == "list":
            for t in p.texts:
                document.add_paragraph(t, style="List Bullet")
        elif p.kind == "table":
            rows = [r.split(",") for r in p.texts]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for i, row in enumerate(rows):
                for j, cell in enumerate(row):
                    table.cell(i, j).text = cell
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pdf_text(ps: list[Part]) -> list[list[str]]:
    """Pages of ASCII lines: a page break before every level-1 heading."""
    pages: list[list[str]] = [[]]
    for p in ps:
        if p.kind == "heading" and p.level == 1 and pages[-1]:
            pages.append([])
        for t in p.texts:
            line = "".join(ch for ch in t if ch.isascii() and ch.isprintable())
            pages[-1].append(line.replace(",", " "))
    return pages


def _pdf(ps: list[Part]) -> bytes:
    streams = []
    for lines in _pdf_text(ps):
        ops = ["BT /F1 10 Tf 40 760 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj 0 -12 Td")
        ops.append("ET")
        streams.append(" ".join(ops).encode("latin-1"))
    return minimal_pdf(streams)


_RENDER: dict[str, tuple[str, Callable[[list[Part]], bytes]]] = {
    "md": ("doc.md", lambda ps: _md(ps, "\n")),
    "md-crlf": ("doc.md", lambda ps: _md(ps, "\r\n")),
    "txt": ("doc.txt", _txt),
    "html": ("doc.html", _html),
    "csv": ("doc.csv", _csv),
    "docx": ("doc.docx", _docx),
    "pdf": ("doc.pdf", _pdf),
}
FORMATS = tuple(_RENDER)


def render(fmt: str, ps: list[Part]) -> Generated:
    """Render ``ps`` in ``fmt`` and parse it with the registered parser."""
    uri, make = _RENDER[fmt]
    raw = make(ps)
    doc = parse_document(raw, uri)
    source = decode_text(raw, uri)[0] if fmt not in ("docx", "pdf") else None
    # pdf-text-v1 makes one block per page holding the page's whole extracted text; the
    # default parser may trim a page or split it at headings, so pages come from v1.
    pages = (
        tuple(b.text for b in parse_document(raw, uri, parser_version="pdf-text-v1").blocks)
        if fmt == "pdf"
        else None
    )
    return Generated(fmt, raw, doc, source, pages)
