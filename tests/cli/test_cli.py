"""The ``kebab-chunk`` command line: records that cite back exactly, and one-sentence errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, registered_labels
from kebab_chunk.cli import main
from kebab_chunk.parsers import parse_document

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kebab_chunk.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_labels_lists_every_registered_label(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["labels"]) == 0
    listed = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == registered_labels()


def test_labels_marks_each_default_with_its_media_types(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A user picking a label sees which ones a run applies when none is named, and for what."""
    assert main(["labels"]) == 0
    marks = {}
    for line in capsys.readouterr().out.splitlines():
        label, _, rest = line.partition("\t")
        found = re.search(r" \(default for ([^()]+)\)$", rest)
        marks[label] = found.group(1).split(", ") if found else []
    expected = {label: [] for label in registered_labels()}
    for media_type, labels in DEFAULT_LABELS_BY_MEDIA_TYPE.items():
        for label in labels:
            expected[label].append(media_type)
    assert marks == expected
    assert any(marks.values()) and not all(marks.values())


def test_chunk_readme_records_slice_back_exactly() -> None:
    result = _run("chunk", "README.md", "--label", "md-heading-v1", "--target-tokens", "128")
    assert result.returncode == 0, result.stderr
    source = (ROOT / "README.md").read_bytes().decode("utf-8-sig")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) > 3
    assert [r["position"] for r in records] == list(range(len(records)))
    assert len({r["chunk_id"] for r in records}) == len(records)
    # Image and audio references are the documented exception: their chunk text is the alt
    # text / caption, and their span cites the reference itself.
    doc = parse_document((ROOT / "README.md").read_bytes(), "README.md")
    media = {b.block_id: b for b in doc.blocks if b.kind in ("image_ref", "audio_ref")}
    for record in records:
        assert record["source_uri"] == "README.md"
        spans = record["source_spans"]
        if record["block_ids"][0] in media:
            block = media[record["block_ids"][0]]
            assert record["text"] in (block.text, getattr(block, "alt", ""), block.caption or "")
            assert source[spans[0]["char_start"] : spans[0]["char_end"]] == block.text
            continue
        assert all(s["kind"] == "lines" for s in spans)
        cited = source[spans[0]["char_start"] : spans[-1]["char_end"]]
        assert cited == record["text"]
        first_line = source.count("\n", 0, spans[0]["char_start"]) + 1
        assert spans[0]["line_start"] == first_line


def test_chunk_output_is_identical_across_hash_seeds() -> None:
    outputs = {
        _run("chunk", "README.md", "--label", "md-heading-v1", env={"PYTHONHASHSEED": s}).stdout
        for s in ("0", "1", "12345")
    }
    assert len(outputs) == 1 and next(iter(outputs))


def test_root_makes_source_uri_relative(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    target = tmp_path / "docs" / "a.md"
    target.write_text("# A\n\nSome text.\n", encoding="utf-8")
    result = _run("chunk", str(target), "--label", "md-heading-v1", "--root", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert {json.loads(x)["source_uri"] for x in result.stdout.splitlines()} == {"docs/a.md"}


def test_parse_prints_a_canonical_document() -> None:
    result = _run("parse", "README.md")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["parser_version"] == "md-pyromark-v1" and doc["source_uri"] == "README.md"
    assert doc["title"] == "kebab-chunk"


#: A PDF with an outline: the default parser (pdf-text-v2) makes heading blocks from it.
OUTLINED_PDF = "fixtures/pdf-text-v2/outlined-report.pdf"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["chunk", "README.md", "--label", "nope-v9"], "unknown chunker label 'nope-v9'"),
        (
            ["chunk", "README.md", "--label", "md-heading-v1", "--target-tokens", "0"],
            "target_tokens must be > 0",
        ),
        (
            ["chunk", "README.md", "--label", "md-heading-v1", "--overlap-tokens", "900"],
            "overlap_tokens",
        ),
        (["chunk", "missing.md", "--label", "md-heading-v1"], "missing.md does not exist"),
        (["chunk", "fixtures", "--label", "md-heading-v1"], "is a directory"),
        (["chunk", "README.md"], "--label"),
        (["chunk", "README.md", "--label", "md-heading-v1", "--bogus"], "--bogus"),
        (
            ["chunk", "README.md", "--label", "pdf-page-v1"],
            "pdf-page-v1 needs every block to be a paragraph citing one exact page range",
        ),
        (
            ["chunk", OUTLINED_PDF, "--label", "pdf-page-v1"],
            f"pdf-page-v1 needs blocks from parser pdf-text-v1, but {OUTLINED_PDF} was parsed by "
            "pdf-text-v3; pass --parsers pdf-text-v1",
        ),
    ],
)
def test_user_errors_are_one_sentence_and_exit_2(args: list[str], needle: str) -> None:
    result = _run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]
    assert "Traceback" not in result.stderr


def test_the_parser_the_refusal_names_is_the_fix() -> None:
    result = _run("chunk", OUTLINED_PDF, "--label", "pdf-page-v1", "--parsers", "pdf-text-v1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('"chunker_version":"pdf-page-v1"') > 0


@pytest.mark.parametrize(
    "path",
    [
        "fixtures/docx/report.docx",
        "fixtures/html/article.html",
        "fixtures/csv/inventory.csv",
        "fixtures/corpus/notes/release-notes-2.4.txt",
        "fixtures/corpus/guides/configuration.md",
        "fixtures/pdf/one-long-page.pdf",
        "fixtures/docling/report.docling.json",
    ],
)
def test_hybrid_contextualised_counts_never_exceed_max_tokens(path: str) -> None:
    """Issue 5's done-line: every format, cl100k_base, --max-tokens 256 (and a tight 48)."""
    from kebab_chunk.chunkers.contextualize import contextualize
    from kebab_chunk.model import Chunk
    from kebab_chunk.tokenizers import get_tokenizer

    count = get_tokenizer("tiktoken:cl100k_base").count_tokens
    for limit in ("256", "48"):
        result = _run(
            "chunk",
            path,
            "--label",
            "hybrid-v1",
            "--tokenizer",
            "cl100k_base",
            "--max-tokens",
            limit,
            "--target-tokens",
            limit,
            "--overlap-tokens",
            "0",
        )
        assert result.returncode == 0, result.stderr
        chunks = [Chunk.model_validate_json(line) for line in result.stdout.splitlines()]
        assert chunks, f"{path} gave no chunks"
        for chunk in chunks:
            assert chunk.token_estimate == count(contextualize(chunk))
            assert chunk.token_estimate <= int(limit), (path, limit, chunk.text[:80])


def test_one_unparseable_file_is_reported_and_the_others_still_chunk() -> None:
    result = _run(
        "chunk",
        "fixtures/docx/not-a-zip.docx",
        "fixtures/docx/report.docx",
        "--label",
        "hierarchical-v1",
    )
    assert result.returncode == 1
    assert "not-a-zip.docx" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    uris = {json.loads(line)["source_uri"] for line in result.stdout.splitlines()}
    assert uris == {"fixtures/docx/report.docx"}
