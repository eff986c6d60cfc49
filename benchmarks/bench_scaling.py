"""Growth of parse + chunk time with document size, per format and shape.

A production corpus holds the odd huge file: a 60,000-item list exported to DOCX, a
Markdown changelog of 100,000 paragraphs. Time must grow linearly with such a document,
or one file stalls a worker. For each synthetic shape, the default parser and default
label of its media type run on ``n`` and ``4n`` units; the figure is the growth exponent
``log(t(4n) / t(n)) / log 4`` of the median CPU time (1 is linear, 2 quadratic). Target:
below 1.3 for every shape; ``verdict`` says which shapes miss it.
"""

from __future__ import annotations

import io
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from kebab_chunk import get_chunker, make_policy, parse_document
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE

TARGET_EXPONENT = 1.3


def _markdown(unit: str) -> Callable[[int], tuple[bytes, str]]:
    return lambda n: ("".join(unit.format(i=i) for i in range(n)).encode(), "doc.md")


def _html(n: int) -> tuple[bytes, str]:
    items = "".join(f"<li>item {i} with a few words</li>" for i in range(n))
    return f"<html><body><h1>List</h1><ul>{items}</ul></body></html>".encode(), "doc.html"


def _html_table(n: int) -> tuple[bytes, str]:
    rows = "".join(f"<tr><td>{i}</td><td>cell {i}</td></tr>" for i in range(n))
    return f"<table><tr><th>a</th><th>b</th></tr>{rows}</table>".encode(), "doc.html"


def _html_sections(n: int) -> tuple[bytes, str]:
    return "".join(f"<h2>S{i}</h2><p>Text of section {i}.</p>" for i in range(n)).encode(), "d.html"


def _csv(n: int) -> tuple[bytes, str]:
    rows = "".join(f"{i},item {i},a note\n" for i in range(n))
    return f"id,name,note\n{rows}".encode(), "d.csv"


def _docx(style: str) -> Callable[[int], tuple[bytes, str]]:
    def make(n: int) -> tuple[bytes, str]:
        import docx  # the docx extra's dependency, imported only when this shape runs

        document = docx.Document()
        for i in range(n):
            document.add_paragraph(f"item {i} with a few words", style=style)
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer.getvalue(), "doc.docx"

    return make


def _pdf_list_lines(n: int) -> tuple[bytes, str]:
    """One tall page of ``n // 8`` numbered lines (a PDF page holds at most 14,400 pt, so
    the page gets an eighth of the units): pdf-page-v3 keeps each marker with its item."""
    from fpdf import FPDF  # a dev dependency, imported only when this shape runs

    lines = max(1, n // 8)
    pdf = FPDF(unit="pt", format=(300, lines * 1.2 + 20))
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=1)
    for i in range(lines):
        pdf.text(5, 10 + i * 1.2, f"{i % 999}. Item {i} says a little.")
    return bytes(pdf.output()), "doc.pdf"


SHAPES: dict[str, Callable[[int], tuple[bytes, str]]] = {
    "markdown paragraphs": _markdown("Paragraph {i} with a few words.\n\n"),
    "markdown list items": _markdown("- item {i} with a few words\n"),
    "markdown sections": _markdown("## Section {i}\n\nText of section {i}.\n\n"),
    "markdown table rows": lambda n: (
        ("| a | b |\n|---|---|\n" + "".join(f"| {i} | cell {i} |\n" for i in range(n))).encode(),
        "doc.md",
    ),
    "markdown sentences": _markdown("Sentence {i} with a few words. "),
    "html list items": _html,
    "html table rows": _html_table,
    "html sections": _html_sections,
    "text lines": lambda n: ("".join(f"line {i} of text\n" for i in range(n)).encode(), "d.txt"),
    "csv rows": _csv,
    "docx list items": _docx("List Bullet"),
    "docx paragraphs": _docx("Normal"),
    "pdf numbered lines (n/8 per page)": _pdf_list_lines,
}


def _cpu_seconds(raw: bytes, name: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        document = parse_document(raw, name)
        for label in DEFAULT_LABELS_BY_MEDIA_TYPE[document.media_type]:
            get_chunker(label).chunk(document, make_policy())
        times.append(time.process_time() - start)
    return statistics.median(times)


def run(quick: bool = False) -> dict[str, Any]:
    """Per shape: ``n``, median CPU seconds at ``n`` and ``4n``, the growth exponent."""
    n, repeats = (1_000, 1) if quick else (16_000, 3)
    figures: dict[str, Any] = {"units": n, "target_exponent": TARGET_EXPONENT}
    missed = []
    for shape, make in SHAPES.items():
        small, large = (_cpu_seconds(*make(size), repeats) for size in (n, 4 * n))
        exponent = math.log(max(large, 1e-6) / max(small, 1e-6)) / math.log(4)
        figures[shape] = {
            "seconds_n": round(small, 3),
            "seconds_4n": round(large, 3),
            "exponent": round(exponent, 2),
        }
        if exponent >= TARGET_EXPONENT:
            missed.append(shape)
    figures["verdict"] = "all shapes linear" if not missed else "superlinear: " + ", ".join(missed)
    return figures
