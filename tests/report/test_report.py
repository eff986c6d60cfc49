"""``kebab-chunk report``: a self-contained, escaped, deterministic HTML page."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.report.inspect import load_output
from kebab_chunk.report.report import render_report
from tests.report.conftest import POLICY, synthetic_parts
from tests.report.helpers import parse_dom, run_cli, write_output

#: Attributes through which a page could fetch something.
_FETCHING = re.compile(
    r"""\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?!#)([^"'\s>]+)""", re.I
)


def _fetched_urls(html: str) -> list[str]:
    """Every src/href-like attribute value that is not an in-page fragment."""
    return [m.group(1) for m in _FETCHING.finditer(html)]


@pytest.fixture(scope="module")
def compared_html(synthetic_output: Path, older_output: Path) -> str:
    """The report of the synthetic output compared with the older one (rendered once)."""
    return render_report(load_output(str(synthetic_output)), load_output(str(older_output)))


def test_report_is_self_contained(compared_html: str):
    html = compared_html
    assert _fetched_urls(html) == []
    assert "<link" not in html and "@import" not in html
    css_urls = re.findall(r"url\(\s*['\"]?([^)'\"]*)", html)
    assert css_urls and all(u.startswith("#") for u in css_urls)  # only in-page clip paths
    assert "default-src 'none'" in html  # CSP: the browser refuses any fetch anyway
    dom = parse_dom(html)
    svgs = dom.find_all(lambda n: n.tag == "svg")
    assert len(svgs) == 3  # sizes, media types, comparison overlay
    for svg in svgs:
        # histogram bars and stacked bars are drawn as paths inside the inline SVG
        assert len(svg.find_all(lambda n: n.tag == "path")) > 5


def test_report_tables_carry_the_summary(compared_html: str):
    dom = parse_dom(compared_html)
    (labels,) = dom.by_class("labels", "table")
    rows = [
        [td.text() for td in tr.find_all(lambda n: n.tag == "td")]
        for tr in labels.find_all(lambda n: n.tag == "tr")
    ][1:]
    assert rows[0] == [
        "md-heading-v1",
        "2",
        "101",
        "5250",
        "1",
        "52.0",
        "51",
        "91",
        "100",
        "200",
        "51",
    ]
    assert rows[1][:3] == ["pdf-page-v1", "1", "3"]
    (errors,) = dom.by_class("errors", "table")
    assert "y.mdz.md" in errors.text()  # examples, one per line
    (media,) = dom.by_class("media", "table")
    assert "text/plain" in media.text()
    (compare,) = dom.by_class("compare", "table")
    first = [td.text() for td in compare.find_all(lambda n: n.tag == "td")][:10]
    # label, old, new, added, removed, unchanged, modified, relocated, docs affected, re-embed
    assert first == ["md-heading-v1", "101", "101", "1", "1", "100", "0", "0", "2", "200"]


def test_hostile_strings_are_escaped(tmp_path: Path):
    chunks, errors, media = synthetic_parts()
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>.md'
    errors.append(ErrorRecord(evil, "parse", "parse_error", "<u>bold</u> & </td></tr>", None))
    media[evil] = ("text/markdown", "errors")
    out = write_output(tmp_path / "o", chunks, errors, POLICY, ["md-heading-v1"], media)
    html = render_report(load_output(str(out)))
    assert "<script>alert" not in html and "<img" not in html and "<u>bold" not in html
    dom = parse_dom(html)
    assert not dom.find_all(lambda n: n.tag in ("script", "img", "u"))
    assert evil in dom.text() and "<u>bold</u> & </td></tr>" in dom.text()


def test_report_is_deterministic(synthetic_output: Path, older_output: Path, compared_html: str):
    again = render_report(load_output(str(synthetic_output)), load_output(str(older_output)))
    assert again == compared_html


def test_cli_writes_the_report_of_a_real_output(pipeline_output: Path, tmp_path: Path):
    target = tmp_path / "report.html"
    result = run_cli(["report", str(pipeline_output), "--html", str(target)])
    assert result.status == 0, result.err
    assert str(target) in result.out
    dom = parse_dom(target.read_text(encoding="utf-8"))
    (labels,) = dom.by_class("labels", "table")
    assert {"md-heading-v3", "pdf-page-v3"} <= {
        tr.find_all(lambda n: n.tag == "td")[0].text()
        for tr in labels.find_all(lambda n: n.tag == "tr")[1:]
    }


def test_without_matplotlib_the_report_is_written_with_a_note_per_chart(
    synthetic_output: Path, older_output: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """matplotlib is the optional ``report`` extra ("charts in the HTML report"): without it
    the report was refused; now every table is there and each chart is a one-line note."""
    for name in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    target = tmp_path / "report.html"
    result = run_cli(
        ["report", str(synthetic_output), "--html", str(target), "--compare", str(older_output)]
    )
    assert result.status == 0, result.err
    assert "matplotlib is not installed" in result.err and result.err.count("\n") == 1
    dom = parse_dom(target.read_text(encoding="utf-8"))
    assert not dom.find_all(lambda n: n.tag == "svg")
    notes = [n.text() for n in dom.by_class("note", "p") if "matplotlib" in n.text()]
    assert len(notes) == 3  # sizes, media types, comparison overlay
    for table in ("labels", "media", "errors", "compare"):
        assert dom.by_class(table, "table")


def test_cli_refuses_an_unwritable_target(synthetic_output: Path, tmp_path: Path):
    result = run_cli(["report", str(synthetic_output), "--html", str(tmp_path / "no" / "r.html")])
    assert result.status == 2
    assert "does not exist" in result.err and result.err.count("\n") == 1


def test_cli_never_writes_over_a_file_of_an_output(pipeline_output: Path, tmp_path: Path):
    """``--html`` naming the output's manifest or a part file (also through a link) is
    refused before anything is written; the output stays whole (issue 29, item 2)."""
    out = tmp_path / "out"
    shutil.copytree(pipeline_output, out)
    link = tmp_path / "out_link"
    link.symlink_to(out, target_is_directory=True)
    part = next(out.glob("chunks/*/*.parquet"))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for target in (link / "manifest.json", part):
        result = run_cli(["report", str(out), "--html", str(target)])
        assert result.status == 2 and "would overwrite a file of the output" in result.err
        assert result.err.count("\n") == 1
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    beside = out / "report.html"  # beside the output's files: allowed
    assert run_cli(["report", str(out), "--html", str(beside)]).status == 0
