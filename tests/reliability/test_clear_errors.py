"""Every way a user can go wrong: one sentence on stderr, non-zero exit, no traceback
unless ``--debug`` (issue 7, item 7).

The commands run in-process through their ``main`` functions (they fail before any
pipeline starts), plus one real console run to see what a shell user sees.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kebab_chunk import cli
from kebab_chunk.parsers.registry import ParserChoice
from pipelines import chunk_corpus
from tests.beam.helpers import REPO, subprocess_env

UNWRITABLE = "/sys/kebab-chunk-cannot-write-here"  # EPERM even for root


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n")
    return root


def _one_sentence(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].rstrip().endswith("."), lines[0]
    return lines[0]


def _run_cases(corpus: Path, tmp_path: Path) -> dict[str, list[str]]:
    out = str(tmp_path / "out")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    return {
        "missing input": ["--input", str(tmp_path / "nope"), "--output", out],
        "unwritable output": ["--input", str(corpus), "--output", UNWRITABLE],
        "output below a file": ["--input", str(corpus), "--output", f"{a_file}/out"],
        "unknown label": ["--input", str(corpus), "--output", out, "--labels", "md-v9"],
        "policy out of range": [
            "--input",
            str(corpus),
            "--output",
            out,
            "--target-tokens",
            "10",
            "--overlap-tokens",
            "10",
        ],
        "bad memory budget": ["--input", str(corpus), "--output", out, "--max-memory-mb", "0"],
        "bad chunk budget": ["--input", str(corpus), "--output", out, "--chunk-timeout-s", "-1"],
        "bad page limit": ["--input", str(corpus), "--output", out, "--max-pages", "0"],
        "not a number": ["--input", str(corpus), "--output", out, "--max-blocks", "many"],
        "unknown option": ["--input", str(corpus), "--output", out, "--frobnicate"],
    }


_CASE_NAMES = [
    "missing input",
    "unwritable output",
    "output below a file",
    "unknown label",
    "policy out of range",
    "bad memory budget",
    "bad chunk budget",
    "bad page limit",
    "not a number",
    "unknown option",
]

_EXPECTED_WORDS = {
    "missing input": "matches no files",
    "unwritable output": "cannot write to --output",
    "output below a file": "cannot write to --output",
    "unknown label": "unknown chunker label",
    "policy out of range": "overlap_tokens",
    "bad memory budget": "--max-memory-mb must be > 0",
    "bad chunk budget": "--chunk-timeout-s must be > 0",
    "bad page limit": "--max-pages must be > 0",
    "not a number": "--max-blocks",
    "unknown option": "--frobnicate",
}


@pytest.mark.parametrize("case", _CASE_NAMES)
def test_run_errors_are_one_sentence_without_traceback(
    case: str, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _run_cases(corpus, tmp_path)[case]
    assert chunk_corpus.main(argv) != 0
    line = _one_sentence(capsys.readouterr().err)
    assert line.startswith("kebab-chunk run: error: ") and _EXPECTED_WORDS[case] in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("case", ["missing input", "unwritable output", "unknown label"])
def test_debug_adds_the_traceback(
    case: str, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _run_cases(corpus, tmp_path)[case]
    assert chunk_corpus.main([*argv, "--debug"]) != 0
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.rstrip().splitlines()[-1].startswith("kebab-chunk run: error: ")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["chunk", "/no/such/file.md", "--label", "md-heading-v1"], "does not exist"),
        (["chunk", "{a}", "--label", "md-heading-v9"], "unknown chunker label"),
        (["chunk", "{a}", "--label", "md-heading-v1", "--target-tokens", "0"], "target_tokens"),
        (["parse", "{dir}"], "is a directory"),
    ],
)
def test_library_commands_are_one_sentence_and_debug_shows_the_traceback(
    argv: list[str], words: str, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filled = [a.format(a=corpus / "a.md", dir=corpus) for a in argv]
    assert cli.main(filled) == cli.EXIT_USAGE
    line = _one_sentence(capsys.readouterr().err)
    assert line.startswith("kebab-chunk: ") and words in line
    assert cli.main(["--debug", *filled]) == cli.EXIT_USAGE
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_unexpected_failures_are_one_sentence_too(
    monkeypatch: pytest.MonkeyPatch, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(ParserChoice, "__call__", broken)  # what `parse` parses with
    args = ["parse", str(corpus / "a.md")]
    assert cli.main(args) == cli.EXIT_DATA
    line = _one_sentence(capsys.readouterr().err)
    assert "unexpected RuntimeError: disk on fire" in line and "--debug" in line
    assert cli.main([*args, "--debug"]) == cli.EXIT_DATA
    assert "Traceback" in capsys.readouterr().err


def test_the_console_script_shows_one_sentence(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kebab_chunk.cli",
            "run",
            "--input",
            str(tmp_path / "missing"),
            "--output",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if line.startswith("kebab-chunk")]
    assert len(ours) == 1 and "matches no files" in ours[0]
    assert "Traceback" not in done.stderr
