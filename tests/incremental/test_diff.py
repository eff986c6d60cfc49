"""``kebab-chunk diff``: per-label ids added/removed/unchanged, documents, tokens to re-embed.

Expected values are computed from the two outputs' records read back independently
(``output_chunks``), not copied from an earlier diff.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.cli.diff import add_diff_parser, cmd_diff
from kebab_chunk.cli.exits import EXIT_CHANGED, EXIT_USAGE
from kebab_chunk.output.diff import compare_label, diff_outputs
from kebab_chunk.output.schema import SCHEMA_VERSION
from tests.beam.helpers import output_chunks
from tests.incremental.conftest import CHANGED, Runs


def _diff_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="kebab-chunk")
    add_diff_parser(parser.add_subparsers(dest="command"))
    status = cmd_diff(parser.parse_args(["diff", *argv]))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.slow
def test_diff_reports_exactly_the_changed_document(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = runs["full_v1"].output, runs["incr_v2"].output
    before = {c.chunk_id: c for c in output_chunks(old)}
    after = {c.chunk_id: c for c in output_chunks(new)}
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    assert added and removed

    status, out, _ = _diff_cli(capsys, str(old), str(new), "--json", "--fail-if-changed")
    assert status == EXIT_CHANGED
    report = json.loads(out)
    md = report["labels"][DEFAULT_LABELS_BY_MEDIA_TYPE["text/markdown"][0]]
    assert md["added_ids"] == added and md["removed_ids"] == removed
    assert md["unchanged"] == len(set(before) & set(after)) and md["modified"] == 0
    assert md["affected_sources"] == [CHANGED] and md["documents_affected"] == 1
    assert md["reembed_tokens"] == sum(after[i].token_estimate for i in added)
    assert md["unchanged"] / len(before) >= 0.95
    assert report["labels"]["pdf-page-v3"]["added"] == 0 and report["changed"] is True

    status, out, _ = _diff_cli(capsys, str(old), str(new))
    assert status == 0
    assert f"+{len(added)} added, -{len(removed)} removed" in out and CHANGED in out


@pytest.mark.slow
def test_identical_outputs_pass_the_ci_gate(runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    incr, full = runs["incr_v2"].output, runs["full_v2"].output
    status, out, _ = _diff_cli(capsys, str(incr), str(full), "--fail-if-changed")
    assert status == 0 and "no changes" in out
    diff = diff_outputs(str(incr), str(full))
    assert not diff.changed
    assert sum(d.unchanged for d in diff.labels) == len(output_chunks(full))


@pytest.mark.slow
def test_a_label_in_one_output_only_is_all_added_or_all_removed(runs: Runs) -> None:
    hybrid_only, both = runs["select_v2"].output, runs["labels_v2"].output
    md = [c for c in output_chunks(both) if c.chunker_version == "md-heading-v3"]
    assert md
    added = {d.label: d for d in diff_outputs(str(hybrid_only), str(both)).labels}
    assert added["md-heading-v3"].status == "only_new"
    assert added["md-heading-v3"].added == len(md) and not added["md-heading-v3"].removed
    assert added["md-heading-v3"].reembed_tokens == sum(c.token_estimate for c in md)
    assert added["md-heading-v3"].documents_affected == len({c.source_uri for c in md})
    assert not added["hybrid-v1"].changed
    removed = {d.label: d for d in diff_outputs(str(both), str(hybrid_only)).labels}
    assert removed["md-heading-v3"].status == "only_old"
    assert removed["md-heading-v3"].removed == len(md) and not removed["md-heading-v3"].added
    assert removed["md-heading-v3"].reembed_tokens == 0


def _row(text: str, position: int, tokens: int = 3) -> dict[str, Any]:
    return {
        "chunk_id": "x",
        "text": text,
        "heading_path": ["A"],
        "captions": [],
        "token_estimate": tokens,
        "doc_id": "d",
        "source_uri": "a.md",
        "position": position,
        "source_spans": [],
        "content_hash": "h",
        "parser_version": "p",
        "policy_hash": "q",
    }


def test_compare_label_separates_modified_from_relocated() -> None:
    old = {
        "same": _row("a", 0),
        "moved": _row("b", 1),
        "edited": _row("c", 2),
        "gone": _row("d", 3),
    }
    new = {
        "same": _row("a", 0),
        "moved": _row("b", 5),
        "edited": {**_row("c!", 2, tokens=7), "source_uri": "b.md"},
        "fresh": {**_row("e", 4, tokens=11), "source_uri": "c.md"},
    }
    d = compare_label("md-heading-v1", old, new)
    assert (d.added, d.removed, d.unchanged, d.modified, d.relocated) == (1, 1, 2, 1, 1)
    assert d.added_ids == ["fresh"] and d.removed_ids == ["gone"] and d.modified_ids == ["edited"]
    assert d.added_tokens == 11 and d.reembed_tokens == 11 + 7
    assert d.affected_sources == ["a.md", "b.md", "c.md"] and d.changed
    assert not compare_label("l", old, old).changed


#: The manifest of an output with no chunk, no error and no documents table: what every
#: reader relies on (kebab_chunk/output/finished.py) and nothing more.
_EMPTY_MANIFEST = {
    "schema_version": SCHEMA_VERSION,
    "policy_hash": "x",
    "chunkers": {"labels": []},
    "counts": {"chunks_total": 0},
    "accounting": {},
    "options": {},
    "outputs": {},
}


def test_missing_and_invalid_output_dirs_are_one_sentence_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good"
    (good / "chunks").mkdir(parents=True)
    (good / "manifest.json").write_text(json.dumps(_EMPTY_MANIFEST))
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    no_manifest = tmp_path / "no-manifest"
    no_manifest.mkdir()
    bad_json = tmp_path / "bad-json"
    bad_json.mkdir()
    (bad_json / "manifest.json").write_text("{not json")
    old_schema = tmp_path / "old-schema"
    (old_schema / "chunks").mkdir(parents=True)
    (old_schema / "manifest.json").write_text(
        json.dumps({**_EMPTY_MANIFEST, "schema_version": "kebab-chunk-parquet-v0"})
    )
    no_chunks = tmp_path / "no-chunks"
    no_chunks.mkdir()
    (no_chunks / "manifest.json").write_text((good / "manifest.json").read_text())
    cases = [
        (tmp_path / "missing", "does not exist"),
        (a_file, "is a file"),
        (no_manifest, "has no manifest.json"),
        (bad_json, "unreadable manifest.json"),
        (old_schema, "output schema 'kebab-chunk-parquet-v0'"),
        (no_chunks, "has no chunks/ directory"),
    ]
    for bad, needle in cases:
        for argv, role in (([str(bad), str(good)], "OLD_OUTPUT"), ([str(good), str(bad)], "NEW")):
            status, out, err = _diff_cli(capsys, *argv)
            assert status == EXIT_USAGE and not out
            line = err.strip()
            assert len(line.splitlines()) == 1, line
            assert line.startswith(f"kebab-chunk diff: error: {role}") and needle in line, line
    status, out, _ = _diff_cli(capsys, str(good), str(good), "--fail-if-changed")
    assert status == 0 and "no chunk partitions" in out
