"""``kebab-chunk rechunk``: each rechunk is one ``run --update`` of the table RUNS/table,
its success line, expiry of old snapshots, the old runs-folder layout, the runs-folder lock
and the refusals.

Runs are real pipeline runs on the DirectRunner (in memory) over a few small generated
Markdown documents, called in this process through ``kebab_chunk.cli.rechunk.main``; the
lock and usage refusals go through the console entry point in a child process, so exit
status and stderr are exactly what a scheduler sees.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kebab_chunk import results
from kebab_chunk.beam.claim import claim_directory
from kebab_chunk.beam.incremental import DELETED, NEW, RECHUNKED, REUSED
from kebab_chunk.cli import rechunk
from kebab_chunk.cli.exits import EXIT_BUSY
from kebab_chunk.output.changes import ADDED, MODIFIED, RELOCATED, REMOVED
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.layout import LOCK_NAME as OUTPUT_LOCK
from kebab_chunk.output.snapshots import SNAPSHOTS_DIR, referenced_paths, snapshot_ids
from tests.beam.helpers import QUIET, quiet_beam, subprocess_env
from tests.incremental.corpus import edit_one_paragraph, write_corpus

pytestmark = pytest.mark.slow
quiet_beam()

ROOT = Path(__file__).resolve().parents[2]
DOCS = 5
CHANGED = "doc002.md"
LABEL = "md-heading-v1"
#: Passed through to ``kebab-chunk run`` unchanged (one label keeps each run small).
RUN_OPTIONS = ["--labels", LABEL, *QUIET]
#: The directories whose files snapshots reference (kebab_chunk/output/snapshots.py).
TABLE_DIRS = ("chunks", "documents", "errors", "_deletes", "changes")


def _rechunk(corpus: Path, runs: Path, *extra: str) -> int:
    argv = ["--corpus", str(corpus), "--runs", str(runs), *RUN_OPTIONS, *extra]
    return rechunk.main(argv)


def _rechunk_said(corpus: Path, runs: Path, *extra: str) -> tuple[int, str, str]:
    """A rechunk with (status, its own stdout line, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = _rechunk(corpus, runs, *extra)
    ours = [line for line in out.getvalue().splitlines() if line.startswith("kebab-chunk rechunk")]
    assert len(ours) <= 1, out.getvalue()
    return status, (ours[0] if ours else ""), err.getvalue()


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


def _manifest(table: Path) -> dict[str, Any]:
    return open_output(str(table), "the table")[1]


def _assert_one_sentence(stderr: str) -> str:
    """stderr is exactly one line, one sentence from rechunk; returns it."""
    assert re.fullmatch(r"kebab-chunk rechunk: error: [^\n]+\.\n", stderr), stderr
    assert ". " not in stderr.strip()[:-1], stderr  # no second sentence
    return stderr


def _table_files(table: Path) -> set[str]:
    return {
        p.relative_to(table).as_posix()
        for d in TABLE_DIRS
        for p in (table / d).rglob("*")
        if p.is_file()
    }


@dataclass
class History:
    """Two successful rechunks into one runs folder, with what they said and left."""

    corpus: Path
    runs: Path
    said: list[tuple[int, str, str]]
    listing_after_first: list[str]
    snapshots_after_first: list[int]

    @property
    def table(self) -> Path:
        return self.runs / rechunk.TABLE_NAME


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    base = tmp_path_factory.mktemp("rechunk")
    corpus = write_corpus(base / "corpus", DOCS)
    runs = base / "runs"
    said = [_rechunk_said(corpus, runs)]
    listing_after_first = sorted(os.listdir(runs))
    snapshots_after_first = snapshot_ids(str(runs / rechunk.TABLE_NAME))
    edit_one_paragraph(corpus / CHANGED)
    said.append(_rechunk_said(corpus, runs))
    return History(corpus, runs, said, listing_after_first, snapshots_after_first)


def test_first_rechunk_is_a_full_run_into_the_table(history: History) -> None:
    status, line, err = history.said[0]
    table = history.table
    assert status == 0, err
    assert err == ""
    assert line == f"kebab-chunk rechunk: {table} is at snapshot 1 (full run)"
    # Only the table in the runs folder: the lock is gone, no pointer, no diff.
    assert history.listing_after_first == [rechunk.TABLE_NAME]
    assert history.snapshots_after_first == []  # a plain output is snapshot 1 of itself
    manifest = open_output(str(table), "the table", snapshot=1)[1]  # (kept as _snapshots/1)
    assert "incremental" not in manifest and manifest["snapshot"]["changes"] is None
    assert manifest["accounting"]["closes"] is True
    assert manifest["counts"]["files_matched"] == DOCS
    assert manifest["run_info"]["input"] == str(history.corpus)
    assert manifest["options"]["chunkers"] == [LABEL]  # run options passed through


def test_second_rechunk_commits_snapshot_2_with_a_change_feed_of_the_edit(
    history: History,
) -> None:
    status, line, err = history.said[1]
    table = history.table
    assert status == 0, err
    feed_path = table / "changes" / "s00000002.parquet"
    assert line == (f"kebab-chunk rechunk: {table} is at snapshot 2 (change feed: {feed_path})")
    assert snapshot_ids(str(table)) == [1, 2]
    manifest = _manifest(table)
    assert manifest["snapshot"]["id"] == 2
    assert manifest["snapshot"]["changes"]["complete"] is True
    assert manifest["incremental"]["documents"] == {
        REUSED: DOCS - 1,
        RECHUNKED: 1,
        NEW: 0,
        DELETED: 0,
    }
    feed = pq.read_table(feed_path).to_pylist()
    assert feed and {row["source_uri"] for row in feed} == {CHANGED}
    assert {row["change"] for row in feed} <= {ADDED, REMOVED, MODIFIED, RELOCATED}
    assert ADDED in {row["change"] for row in feed}  # the edited paragraph's new id
    # Applied to snapshot 1's ids of the edited document, the feed gives snapshot 2's.
    first, second = _ids_of(table, CHANGED, 1), _ids_of(table, CHANGED, 2)
    ids = {
        change: {r["chunk_id"] for r in feed if r["change"] == change}
        for change in (ADDED, REMOVED)
    }
    assert ids[ADDED] and ids[ADDED] <= second and not ids[ADDED] & first
    assert ids[REMOVED] <= first and not ids[REMOVED] & second
    assert (first - ids[REMOVED]) | ids[ADDED] == second
    # The other documents' ids did not change, and snapshot 1 is still readable.
    assert _ids_of(table, "doc000.md", 1) == _ids_of(table, "doc000.md", 2)


def _ids_of(table: Path, source_uri: str, snapshot: int) -> set[str]:
    from kebab_chunk.output.reader import read_chunks

    path, manifest = open_output(str(table), "the table", snapshot=snapshot)
    rows = read_chunks(path, manifest=manifest).to_pylist()
    return {r["chunk_id"] for r in rows if r["source_uri"] == source_uri}


def test_keep_last_1_leaves_the_latest_snapshot_and_only_its_files(tmp_path: Path) -> None:
    corpus, runs = write_corpus(tmp_path / "corpus", 3), tmp_path / "runs"
    table = runs / rechunk.TABLE_NAME
    assert _rechunk(corpus, runs) == 0
    edit_one_paragraph(corpus / "doc000.md")
    assert _rechunk(corpus, runs) == 0
    edit_one_paragraph(corpus / "doc001.md")
    before = _table_files(table)

    status, line, err = _rechunk_said(corpus, runs, "--keep-last", "1")

    assert status == 0, err
    assert re.fullmatch(
        rf"kebab-chunk rechunk: {re.escape(str(table))} is at snapshot 3 \(change feed: "
        rf"{re.escape(str(table))}/changes/s00000003\.parquet\); expired snapshots 1-2 of "
        rf"{re.escape(str(table))}; removed \d+ files? no kept snapshot references",
        line,
    ), line
    assert snapshot_ids(str(table)) == [3]
    assert sorted(os.listdir(table / SNAPSHOTS_DIR)) == ["00000003.json"]
    manifest = _manifest(table)  # whole: every file it lists is there
    assert _table_files(table) == referenced_paths(manifest)
    assert (
        "changes/s00000002.parquet" in before and not (table / "changes/s00000002.parquet").exists()
    )
    assert not (table / "_kebab.lock").exists() and not (runs / rechunk.LOCK_NAME).exists()
    assert len(results.read_chunks(table)) == manifest["counts"]["chunks_total"]


def test_newer_than_in_the_future_keeps_only_the_latest(tmp_path: Path) -> None:
    corpus, runs = write_corpus(tmp_path / "corpus", 2), tmp_path / "runs"
    table = runs / rechunk.TABLE_NAME
    assert _rechunk(corpus, runs) == 0
    status, line, err = _rechunk_said(corpus, runs, "--newer-than", "2999-01-01")
    assert status == 0, err
    assert line.endswith(
        f"; expired snapshot 1 of {table}; removed 0 files no kept snapshot references"
    )
    assert snapshot_ids(str(table)) == [2]
    status, line, _ = _rechunk_said(corpus, runs, "--newer-than", "2000-01-01T00:00:00+02:00")
    assert status == 0 and line.endswith(f"; nothing to expire in {table}"), line
    assert snapshot_ids(str(table)) == [2, 3]


def test_expiry_skipped_when_a_run_holds_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run started by hand takes the table between the update and the expiry: the new
    snapshot stands, expiry is skipped in one sentence, exit 75, nothing deleted."""
    corpus, runs = write_corpus(tmp_path / "corpus", 2), tmp_path / "runs"
    table = runs / rechunk.TABLE_NAME
    assert _rechunk(corpus, runs) == 0
    real = rechunk.expire_claimed

    def while_held(output: str, *args: Any, **kwargs: Any) -> str:
        with claim_directory(output, OUTPUT_LOCK, what="--output", by="kebab-chunk run"):
            return real(output, *args, **kwargs)

    monkeypatch.setattr(rechunk, "expire_claimed", while_held)
    status, line, err = _rechunk_said(corpus, runs, "--keep-last", "1")
    assert status == EXIT_BUSY
    feed = f"{table}/changes/s00000002.parquet"
    assert line == f"kebab-chunk rechunk: {table} is at snapshot 2 (change feed: {feed})"
    assert err.startswith("kebab-chunk rechunk: error: old snapshots were not expired: ")
    assert err.count("\n") == 1 and "is in use by another" in err, err
    assert snapshot_ids(str(table)) == [1, 2]


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--keep-last", "0", "--keep-last takes a whole number of snapshots, at least 1, not '0'"),
        ("--keep-last", "two", "not 'two'"),
        ("--newer-than", "yesterday", "--newer-than takes an ISO date or date-time"),
    ],
)
def test_bad_expiry_options_are_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, said: str
) -> None:
    corpus, runs = write_corpus(tmp_path / "corpus", 1), tmp_path / "runs"
    assert _rechunk(corpus, runs, option, value) == 2
    assert said in _assert_one_sentence(capsys.readouterr().err)
    assert not runs.exists()


def test_an_old_runs_folder_is_ignored_with_one_note(tmp_path: Path) -> None:
    """What earlier versions wrote (``latest``, run directories, diffs) is not read: one
    note line, then the table starts with a full run; the old entries are left alone."""
    corpus, runs = write_corpus(tmp_path / "corpus", 2), tmp_path / "runs"
    old = ["20261124T213000Z", "20261124T213100Z"]
    for stamp in old:
        (runs / stamp / "chunks").mkdir(parents=True)
        (runs / stamp / "manifest.json").write_text("{}")
    (runs / f"{old[1]}.diff.json").write_text("{}")
    (runs / "latest").write_text(f"{runs / old[1]}\n")

    status, line, err = _rechunk_said(corpus, runs)

    assert status == 0, err
    assert line.endswith("is at snapshot 1 (full run)")
    assert err.count("\n") == 1 and err.startswith("kebab-chunk rechunk: note: "), err
    assert "old runs-folder layout" in err and "starts with a full run" in err
    assert "delete them when no longer needed" in err
    assert sorted(os.listdir(runs)) == sorted([*old, f"{old[1]}.diff.json", "latest", "table"])
    assert (runs / "latest").read_text() == f"{runs / old[1]}\n"
    # The next rechunk updates the table; the note says so, not "a full run".
    status, line, err = _rechunk_said(corpus, runs)
    assert status == 0 and line.endswith(
        f"snapshot 2 (change feed: {runs / 'table'}/changes/s00000002.parquet)"
    )
    assert err.count("\n") == 1 and "it updates the table" in err, err


def test_a_failed_run_leaves_the_table_at_its_previous_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The update fails at its commit (the disk filled up): exit 1, one sentence that says
    what the table reads as, and the table is exactly as before; the next rechunk commits."""
    corpus, runs = write_corpus(tmp_path / "corpus", DOCS), tmp_path / "runs"
    table = runs / rechunk.TABLE_NAME
    assert _rechunk(corpus, runs) == 0
    before = results.read_chunks(table)
    edit_one_paragraph(corpus / CHANGED)

    from kebab_chunk.beam import update

    commit = update.commit_snapshot

    def refuse(output: str, manifest: dict[str, Any]) -> str:
        if manifest["snapshot"]["id"] == 1:  # the plain output's own manifest, kept first
            return commit(output, manifest)
        raise OSError("the disk filled up")

    monkeypatch.setattr(update, "commit_snapshot", refuse)
    status, line, err = _rechunk_said(corpus, runs, "--keep-last", "1")

    assert status == 1 and line == ""
    ours = [x for x in err.splitlines() if x.startswith("kebab-chunk rechunk")]
    assert ours == [
        f"kebab-chunk rechunk: error: the update of '{table}' failed (exit status 1), so it "
        "still reads as snapshot 1."
    ], err
    assert snapshot_ids(str(table)) == [1]
    assert _manifest(table)["snapshot"]["id"] == 1
    assert results.read_chunks(table) == before
    monkeypatch.undo()
    status, line, err = _rechunk_said(corpus, runs)
    assert status == 0 and "is at snapshot 2 (change feed:" in line, err


def test_a_failed_first_run_says_the_table_has_no_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, runs = write_corpus(tmp_path / "corpus", 1), tmp_path / "runs"
    status = _rechunk(corpus, runs, "--labels", "no-such-label")
    assert status == 2  # run's own usage error, said once by run
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "kebab-chunk rechunk" not in err, err


def test_what_a_failed_first_run_left_is_replaced_by_a_full_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table with files and no snapshot holds nothing finished: the next rechunk's update
    clears it (as --overwrite would, kebab-chunk layout only) and writes snapshot 1."""
    corpus, runs = write_corpus(tmp_path / "corpus", 1), tmp_path / "runs"
    part = runs / rechunk.TABLE_NAME / "chunks" / "part-00000-of-00001.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"half a file")
    assert _rechunk(corpus, runs) == 0
    assert "is at snapshot 1 (full run)" in capsys.readouterr().out
    assert results.read_chunks(runs / rechunk.TABLE_NAME)  # a whole output, the half file gone


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
    assert sorted(os.listdir(runs)) == [rechunk.LOCK_NAME]  # no table


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
    for option in ("--output", "--previous=x", "--input", "--update", "--overwrite"):
        assert _rechunk(corpus, runs, option, "x") == 2
        message = _assert_one_sentence(capsys.readouterr().err)
        assert f"{option.split('=')[0]} is set by rechunk" in message
    assert not runs.exists()


def test_an_unknown_option_is_named_with_the_one_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, runs = tmp_path / "corpus", tmp_path / "runs"
    assert _rechunk(corpus, runs, "--keep-lats", "2") == 2
    assert capsys.readouterr().err == (
        "kebab-chunk rechunk: error: unknown option '--keep-lats'; did you mean '--keep-last'?\n"
    )
    assert not runs.exists()


def test_no_merge_peers_is_passed_to_the_run_and_reuses_nothing_packed(tmp_path: Path) -> None:
    """Issue 29.12: the stable-id setting docs/guide/scheduling.md recommends; a rechunk with it
    after one without re-chunks every document (another policy)."""
    corpus, runs = write_corpus(tmp_path / "corpus", 3), tmp_path / "runs"
    assert _rechunk(corpus, runs) == 0
    assert _rechunk(corpus, runs, "--no-merge-peers") == 0
    manifest = _manifest(runs / rechunk.TABLE_NAME)
    assert manifest["snapshot"]["id"] == 2
    assert manifest["policy"]["merge_peers"] is False
    assert manifest["incremental"]["documents"][REUSED] == 0
