"""The report of a real pipeline output, opened in headless Chromium, names the document
that gave zero chunks and the documents with warnings (from the documents table)."""

from __future__ import annotations

from pathlib import Path

from kebab_chunk.parsers.registry import parse_document
from tests.report.helpers import parse_dom, run_cli, run_pipeline

EMPTY = "drafts/empty.md"
LATIN = "legacy.txt"


def test_report_in_chromium_shows_the_zero_chunk_document(open_in_chromium, tmp_path: Path):
    corpus = tmp_path / "corpus"
    (corpus / "drafts").mkdir(parents=True)
    (corpus / EMPTY).write_bytes(b"")
    (corpus / "guide.md").write_text("# Guide\n\nSome text to chunk.\n", encoding="utf-8")
    (corpus / LATIN).write_bytes("Caf\u00e9 cr\u00e8me, na\u00efve.\n".encode("latin-1"))
    output = run_pipeline(corpus, tmp_path / "out")
    page = tmp_path / "report.html"
    result = run_cli(["report", str(output), "--html", str(page)])
    assert result.status == 0, result.err

    rendered = open_in_chromium(page)

    assert rendered.console == []
    dom = parse_dom(rendered.dom)
    (zero,) = dom.by_class("zero-chunks", "table")
    assert [n.text() for n in zero.by_class("source")] == [EMPTY]
    (heading,) = dom.find_all(lambda n: n.attrs.get("id") == "zero-chunks")
    assert heading.text() == "Zero chunks (1)"
    (warnings,) = dom.by_class("warnings", "table")
    assert [n.text() for n in warnings.by_class("source")] == [LATIN]
    expected = parse_document((corpus / LATIN).read_bytes(), LATIN).warnings
    assert expected  # the parser warns about the bytes that are not UTF-8
    assert [li.text() for li in warnings.find_all(lambda n: n.tag == "li")] == list(expected)
