"""The viewer and the report opened in a real browser (headless Chromium).

Each page is loaded once with ``--dump-dom`` and ``--screenshot`` together: the DOM is
read after the page's own script ran (the viewer records how many chunks have a
highlight laid out on screen), the console must stay silent, and the screenshot must
show the highlight and chart colours, so the page really rendered.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.report.inspect import load_output
from kebab_chunk.report.report import render_report
from kebab_chunk.report.view import render_view
from tests.browser.conftest import require_chromium
from tests.report.conftest import POLICY, synthetic_parts
from tests.report.helpers import CORPUS, FIXTURES, chunk_indices, parse_dom, write_output

OVERLAP = ChunkPolicy(target_tokens=100, overlap_tokens=20)
HIGHLIGHT = {"c0": "#d6e9ff", "c1": "#ffe7c2", "ov": "#f3c1f0"}


def _pixels(png: Path, colour: str, tolerance: int = 3) -> int:
    """How many screenshot pixels have ``colour`` (within ``tolerance`` per channel)."""
    image = imread(png)[..., :3] * 255.0
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
    return int((np.abs(image - rgb) <= tolerance).all(axis=-1).sum())


def test_missing_chromium_fails_and_names_the_install_script(tmp_path: Path):
    with pytest.raises(pytest.fail.Exception, match=r"tests/browser/ensure_chromium\.sh"):
        require_chromium(tmp_path / "no-chromium")


def test_console_errors_are_caught(open_in_chromium, tmp_path: Path):
    """Control: a page with a script error must show up in the console lines we check."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>undefinedFunction();</script>")
    rendered = open_in_chromium(page, 400, 300)
    assert any("undefinedFunction" in line for line in rendered.console)


@pytest.mark.parametrize(
    ("path", "label"),
    [
        (CORPUS / "guides/installation.md", "md-heading-v1"),
        (CORPUS / "pdf/one-long-page.pdf", "pdf-page-v1"),
        (FIXTURES / "html/article.html", "hybrid-v1"),
    ],
    ids=["markdown", "pdf", "html"],
)
def test_view_renders_one_highlight_per_chunk(open_in_chromium, tmp_path: Path, path, label):
    raw = path.read_bytes()
    doc = parse_document(raw, path.name)
    chunks = get_chunker(label).chunk(doc, OVERLAP)
    result = render_view(doc, raw, chunks, chunker=label)
    assert result.problems == []
    page = tmp_path / "view.html"
    page.write_text(result.html, encoding="utf-8")

    rendered = open_in_chromium(page)

    assert rendered.console == []
    dom = parse_dom(rendered.dom)
    (body,) = dom.find_all(lambda n: n.tag == "body")
    assert body.attrs["data-visible-chunks"] == str(len(chunks))  # laid out on screen
    assert chunk_indices(dom) == set(range(len(chunks)))
    assert len(dom.by_class("chunk-label")) == len(chunks)
    image = imread(rendered.screenshot)
    assert image.shape[1] == 1280
    assert _pixels(rendered.screenshot, HIGHLIGHT["c0"]) > 500
    if len(chunks) > 1:
        assert _pixels(rendered.screenshot, HIGHLIGHT["c1"]) > 500
    if label == "pdf-page-v1":
        assert _pixels(rendered.screenshot, HIGHLIGHT["ov"]) > 100  # the hatched overlap


def test_report_renders_its_charts_and_tables(open_in_chromium, tmp_path: Path):
    chunks, errors, media = synthetic_parts()
    labels = ["md-heading-v1", "pdf-page-v1"]
    new = write_output(tmp_path / "new", chunks, errors, POLICY, labels, media)
    old = write_output(
        tmp_path / "old",
        [c for c in chunks if c.source_uri == "a.md"],
        [],
        POLICY,
        ["md-heading-v1"],
        {"a.md": ("text/markdown", "chunked")},
    )
    page = tmp_path / "report.html"
    page.write_text(render_report(load_output(str(new)), load_output(str(old))), encoding="utf-8")

    rendered = open_in_chromium(page, 1280, 2400)

    assert rendered.console == []
    dom = parse_dom(rendered.dom)
    assert len(dom.find_all(lambda n: n.tag == "svg")) == 3
    (table,) = dom.by_class("labels", "table")
    assert len(table.find_all(lambda n: n.tag == "tr")) == 1 + len(labels)
    (errors_table,) = dom.by_class("errors", "table")
    assert "binary_content" in errors_table.text()
    assert dom.by_class("compare", "table")
    # the size histogram's first label is drawn in blue, the media chart's "chunked" in green
    assert _pixels(rendered.screenshot, "#2f6db5") > 500
    assert _pixels(rendered.screenshot, "#3a9a5b") > 500
