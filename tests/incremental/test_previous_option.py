"""``--previous`` is checked on the launching machine: one sentence, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kebab_chunk.cli.run import main
from tests.beam.helpers import CORPUS, QUIET, quiet_beam

quiet_beam()


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished output of a two-file corpus."""
    base = tmp_path_factory.mktemp("previous")
    corpus = base / "corpus"
    corpus.mkdir()
    shutil.copy(CORPUS / "guides" / "installation.md", corpus / "installation.md")
    out = base / "out"
    assert main(["--input", str(corpus), "--output", str(out), *QUIET]) == 0
    return out


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    return err


def test_unusable_previous_outputs(
    previous: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(previous, damaged)
    shutil.rmtree(damaged / "chunks" / "chunker_version=md-heading-v3")
    unfinished = tmp_path / "unfinished"
    shutil.copytree(previous, unfinished)
    (unfinished / "manifest.json").unlink()
    cases = [
        (tmp_path / "nope", "does not exist"),
        (unfinished, "has no manifest.json"),
        (damaged, "lacks chunks/chunker_version=md-heading-v3/part-"),
    ]
    out = tmp_path / "out"
    for prev, needle in cases:
        argv = ["--input", str(CORPUS), "--output", str(out), "--previous", str(prev)]
        err = _usage_error(capsys, argv)
        assert "--previous" in err and needle in err, err
        assert not out.exists()


def test_previous_and_output_must_not_overlap(
    previous: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = (previous / "manifest.json").read_bytes()
    for out in (previous, previous / "next"):
        argv = ["--input", str(CORPUS), "--output", str(out), "--previous", str(previous)]
        err = _usage_error(capsys, [*argv, "--overwrite"])
        assert "overlap" in err
    assert (previous / "manifest.json").read_bytes() == manifest  # nothing was deleted


def test_summary_line_names_the_decisions(
    previous: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = Path(json.loads((previous / "manifest.json").read_text())["run_info"]["input"])
    out = tmp_path / "again"
    assert (
        main(["--input", str(corpus), "--output", str(out), "--previous", str(previous), *QUIET])
        == 0
    )
    summary = capsys.readouterr().out
    assert (
        "incremental (previous" in summary and "reused 1, rechunked 0, new 0, deleted 0" in summary
    )
