"""``kebab-chunk inspect``: numbers checked against hand-computed values and the manifest."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.beam.manifest import MANIFEST_NAME
from kebab_chunk.output.diff import diff_outputs
from kebab_chunk.output.reader import read_chunks
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.report.inspect import (
    compare_outputs,
    load_output,
    percentiles,
    render_text,
    safe_text,
    summarize,
)
from tests.report.conftest import POLICY, synthetic_parts
from tests.report.helpers import chunks_with_tokens, make_doc, run_cli, write_output


def _nearest_rank(values: list[int], q: int) -> int:
    """The textbook definition: the smallest value with at least q % of values <= it."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=300))
def test_percentiles_are_nearest_rank(values: list[int]):
    got = percentiles(values)
    for q in (50, 90, 99):
        assert got[f"p{q}"] == _nearest_rank(values, q)
    assert got["max"] == max(values)


def test_percentiles_of_nothing_are_zero():
    assert percentiles([]) == {"p50": 0, "p90": 0, "p99": 0, "max": 0}


def test_summary_per_label_matches_hand_computed_numbers(synthetic_output: Path):
    summary = summarize(load_output(str(synthetic_output)), top=3)
    md, pdf = summary["labels"]
    assert md["label"] == "md-heading-v1"
    assert (md["documents"], md["chunks"]) == (2, 101)
    # 101 values 1..100 and 200: ranks ceil(50.5)=51, ceil(90.9)=91, ceil(99.99)=100.
    assert {k: md["tokens"][k] for k in ("p50", "p90", "p99", "max")} == {
        "p50": 51,
        "p90": 91,
        "p99": 100,
        "max": 200,
    }
    assert md["tokens"]["total"] == sum(range(1, 101)) + 200
    assert md["over_target"] == 51  # 51..100 and 200 exceed target 50
    assert [(c["token_estimate"], c["source_uri"], c["position"]) for c in md["largest"]] == [
        (200, "b.md", 0),
        (100, "a.md", 99),
        (99, "a.md", 98),
    ]
    assert pdf["label"] == "pdf-page-v1"
    assert (pdf["documents"], pdf["chunks"], pdf["over_target"]) == (1, 3, 0)
    assert (pdf["tokens"]["p50"], pdf["tokens"]["p90"], pdf["tokens"]["max"]) == (20, 30, 30)
    assert summary["policy"]["target_tokens"] == POLICY.target_tokens
    assert summary["files"] == {
        "matched": 7,
        "chunked": 3,
        "zero_chunks": 1,
        "errors": 3,
        "skipped": 0,
        "accounting_closes": True,
        "with_warnings": 0,
    }


def test_errors_are_grouped_by_stage_and_type_with_examples(synthetic_output: Path):
    errors = summarize(load_output(str(synthetic_output)))["errors"]
    assert errors["rows"] == 3
    assert [(g["stage"], g["error_type"], g["count"], g["examples"]) for g in errors["groups"]] == [
        ("parse", "binary_content", 2, ["y.md", "z.md"]),
        ("read", "too_large", 1, ["big.pdf"]),
    ]
    assert errors["groups"][0]["message"] == "y.md contains NUL bytes"


def test_over_max_is_counted_when_the_policy_has_max_tokens(tmp_path: Path):
    policy = POLICY.model_copy(update={"max_tokens": 25})
    doc = make_doc("a.md")
    chunks = chunks_with_tokens(doc, "md-heading-v1", [10, 25, 26, 60], policy)
    out = write_output(
        tmp_path / "o",
        chunks,
        [],
        policy,
        ["md-heading-v1"],
        {"a.md": ("text/markdown", "chunked")},
    )
    (label,) = summarize(load_output(str(out)))["labels"]
    assert (label["over_target"], label["max_tokens"], label["over_max"]) == (1, 25, 2)


def test_terminal_text_names_every_label_and_error_group(synthetic_output: Path):
    text = render_text(summarize(load_output(str(synthetic_output))))
    lines = text.splitlines()
    md_row = next(line for line in lines if line.strip().startswith("md-heading-v1"))
    assert md_row.split() == ["md-heading-v1", "2", "101", "51", "91", "100", "200", "51"]
    assert "parse/binary_content: 2  e.g. y.md, z.md" in text
    assert "files matched 7 = chunked 3 + zero chunks 1 + errors 3 (closes)" in text


def test_hostile_names_cannot_drive_the_terminal(tmp_path: Path):
    chunks, errors, media = synthetic_parts()
    evil = "evil\x1b]0;pwned\x07\x1b[31m.md"
    errors.append(ErrorRecord(evil, "parse", "parse_error", "bad\x1b[2Jmessage\nline2", None))
    media[evil] = ("text/markdown", "errors")
    out = write_output(tmp_path / "o", chunks, errors, POLICY, ["md-heading-v1"], media)
    text = render_text(summarize(load_output(str(out))))
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b]0;pwned\\x07\\x1b[31m.md" in text
    assert safe_text("a\tb\nc") == "a\tb c"


def test_json_output_is_the_summary(synthetic_output: Path):
    result = run_cli(["inspect", str(synthetic_output), "--json", "--top", "2"])
    assert result.status == 0, result.err
    assert json.loads(result.out) == summarize(load_output(str(synthetic_output)), top=2)


def test_compare_counts_added_removed_unchanged_and_tokens(
    synthetic_output: Path, older_output: Path
):
    comparison = compare_outputs(load_output(str(older_output)), load_output(str(synthetic_output)))
    by_label = {c["label"]: c for c in comparison["labels"]}
    md = by_label["md-heading-v1"]
    assert (md["old_chunks"], md["new_chunks"]) == (101, 101)
    assert (md["added"], md["removed"], md["unchanged"]) == (1, 1, 100)
    assert (md["modified"], md["relocated"]) == (0, 0)
    assert (md["documents_affected"], md["reembed_tokens"]) == (2, 200)  # b.md added, d.md gone
    pdf = by_label["pdf-page-v1"]
    assert (pdf["old_chunks"], pdf["added"], pdf["reembed_tokens"]) == (0, 3, 60)
    # the same figures as `kebab-chunk diff`
    diff = diff_outputs(str(older_output), str(synthetic_output)).to_json()["labels"]
    for c in comparison["labels"]:
        for key in ("added", "removed", "unchanged", "modified", "relocated", "reembed_tokens"):
            assert c[key] == diff[c["label"]][key]
    result = run_cli(["inspect", str(synthetic_output), "--compare", str(older_output)])
    assert result.status == 0
    assert "compare " in result.out
    assert [r.split()[:6] for r in result.out.splitlines() if r.strip().startswith("md-")][-1] == [
        "md-heading-v1",
        "101",
        "101",
        "1",
        "1",
        "100",
    ]


def test_not_an_output_is_one_sentence(tmp_path: Path):
    result = run_cli(["inspect", str(tmp_path)])
    assert result.status == 2
    assert result.err.count("\n") == 1
    assert "has no manifest.json" in result.err and "completed run" in result.err
    (tmp_path / MANIFEST_NAME).write_text("{not json")
    result = run_cli(["inspect", str(tmp_path)])
    assert result.status == 2 and "unreadable manifest.json" in result.err


def test_real_pipeline_output_agrees_with_its_manifest(pipeline_output: Path):
    data = load_output(str(pipeline_output))
    summary = summarize(data)
    manifest = json.loads((pipeline_output / MANIFEST_NAME).read_text())
    counts = manifest["counts"]
    assert [lab["label"] for lab in summary["labels"]] == manifest["chunkers"]["labels"]
    assert {lab["label"]: lab["chunks"] for lab in summary["labels"] if lab["chunks"]} == counts[
        "chunks_by_label"
    ]  # a label that ran but made nothing is listed with 0
    assert summary["errors"]["rows"] == counts["error_rows"]
    grouped: dict[str, dict[str, int]] = {}
    for g in summary["errors"]["groups"]:
        grouped.setdefault(g["stage"], {})[g["error_type"]] = g["count"]
    assert grouped == counts["errors_by_stage"]
    table = read_chunks(
        str(pipeline_output), columns=["chunker_version", "doc_id", "token_estimate"]
    )
    for lab in summary["labels"]:
        rows = [r for r in table.to_pylist() if r["chunker_version"] == lab["label"]]
        assert lab["documents"] == len({r["doc_id"] for r in rows})
        assert lab["tokens"]["max"] == max((r["token_estimate"] for r in rows), default=0)
        assert lab["over_target"] == sum(r["token_estimate"] > 200 for r in rows)
    assert summary["files"]["accounting_closes"] is True
    text = run_cli(["inspect", str(pipeline_output)]).out
    for label in counts["chunks_by_label"]:
        assert label in text
