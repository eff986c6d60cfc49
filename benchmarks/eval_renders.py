"""Rendered copies of a Markdown development set: the same pages and questions as HTML and
as PDF, so that ``python -m benchmarks eval`` can score HTML and PDF handling (ours against
the loaders users pair with the peers) on questions that have real answers.

:func:`render` writes, under a cache folder, each Markdown page of the set parsed by
mistune (CommonMark plus tables, strikethrough and bare URLs, inline HTML passed through):

- ``html``: a standalone page, ``<title>`` and ``<h1>`` from the front matter's ``title``
  (as the handbook's site generator shows it), the rendered body inside ``<main>``; no site
  chrome is invented;
- ``pdf``: the same title and blocks typeset with fpdf2 in matplotlib's DejaVu fonts
  (:class:`_Typesetter`: headings bold and larger, list items behind their markers, table
  rows one line each, code in a monospaced font; fpdf2's own ``write_html`` refuses much
  of real Markdown's HTML).

A rendered page has no character offsets that the Markdown references' ranges could name,
so every reference becomes *content only* (``kebab-chunk eval`` then scores it with the
word-trigram overlap measure): the reference's Markdown, rendered by the same mistune and
reduced to its text (:func:`reference_text`), naming the rendered file. Rendering the
reference and the page with one renderer keeps the comparison about chunking, not about
who renders Markdown best. The files are rebuilt when missing; they are never committed.
"""

from __future__ import annotations

import csv
import html
import json
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

import mistune
import yaml

Kind = Literal["html", "pdf"]


def fonts() -> Path:
    """The DejaVu fonts matplotlib ships (an installed package, so no system fonts are
    needed and nothing is downloaded)."""
    import matplotlib

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf"


_FRONT_MATTER = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n", re.DOTALL)


def _markdown() -> Callable[[str], str]:
    renderer = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])
    return lambda text: str(renderer(text))


class _Text(HTMLParser):
    """Collects the character data of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def text_of(fragment: str) -> str:
    """The text of an HTML fragment: its character data joined, entities decoded."""
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.parts)


def split_front_matter(text: str) -> tuple[str, str]:
    """``(title, body)``: the front matter's ``title`` (empty when none) and the text after it."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return "", text
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        meta = None
    title = meta.get("title") if isinstance(meta, dict) else None
    return (str(title).strip() if title else ""), text[match.end() :]


def page_html(markdown: str, render: Callable[[str], str]) -> str:
    """A standalone HTML page of one Markdown page."""
    title, body = split_front_matter(markdown)
    head = f"<title>{html.escape(title)}</title>\n" if title else ""
    heading = f"<h1>{html.escape(title)}</h1>\n" if title else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"{head}</head>\n<body>\n<main>\n{heading}{render(body)}</main>\n</body>\n</html>\n"
    )


class _Typesetter:
    """Typesets mistune's block tokens with fpdf2's text calls: headings bold and larger
    (20 pt for level 1 down to 11 pt), paragraphs, list items indented behind a bullet or
    number, table rows one line of cells joined by " | " (header row bold), code in a
    monospaced font, raw HTML blocks as their text."""

    SIZES: ClassVar[dict[int, int]] = {1: 20, 2: 16, 3: 13, 4: 12, 5: 11, 6: 11}

    def __init__(self) -> None:
        from fpdf import FPDF

        self.pdf = FPDF(format="A4")
        folder = fonts()
        for style, suffix in (("", ""), ("B", "-Bold")):
            self.pdf.add_font("DejaVu", style, str(folder / f"DejaVuSans{suffix}.ttf"))
        self.pdf.add_font("DejaVuMono", "", str(folder / "DejaVuSansMono.ttf"))
        self.pdf.add_page()

    def line(
        self,
        text: str,
        *,
        size: float = 10,
        bold: bool = False,
        indent: float = 0,
        mono: bool = False,
    ) -> None:
        if not text.strip():
            return
        pdf = self.pdf
        pdf.set_font("DejaVuMono" if mono else "DejaVu", "B" if bold else "", size)
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(size * 0.2)

    def blocks(self, tokens: list[dict[str, Any]], indent: float = 0) -> None:
        for token in tokens:
            kind = token["type"]
            if kind == "heading":
                level = token["attrs"]["level"]
                self.line(
                    _inline(token["children"]), size=self.SIZES[level], bold=True, indent=indent
                )
            elif kind in ("paragraph", "block_text"):
                self.line(_inline(token["children"]), indent=indent)
            elif kind == "block_code":
                self.line(token["raw"].rstrip("\n"), size=9, indent=indent, mono=True)
            elif kind == "block_html":
                self.line(text_of(token["raw"]).strip(), indent=indent)
            elif kind == "block_quote":
                self.blocks(token["children"], indent + 6)
            elif kind == "list":
                self.items(token, indent)
            elif kind == "table":
                for part in token["children"]:
                    rows = part["children"] if part["type"] == "table_body" else [part]
                    for row in rows:
                        cells = " | ".join(_inline(c["children"]) for c in row["children"])
                        self.line(cells, bold=part["type"] == "table_head", indent=indent)

    def items(self, token: dict[str, Any], indent: float) -> None:
        ordered = token["attrs"].get("ordered")
        start = token["attrs"].get("start") or 1
        for n, item in enumerate(token["children"], start=start):
            marker = f"{n}. " if ordered else "\u2022 "
            children = list(item["children"])
            if children and children[0]["type"] in ("paragraph", "block_text"):
                first = children.pop(0)
                self.line(marker + _inline(first["children"]), indent=indent)
            self.blocks(children, indent + 6)


def _inline(tokens: list[dict[str, Any]]) -> str:
    """The text of inline tokens: link and emphasis text kept, images and inline HTML
    dropped, line breaks as spaces."""
    parts: list[str] = []
    for token in tokens:
        kind = token["type"]
        if kind in ("text", "codespan"):
            parts.append(token["raw"])
        elif kind in ("softbreak", "linebreak"):
            parts.append(" ")
        elif "children" in token and kind != "image":
            parts.append(_inline(token["children"]))
    return "".join(parts)


def page_pdf(markdown: str) -> bytes:
    """One Markdown page typeset as PDF (A4, DejaVu fonts), its front matter's title as a
    level-1 heading first. Characters the fonts lack (emoji) print as blanks; fpdf2 warns
    about them."""
    title, body = split_front_matter(markdown)
    parse = mistune.create_markdown(renderer=None, plugins=["table", "strikethrough", "url"])
    setter = _Typesetter()
    if title:
        setter.line(title, size=_Typesetter.SIZES[1], bold=True)
    setter.blocks(cast(list[dict[str, Any]], parse(body)))
    return bytes(setter.pdf.output())


def reference_text(content: str, render: Callable[[str], str]) -> str:
    """A Markdown reference as the rendered page shows it: rendered, then its text."""
    return text_of(render(content)).strip()


def _renamed(corpus_id: str, kind: Kind) -> str:
    return str(Path(corpus_id).with_suffix(f".{kind}"))


def render(corpus: Path, questions: Path, out: Path, kind: Kind) -> tuple[Path, Path]:
    """The set rendered as ``kind`` under ``out`` (built when ``out`` has no questions file
    yet): the corpus folder and the questions file."""
    rendered, rewritten = out / "corpus", out / "questions.csv"
    if rewritten.is_file():
        return rendered, rewritten
    markdown = _markdown()
    for source in sorted(corpus.rglob("*.md")):
        target = rendered / _renamed(str(source.relative_to(corpus)), kind)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        if kind == "html":
            target.write_text(page_html(text, markdown), encoding="utf-8")
        else:
            target.write_bytes(page_pdf(text))
    with questions.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        references = json.loads(row["references"])
        row["references"] = json.dumps(
            [
                {
                    "content": reference_text(r["content"], markdown),
                    "corpus_id": _renamed(r.get("corpus_id") or row["corpus_id"], kind),
                }
                for r in references
            ]
        )
        row["corpus_id"] = _renamed(row["corpus_id"], kind)
    temporary = rewritten.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    temporary.replace(rewritten)  # last: a stopped build is rebuilt, never half used
    return rendered, rewritten
