"""``kebab-chunk rechunk``: scheduled re-chunks into RUNS/<UTC stamp>, the ``latest`` pointer,
the diff beside each run, the runs-folder lock and the refusals.

Runs are real pipeline runs on the DirectRunner (in memory) over five small generated
Markdown documents, called in this process through ``kebab_chunk.cli.rechunk.main`` with a
fixed clock so run names are known; the lock and usage refusals go through the console
entry point in a child process, so exit status and stderr are exactly what a scheduler sees.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.beam.incremental import DELETED, NEW, RECHUNKED, REUSED
from kebab_chunk.cli import rechunk
from kebab_chunk.cli.exits import EXIT_BUSY
from tests.beam.helpers import QUIET, quiet_beam, subprocess_env
from tests.incremental.corpus import edit_one_paragraph, write_corpus

pytestmark = pytest.mark.slow
quiet_beam()

ROOT = Path(__file__).resolve().parents[2]
DOCS = 5
CHANGED = "doc002.md"
LABEL = "md-heading-v1"
#: Passed through to ``kebab-chunk run`` unchanged (one label keeps each run small).
RUN_OPTIONS = ["--chunkers", LABEL, *QUIET]
FIRST, SECOND, THIRD = "20261124T213000Z", "20261124T213100Z", "20261124T213200Z"


def _clock(stamp: str) -> Callable[[], datetime]:
    moment = datetime.strptime(stamp, rechunk.STAMP_FORMAT).replace(tzinfo=UTC)
    return lambda: moment


def _rechunk(corpus: Path, runs: Path, stamp: str, *extra: str) -> int:
    argv = ["--corpus", str(corpus), "--runs", str(runs), *RUN_OPTIONS, *extra]
    return rechunk.main(argv, now=_clock(stamp))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kebab_chunk.cli", "rechunk", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=False,
        timeout=120,
    )


def _manifest(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "manifest.json").read_text())
    return data


def _latest(runs: Path) -> str:
    return (runs / rechunk.LATEST_NAME).read_text()


def _assert_one_sentence(stderr: str) -> str:
    """stderr is exactly one line, one sentence from rechunk; returns it."""
    assert re.fullmatch(r"kebab-chunk rechunk: error: [^\n]+\.\n", stderr), stderr
    assert ". " not in stderr.strip()[:-1], stderr  # no second sentence
    return stderr


@dataclass
class History:
    """Two successful rechunks into one runs folder, with what they left behind."""

    corpus: Path
    runs: Path
    statuses: tuple[int, int]
    latest_after_first: str
    listing_after_first: list[str]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = tmp_path_factory.mktemp("rechunk")
    corpus = write_corpus(base / "corpus", DOCS)
    runs = base / "runs"
    first = _rechunk(corpus, runs, FIRST)
    latest_after_first = _latest(runs)
    listing_after_first = sorted(os.listdir(runs))
    edit_one_paragraph(corpus / CHANGED)
    second = _rechunk(corpus, runs, SECOND)
    return History(corpus, runs, (first, second), latest_after_first, listing_after_first)


def test_first_run_is_full_and_sets_latest(history: History) -> None:
    runs = history.runs
    assert history.statuses[0] == 0
    assert history.latest_after_first == f"{runs / FIRST}\n"
    # No previous run: no diff, no lock file left behind, nothing else in the runs folder.
    assert history.listing_after_first == [FIRST, rechunk.LATEST_NAME]
    manifest = _manifest(runs / FIRST)
    assert "incremental" not in manifest  # a full run: no --previous
    assert manifest["accounting"]["closes"] is True
    assert manifest["counts"]["files_matched"] == DOCS
    assert manifest["run_info"]["input"] == str(history.corpus)
    assert manifest["options"]["chunkers"] == [LABEL]  # run options passed through


def test_second_run_uses_latest_as_previous_and_moves_latest(history: History) -> None:
    runs = history.runs
    assert history.statuses[1] == 0
    assert _latest(runs) == f"{runs / SECOND}\n"
    incremental = _manifest(runs / SECOND)["incremental"]
    assert incremental["previous_output"] == str(runs / FIRST)
    assert incremental["documents"] == {REUSED: DOCS - 1, RECHUNKED: 1, NEW: 0, DELETED: 0}
    assert _manifest(runs / SECOND)["accounting"]["closes"] is True
    # The first run is kept as it was.
    assert (runs / FIRST / "manifest.json").is_file()
    assert sorted(os.listdir(runs)) == [
        FIRST,
        SECOND,
        f"{SECOND}{rechunk.DIFF_SUFFIX}",
        rechunk.LATEST_NAME,
    ]


def test_the_diff_beside_the_run_reports_the_changed_document(history: History) -> None:
    runs = history.runs
    diff = json.loads((runs / f"{SECOND}{rechunk.DIFF_SUFFIX}").read_text())
    assert diff["old"] == str(runs / FIRST) and diff["new"] == str(runs / SECOND)
    assert diff["changed"] is True
    assert list(diff["labels"]) == [LABEL]
    label = diff["labels"][LABEL]
    assert label["affected_sources"] == [CHANGED]
    assert label["documents_affected"] == 1
    assert label["added"] >= 1 and label["reembed_tokens"] > 0


def test_a_failed_run_leaves_latest_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last good run is damaged where no launch check looks (the data pages of a chunk
    file, its footer intact) and, written by an older version, lists no digests to check
    up front: the next run's pipeline starts, fails while reading it as --previous, and
    the pointer must not move."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    assert _rechunk(corpus, runs, FIRST) == 0
    before = _latest(runs)
    assert before == f"{runs / FIRST}\n"
    part = next((runs / FIRST / "chunks").glob("*/*.parquet"))
    data = part.read_bytes()
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    part.write_bytes(data[:4] + b"\xff" * (footer - 4) + data[footer:])
    manifest = _manifest(runs / FIRST)
    for entries in manifest["outputs"].values():
        for entry in entries:
            del entry["bytes"], entry["blake3"]
    (runs / FIRST / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()

    status = _rechunk(corpus, runs, SECOND)

    err = capsys.readouterr().err
    assert status != 0
    assert "the pipeline failed" in err  # the job ran and failed, not a refused start
    assert f"still names '{runs / FIRST}'" in err
    assert _latest(runs) == before
    assert not (runs / SECOND / "manifest.json").exists()
    assert not (runs / f"{SECOND}{rechunk.DIFF_SUFFIX}").exists()


def test_a_damaged_last_run_is_refused_before_the_job_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A chunk file of the run ``latest`` names was changed after it was written: the
    size and digest its manifest lists give it away before anything runs (exit 2)."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    assert _rechunk(corpus, runs, FIRST) == 0
    before = _latest(runs)
    part = next((runs / FIRST / "chunks").glob("*/*.parquet"))
    part.write_bytes(b"not parquet")
    capsys.readouterr()

    assert _rechunk(corpus, runs, SECOND) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"kebab-chunk rechunk: error: [^\n]+\.\n", err), err
    assert part.relative_to(runs / FIRST).as_posix() in err
    assert "point latest at an earlier finished run" in err, err
    assert _latest(runs) == before and not (runs / SECOND).exists()


def test_a_diff_that_cannot_be_written_leaves_latest_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The diff is the change set for downstream jobs: without it the run is not published."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    assert _rechunk(corpus, runs, FIRST) == 0
    before = _latest(runs)

    def broken(old: str, new: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(rechunk, "diff_outputs", broken)
    capsys.readouterr()
    status = _rechunk(corpus, runs, SECOND)

    assert status == 1
    assert _latest(runs) == before
    assert (runs / SECOND / "manifest.json").is_file()  # the run itself finished
    err = capsys.readouterr().err
    assert "finished but was not published (disk full)" in err


def test_a_held_runs_folder_is_refused_with_the_busy_status(tmp_path: Path) -> None:
    """Another process holds the runs folder's lock: exit EXIT_BUSY, one sentence, nothing
    started or written."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    runs.mkdir()
    holder_code = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "os.write(fd, f'{os.getpid()}\\n'.encode())\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", holder_code, str(runs / rechunk.LOCK_NAME)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        result = _cli("--corpus", str(corpus), "--runs", str(runs), *RUN_OPTIONS)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert EXIT_BUSY == 75
    assert result.returncode == EXIT_BUSY, result.stderr
    message = _assert_one_sentence(result.stderr)
    assert f"--runs '{runs}' is in use by another kebab-chunk rechunk" in message
    assert f"(process {holder.pid})" in message
    assert result.stdout == ""
    assert sorted(os.listdir(runs)) == [rechunk.LOCK_NAME]  # no run directory, no latest


def test_missing_corpus_is_a_usage_error(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = _cli("--runs", str(runs))
    assert result.returncode == 2
    message = _assert_one_sentence(result.stderr)
    assert "--corpus" in message
    assert not runs.exists()


def test_options_rechunk_sets_itself_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    for option in ("--output", "--previous=x", "--input"):
        assert _rechunk(corpus, runs, FIRST, option, "x") == 2
        message = _assert_one_sentence(capsys.readouterr().err)
        assert f"{option.split('=')[0]} is set by rechunk" in message
    assert not runs.exists()


def test_an_existing_run_directory_is_never_reused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same UTC second as an earlier run (or a clock that went back): refuse, touch nothing."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    (runs / THIRD).mkdir(parents=True)
    (runs / THIRD / "notes.txt").write_text("someone else's")
    assert _rechunk(corpus, runs, THIRD) == 2
    message = _assert_one_sentence(capsys.readouterr().err)
    assert f"'{runs / THIRD}' exists already" in message
    assert sorted(os.listdir(runs)) == [THIRD]
    assert os.listdir(runs / THIRD) == ["notes.txt"]


def test_a_pointer_to_no_finished_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged ``latest`` is reported, never silently replaced by a full run."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / rechunk.LATEST_NAME).write_text(f"{FIRST}\n")  # a bare name: relative to runs
    assert rechunk.read_latest(str(runs)) == str(runs / FIRST)
    assert _rechunk(corpus, runs, SECOND) == 2
    message = _assert_one_sentence(capsys.readouterr().err)
    assert f"'{runs / FIRST}' does not exist" in message
    assert sorted(os.listdir(runs)) == [rechunk.LATEST_NAME]
    assert _latest(runs) == f"{FIRST}\n"


def test_a_latest_symlink_to_a_run_is_followed(
    history: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ln -sfn RUN RUNS/latest`` names RUN (relative to RUNS); on success ``latest``
    becomes the usual one-line file naming the new run."""
    runs = tmp_path / "runs"
    shutil.copytree(history.runs, runs, symlinks=True)
    (runs / rechunk.LATEST_NAME).unlink()
    (runs / rechunk.LATEST_NAME).symlink_to(FIRST, target_is_directory=True)
    assert rechunk.read_latest(str(runs)) == str(runs / FIRST)
    assert _rechunk(history.corpus, runs, THIRD) == 0, capsys.readouterr().err
    assert _manifest(runs / THIRD)["incremental"]["previous_output"] == str(runs / FIRST)
    assert (runs / f"{THIRD}{rechunk.DIFF_SUFFIX}").is_file()
    assert not (runs / rechunk.LATEST_NAME).is_symlink()
    assert _latest(runs) == f"{runs / THIRD}\n"


def test_a_dangling_or_folder_latest_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``latest`` that names nothing is one sentence and exit 2, never a silent full run."""
    corpus = write_corpus(tmp_path / "corpus", DOCS)
    runs = tmp_path / "runs"
    runs.mkdir()
    latest = runs / rechunk.LATEST_NAME
    latest.symlink_to(FIRST, target_is_directory=True)  # dangling: no such run
    assert _rechunk(corpus, runs, SECOND) == 2
    message = _assert_one_sentence(capsys.readouterr().err)
    assert f"'{latest}' is a link to '{FIRST}', which does not exist" in message
    latest.unlink()
    latest.mkdir()  # a folder where the pointer belongs
    assert _rechunk(corpus, runs, SECOND) == 2
    message = _assert_one_sentence(capsys.readouterr().err)
    assert f"'{latest}' is a folder" in message
    assert sorted(os.listdir(runs)) == [rechunk.LATEST_NAME]  # no run was started


def test_no_merge_peers_is_passed_to_the_run_and_reuses_nothing_packed(tmp_path: Path) -> None:
    """Issue 29.12: the stable-id setting docs/scheduling.md recommends; a rechunk with it
    after one without re-chunks every document (another policy)."""
    corpus, runs = write_corpus(tmp_path / "corpus", 3), tmp_path / "runs"
    assert _rechunk(corpus, runs, FIRST) == 0
    assert _rechunk(corpus, runs, SECOND, "--no-merge-peers") == 0
    manifest = _manifest(runs / SECOND)
    assert manifest["policy"]["merge_peers"] is False
    assert manifest["incremental"]["previous_output"] == str(runs / FIRST)
    assert manifest["incremental"]["documents"][REUSED] == 0
    assert _latest(runs) == f"{runs / SECOND}\n"
