"""``inspect`` and the HTML report name zero-chunk documents and warnings, from the
documents table, and still work on an output written before that table existed."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from kebab_chunk.output.reader import read_documents
from kebab_chunk.output.records import DocumentRow, Status
from kebab_chunk.output.schema import documents_table
from kebab_chunk.report.inspect import (
    MAX_LISTED_DOCUMENTS,
    MAX_WARNINGS_SHOWN,
    OutputData,
    load_output,
    render_text,
    summarize,
)
from kebab_chunk.report.report import render_report
from tests.report.helpers import parse_dom, run_cli

EMPTY = "notes/empty.txt"  # the fixture corpus's zero-chunk document


def _warned(output: Path) -> dict[str, list[str]]:
    """source_uri -> warnings of every document with warnings, read from the table."""
    rows = read_documents(str(output)).to_pylist()
    return {r["source_uri"]: r["warnings"] for r in rows if r["warnings"]}


def test_inspect_names_zero_chunk_documents_and_warning_texts(pipeline_output: Path) -> None:
    warned = _warned(pipeline_output)
    assert warned, "the fixture corpus has documents with warnings"
    result = run_cli(["inspect", str(pipeline_output)])
    assert result.status == 0, result.err
    lines = result.out.splitlines()
    start = lines.index("documents with zero chunks: 1")
    assert lines[start + 1] == f"  {EMPTY}"
    at = lines.index(f"documents with warnings: {len(warned)}")
    listed = lines[at + 1 :]
    for uri, warnings in warned.items():
        i = listed.index(f"  {uri}")
        assert listed[i + 1 : i + 1 + len(warnings)] == [f"    - {w}" for w in warnings]


def test_inspect_json_has_the_document_lists(pipeline_output: Path) -> None:
    result = run_cli(["inspect", str(pipeline_output), "--json"])
    documents = json.loads(result.out)["documents"]
    assert documents["zero_chunks"] == {"count": 1, "files": [EMPTY]}
    warned = _warned(pipeline_output)
    assert documents["with_warnings"]["count"] == len(warned)
    assert {d["source_uri"]: d["warnings"] for d in documents["with_warnings"]["documents"]} == (
        warned
    )


def test_report_lists_zero_chunk_documents_and_warnings(pipeline_output: Path) -> None:
    dom = parse_dom(render_report(load_output(str(pipeline_output))))
    (zero,) = dom.by_class("zero-chunks", "table")
    assert [n.text() for n in zero.by_class("source")] == [EMPTY]
    (table,) = dom.by_class("warnings", "table")
    shown = {}
    for row in table.find_all(lambda n: n.tag == "tr")[1:]:
        (source,) = row.by_class("source")
        shown[source.text()] = [li.text() for li in row.find_all(lambda n: n.tag == "li")]
    assert shown == _warned(pipeline_output)


def test_an_output_without_documents_table_still_reports(synthetic_output: Path) -> None:
    """hand-built by the report fixtures without a documents table, as older versions wrote"""
    assert not (synthetic_output / "documents").exists()
    result = run_cli(["inspect", str(synthetic_output)])
    assert result.status == 0, result.err
    assert "documents: no documents table (the output predates it)" in result.out
    html = render_report(load_output(str(synthetic_output)))
    (section,) = parse_dom(html).find_all(lambda n: n.attrs.get("id") == "documents")
    assert "no documents table" in section.text()


def _row(uri: str, status: Status, warnings: tuple[str, ...] = ()) -> DocumentRow:
    return DocumentRow(
        uri, None, None, None, None, 0, None, None, warnings, None, None, (), status, ()
    )


def test_long_lists_are_cut_and_say_how_many_more() -> None:
    n = MAX_LISTED_DOCUMENTS + 7
    many = [f"w{i}" for i in range(MAX_WARNINGS_SHOWN + 2)]
    rows = [_row(f"z{i:04d}.md", "zero_chunks") for i in range(n)]
    rows += [_row(f"w{i:04d}.md", "chunked", tuple(many)) for i in range(n)]
    table = documents_table(rows).select(["source_uri", "status", "warnings"])
    data = OutputData("out", {}, pa.table({}), pa.table({}), table)
    summary = summarize(data)
    zero, warned = summary["documents"]["zero_chunks"], summary["documents"]["with_warnings"]
    assert zero["count"] == n and len(zero["files"]) == MAX_LISTED_DOCUMENTS
    assert zero["files"] == sorted(zero["files"]) and zero["files"][0] == "z0000.md"
    assert warned["count"] == n and len(warned["documents"]) == MAX_LISTED_DOCUMENTS
    assert warned["documents"][0]["warnings"] == many[:MAX_WARNINGS_SHOWN]
    assert warned["documents"][0]["warnings_total"] == len(many)
    lines = render_text(summary).splitlines()
    assert lines.count("  (+7 more)") == 2 and "    - (+2 more)" in lines


def test_render_text_includes_the_documents_lists(pipeline_output: Path) -> None:
    text = render_text(summarize(load_output(str(pipeline_output))))
    assert f"\n  {EMPTY}\n" in text
