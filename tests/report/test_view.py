"""``kebab-chunk view``: highlights placed from spans alone, checked piece by piece.

For every chunk, the text of the highlighted pieces that name it (in page order) must be
exactly the text its spans cite; the page's text must be the source text. Both are read
back from the generated page with an HTML parser, so the checks see what a browser sees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.model import Chunk, ChunkPolicy, LineSpan
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.report.view import ViewResult, render_view
from tests.beam.helpers import records
from tests.report.conftest import POLICY
from tests.report.helpers import (
    CORPUS,
    FIXTURES,
    Node,
    chunk_indices,
    parse_dom,
    run_cli,
    write_output,
)

OVERLAP = ChunkPolicy(target_tokens=100, overlap_tokens=20)


#: The parser each v1 label's view tests were written against (pdf-text-v2 gives an empty
#: page no block and trims page text, which pdf-page-v1 is not about).
_PARSER_OF = {"pdf-page-v1": "pdf-text-v1"}


def _view(path: Path, label: str, policy: ChunkPolicy = OVERLAP, uri: str | None = None):
    raw = path.read_bytes()
    doc = parse_document(raw, uri or path.name, parser_version=_PARSER_OF.get(label))
    chunks = sorted(get_chunker(label).chunk(doc, policy), key=lambda c: c.position)
    result = render_view(doc, raw, chunks, chunker=label)
    return doc, chunks, result, parse_dom(result.html)


def _canvases(dom: Node) -> list[tuple[Node, str]]:
    """(section, its text) for each canvas, the text read from the ``td.tx`` cells."""
    out = []
    for section in dom.by_class("canvas", "section"):
        out.append((section, "".join(td.text() for td in section.by_class("tx", "td"))))
    return out


def _canvas_key(span) -> tuple[str, str]:
    if span.kind == "lines":
        return ("source", "")
    if span.kind == "page":
        return ("page", str(span.page))
    return ("element", span.ref)


def _assert_highlights_follow_spans(dom: Node, chunks: list[Chunk], result: ViewResult):
    """Per chunk: highlighted text (page order) == the text its spans cite in the page."""
    assert result.problems == []
    texts = {(s.attrs["data-kind"], s.attrs["data-name"]): t for s, t in _canvases(dom)}
    order = list(texts)
    assert len(dom.by_class("chunk-label")) == len(chunks)
    assert chunk_indices(dom) == set(range(len(chunks)))
    for i, chunk in enumerate(chunks):
        spans = sorted(
            chunk.source_spans, key=lambda s: (order.index(_canvas_key(s)), s.char_start)
        )
        expected = "".join(texts[_canvas_key(s)][s.char_start : s.char_end] for s in spans)
        got = "".join(n.text() for n in dom.by_class("hl") if str(i) in n.attrs["data-c"].split())
        assert got == expected, f"chunk {i}"


@pytest.mark.parametrize(
    ("fixture", "label"),
    [
        ("markdown/headings.md", "md-heading-v1"),
        ("markdown/headings.md", "md-header-chars-v1"),
        ("markdown/crlf-bom.md", "md-heading-v1"),
        ("markdown/long-section.md", "hybrid-v1"),
        ("markdown/unicode-tabs.md", "hierarchical-v1"),
    ],
)
def test_markdown_page_text_is_the_source_and_highlights_are_the_spans(fixture: str, label: str):
    path = FIXTURES / fixture
    _doc, chunks, result, dom = _view(path, label)
    decoded = path.read_bytes().decode("utf-8-sig", errors="replace")  # contract.md, "Data model"
    ((section, text),) = _canvases(dom)
    assert text == decoded
    _assert_highlights_follow_spans(dom, chunks, result)
    # each chunk's label sits in the margin of the line its first span starts on
    for label_node in dom.by_class("chunk-label"):
        i = int(label_node.attrs["data-chunk"])
        row = next(
            tr for tr in section.find_all(lambda n: n.tag == "tr") if label_node in list(tr.iter())
        )
        assert row.by_class("ln")[0].text() == str(chunks[i].source_spans[0].line_start)


def test_crlf_survives_into_the_page():
    _, _, _, dom = _view(FIXTURES / "markdown/crlf-bom.md", "md-heading-v1")
    ((_, text),) = _canvases(dom)
    assert "\r\n" in text


@pytest.mark.parametrize(
    ("fixture", "label"),
    [
        ("html/article.html", "hybrid-v1"),
        ("html/malformed.html", "hierarchical-v1"),
        ("html/cp1252-meta.html", "hierarchical-v1"),
        ("csv/inventory.csv", "hybrid-v1"),
        ("csv/semicolon.csv", "hierarchical-v1"),
    ],
)
def test_html_and_csv_sources_are_drawn_from_their_spans(fixture: str, label: str):
    _doc, chunks, result, dom = _view(FIXTURES / fixture, label)
    assert len(_canvases(dom)) == 1
    _assert_highlights_follow_spans(dom, chunks, result)


def test_cp1252_html_is_decoded_as_its_parser_decodes_it():
    _, _, _, dom = _view(FIXTURES / "html/cp1252-meta.html", "hierarchical-v1")
    ((_, text),) = _canvases(dom)
    raw = (FIXTURES / "html/cp1252-meta.html").read_bytes()
    assert "\ufffd" not in text and text == raw.decode("cp1252")


def test_pdf_has_one_section_per_page_with_overlap_drawn_distinctly():
    doc, chunks, result, dom = _view(CORPUS / "pdf/one-long-page.pdf", "pdf-page-v1")
    _assert_highlights_follow_spans(dom, chunks, result)
    overlaps = [n for n in dom.by_class("ov") if "hl" in n.classes]
    assert overlaps, "neighbouring page slices share text (overlap_tokens=20)"
    for piece in overlaps:
        assert len(piece.attrs["data-c"].split()) >= 2
    doc, chunks, result, dom = _view(CORPUS / "pdf/with-empty-page.pdf", "pdf-page-v1")
    sections = _canvases(dom)
    assert [s.attrs["data-name"] for s, _ in sections] == ["1", "2", "3", "4"]
    assert [t for _, t in sections] == [b.text for b in doc.blocks]
    assert "no extractable text" in sections[1][0].text()
    _assert_highlights_follow_spans(dom, chunks, result)


@pytest.mark.parametrize(
    ("fixture", "label"),
    [
        ("docx/report.docx", "hierarchical-v1"),
        ("docx/report.docx", "hybrid-v1"),
        ("docling/report.docling.json", "hybrid-v1"),
        ("docling/report.docling.json", "hierarchical-v1"),
    ],
)
def test_element_spans_are_drawn_per_element(fixture: str, label: str):
    doc, chunks, result, dom = _view(FIXTURES / fixture, label)
    sections = _canvases(dom)
    refs = [s.attrs["data-name"] for s, _ in sections]
    assert all(s.attrs["data-kind"] == "element" for s, _ in sections)
    cited = {s.ref for b in doc.blocks for s in b.spans}
    assert set(refs) == cited
    texts = dict(zip(refs, (t for _, t in sections), strict=True))
    for block in doc.blocks:  # a block citing a single element shows that element's text
        if len({s.ref for s in block.spans}) == 1:
            assert texts[block.spans[0].ref] == block.text
    _assert_highlights_follow_spans(dom, chunks, result)


def test_hostile_document_text_is_escaped(tmp_path: Path):
    source = (
        "# <script>alert(1)</script>\n\n"
        "</td></tr></table></section><img src=x onerror=alert(2)> &amp; &lt;\n\n"
        'A "quote" \x1b[31m red \x0c feed\r\n'
    )
    path = tmp_path / "evil.md"
    path.write_bytes(source.encode())
    _doc, chunks, result, dom = _view(path, "md-heading-v1")
    scripts = dom.find_all(lambda n: n.tag == "script")
    assert len(scripts) == 1 and "alert" not in scripts[0].text()  # only the page's own
    assert not dom.find_all(lambda n: n.tag == "img")
    ((_, text),) = _canvases(dom)
    assert text == source.replace("\x1b", "\u241b").replace("\x0c", "\u240c")
    _assert_highlights_follow_spans(dom, chunks, result)


def test_spans_that_do_not_fit_are_listed_not_drawn():
    path = FIXTURES / "markdown/headings.md"
    raw = path.read_bytes()
    doc = parse_document(raw, path.name)
    chunks = get_chunker("md-heading-v1").chunk(doc, OVERLAP)
    size = len(raw.decode("utf-8-sig"))
    beyond = chunks[0].model_copy(
        update={
            "source_spans": (LineSpan(line_start=1, line_end=1, char_start=0, char_end=size + 5),)
        }
    )
    first = chunks[1].source_spans[0]
    wrong_line = chunks[1].model_copy(
        update={
            "source_spans": (
                first.model_copy(
                    update={"line_start": first.line_start + 1, "line_end": first.line_end + 1}
                ),
            )
        }
    )
    result = render_view(doc, raw, [beyond, wrong_line, *chunks[2:]], chunker="md-heading-v1")
    assert len(result.problems) == 2
    assert "ends beyond Source" in result.problems[0]
    assert "are on lines" in result.problems[1]
    dom = parse_dom(result.html)
    assert 0 not in chunk_indices(dom)  # the out-of-range span is not drawn
    assert len(dom.find_all(lambda n: n.tag == "li" and "chunk #" in n.text())) == 2


def test_cli_view_uses_the_default_chunker_and_reports(tmp_path: Path):
    target = tmp_path / "view.html"
    result = run_cli(["view", str(FIXTURES / "markdown/headings.md"), "--html", str(target)])
    assert result.status == 0, result.err
    assert f"{DEFAULT_LABELS_BY_MEDIA_TYPE['text/markdown'][0]} chunks" in result.out
    dom = parse_dom(target.read_text(encoding="utf-8"))
    count = int(dom.find_all(lambda n: n.attrs.get("id") == "chunk-count")[0].text())
    assert count == len(dom.by_class("chunk-label")) > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fixtures/markdown/headings.md", "--label", "nope-v9"], "nope-v9"),
        (["fixtures/markdown/missing.md"], "does not exist"),
        (["fixtures/markdown/headings.md", "--target-tokens", "0"], "target_tokens"),
        (["fixtures/pdf/encrypted-real-password.pdf"], "encrypted"),
    ],
)
def test_cli_view_errors_are_one_sentence(args: list[str], message: str, tmp_path: Path):
    root = Path(__file__).resolve().parents[2]
    argv = [str(root / args[0]), *args[1:]]
    result = run_cli(["view", *argv, "--html", str(tmp_path / "v.html")])
    assert result.status == 2
    assert message in result.err and result.err.count("\n") == 1
    assert not (tmp_path / "v.html").exists()


def test_cli_view_without_a_default_chunker_asks_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from kebab_chunk.chunkers import registry

    monkeypatch.delitem(registry.DEFAULT_LABELS_BY_MEDIA_TYPE, "text/html", raising=False)
    html = str(FIXTURES / "html/article.html")
    result = run_cli(["view", html, "--html", str(tmp_path / "v.html")])
    assert result.status == 2
    assert "no default chunker for text/html; pass --label LABEL" in result.err


def test_cli_view_from_a_pipeline_output(pipeline_output: Path, tmp_path: Path):
    target = tmp_path / "view.html"
    pdf = CORPUS / "pdf/one-long-page.pdf"
    argv = ["view", str(pdf), "--root", str(CORPUS), "--from-output", str(pipeline_output)]
    result = run_cli([*argv, "--label", "pdf-page-v3", "--html", str(target)])
    assert result.status == 0, result.err
    dom = parse_dom(target.read_text(encoding="utf-8"))
    shown = {n.text() for n in dom.by_class("chunk-key")}
    manifest_policy = json.loads((pipeline_output / "manifest.json").read_text())["policy"]
    _, chunks, _, _ = _view(
        pdf, "pdf-page-v3", ChunkPolicy(**manifest_policy), "pdf/one-long-page.pdf"
    )
    assert shown == {c.chunk_id for c in chunks}
    assert [n for n in dom.by_class("ov") if "hl" in n.classes]


def test_cli_view_exits_1_when_an_output_has_a_bad_span(tmp_path: Path):
    path = FIXTURES / "markdown/headings.md"
    doc = parse_document(path.read_bytes(), "headings.md")
    chunks = records("md-heading-v1", doc, POLICY)
    bad = chunks[0].model_copy(
        update={"source_spans": (LineSpan(line_start=1, line_end=1, char_start=0, char_end=10**6),)}
    )
    out = write_output(
        tmp_path / "out",
        [bad, *chunks[1:]],
        [],
        POLICY,
        ["md-heading-v1"],
        {"headings.md": ("text/markdown", "chunked")},
    )
    result = run_cli(
        [
            "view",
            str(path),
            "--root",
            str(path.parent),
            "--from-output",
            str(out),
            "--label",
            "md-heading-v1",
            "--html",
            str(tmp_path / "v.html"),
        ]
    )
    assert result.status == 1
    assert "do not fit" in result.err and (tmp_path / "v.html").exists()
