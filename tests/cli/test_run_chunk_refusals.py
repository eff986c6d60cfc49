"""``kebab-chunk run``: a label that cannot chunk a document, or whose chunks of it would
exceed the output limit, gives one error row saying why and what to do.

Real pipeline runs on the DirectRunner over one-file corpora, checked through the error
table: pdf-page-v1 on a PDF the default parser (pdf-text-v2) gives outline headings names
the parser to pin (issue 29, item 14); hybrid-v3 on a CSV whose header row is wider than
its rows repeats the header on every chunk, and the output limit turns that into one
``limit_exceeded`` row instead of ~140 M characters in the launching process (item 7).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kebab_chunk.cli.run import main
from kebab_chunk.output.reader import read_errors
from tests.beam.helpers import QUIET, output_chunks, quiet_beam

pytestmark = pytest.mark.slow
quiet_beam()

REPO = Path(__file__).resolve().parents[2]
RUNNER = ["--direct_running_mode=in_memory", *QUIET]


def _run(corpus: Path, output: Path, *argv: str) -> list[dict[str, object]]:
    """The run's error rows (the run must succeed and its accounting close)."""
    assert main(["--input", str(corpus), "--output", str(output), *argv, *RUNNER]) == 0
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["accounting"]["closes"] is True
    rows: list[dict[str, object]] = read_errors(str(output)).to_pylist()
    return rows


def test_a_pdf_from_the_default_parser_names_the_parser_pdf_page_v1_needs(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(REPO / "fixtures" / "pdf-text-v2" / "outlined-report.pdf", corpus / "report.pdf")
    (row,) = _run(corpus, tmp_path / "out", "--labels", "pdf-page-v1")
    assert (row["source_uri"], row["stage"], row["error_type"]) == (
        "report.pdf",
        "chunk",
        "no_accepting_chunker",
    )
    assert row["message"] == (
        "pdf-page-v1 needs blocks from parser pdf-text-v1, but report.pdf was parsed by "
        "pdf-text-v3; pass --parsers pdf-text-v1 (parser_version='pdf-text-v1' in the library)."
    )
    pinned = tmp_path / "pinned"
    assert _run(corpus, pinned, "--labels", "pdf-page-v1", "--parsers", "pdf-text-v1") == []
    assert output_chunks(pinned)


def test_a_quadratic_output_is_one_limit_exceeded_row(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    header = ",".join(f"column{i}" for i in range(30_000))
    rows = "".join(f"{r},item {r},{r * 3}\n" for r in range(200))
    (corpus / "wide.csv").write_text(f"{header}\n{rows}")
    output = tmp_path / "out"
    (row,) = _run(corpus, output, "--labels", "hybrid-v3,hybrid-v4")
    assert (row["source_uri"], row["stage"], row["error_type"], row["chunker_version"]) == (
        "wide.csv",
        "chunk",
        "limit_exceeded",
        "hybrid-v3",
    )
    assert "hybrid-v4" in str(row["message"])
    assert {c.chunker_version for c in output_chunks(output)} == {"hybrid-v4"}
