"""``kebab-chunk expire OUTPUT (--keep-last N | --newer-than DATE)``: what it keeps, what it
removes, what it says, and its refusals (no option, bad values, not a finished output, an
output a run holds).

One table with three snapshots is built once (``run --update`` on the in-memory
DirectRunner over three generated Markdown documents); each test expires a copy, through
the console entry point's ``main`` in this process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kebab_chunk import results
from kebab_chunk.beam.claim import claim_directory
from kebab_chunk.cli import main
from kebab_chunk.cli.exits import EXIT_BUSY, EXIT_USAGE
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.layout import LOCK_NAME
from kebab_chunk.output.snapshots import referenced_paths, snapshot_ids
from kebab_chunk.pipeline import run as run_pipeline
from tests.beam.helpers import QUIET, quiet_beam
from tests.beam.runners import CONFIGS
from tests.incremental.corpus import edit_one_paragraph, write_corpus

pytestmark = pytest.mark.slow
quiet_beam()

RUNNER = [*CONFIGS["in_memory"], *QUIET]
TABLE_DIRS = ("chunks", "documents", "errors", "_deletes", "changes")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A table at snapshot 3 (a full run, then two edits)."""
    root = tmp_path_factory.mktemp("expire")
    corpus, table = write_corpus(root / "corpus", 3), root / "table"
    for edited in (None, "doc000.md", "doc001.md"):
        if edited:
            edit_one_paragraph(corpus / edited)
        run_pipeline(str(corpus), str(table), update=True, beam_args=RUNNER)
    assert snapshot_ids(str(table)) == [1, 2, 3]
    return table


@pytest.fixture
def table(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "table"
    shutil.copytree(built, copy)
    return copy


def _expire(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["expire", *args])
    said = capsys.readouterr()
    return status, said.out, said.err


def _files(table: Path) -> set[str]:
    return {
        p.relative_to(table).as_posix()
        for d in TABLE_DIRS
        for p in (table / d).rglob("*")
        if p.is_file()
    }


def test_keep_last_expires_older_snapshots_and_only_their_files(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = results.read_chunks(table)
    second = referenced_paths(open_output(str(table), "t", snapshot=2)[1])
    before = _files(table)

    status, out, err = _expire(capsys, str(table), "--keep-last", "2")

    assert (status, err) == (0, "")
    gone = before - _files(table)
    assert out == (
        f"kebab-chunk expire: expired snapshot 1 of {table}; removed {len(gone)} "
        f"file{'s' * (len(gone) != 1)} no kept snapshot references\n"
    )
    assert snapshot_ids(str(table)) == [2, 3]
    assert _files(table) == second | referenced_paths(open_output(str(table), "t")[1])
    assert results.read_chunks(table) == latest
    open_output(str(table), "t", snapshot=2)  # still whole
    assert not (table / LOCK_NAME).exists()
    # Again: nothing left to expire.
    assert _expire(capsys, str(table), "--keep-last", "2") == (
        0,
        f"kebab-chunk expire: nothing to expire in {table}\n",
        "",
    )


def test_newer_than_keeps_what_was_written_since(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _expire(capsys, str(table), "--newer-than", "2000-01-01")
    assert (status, out) == (0, f"kebab-chunk expire: nothing to expire in {table}\n")
    status, out, _ = _expire(capsys, str(table), "--newer-than", "2999-01-01T00:00:00")
    assert status == 0 and out.startswith(f"kebab-chunk expire: expired snapshots 1-2 of {table}; ")
    assert snapshot_ids(str(table)) == [3]  # the latest is always kept
    assert _files(table) == referenced_paths(open_output(str(table), "t")[1])


def test_files_of_a_killed_update_are_removed(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A killed update leaves files no snapshot lists; expiry removes them, nothing else."""
    stray = table / "chunks" / "chunker_version=md-heading-v3" / "s00000004-part-0.parquet"
    stray.write_bytes(b"half a file")
    status, out, _ = _expire(capsys, str(table), "--keep-last", "5")
    assert (status, out) == (
        0,
        f"kebab-chunk expire: nothing to expire in {table}; removed 1 file no kept snapshot "
        "references\n",
    )
    assert not stray.exists() and snapshot_ids(str(table)) == [1, 2, 3]


def test_a_plain_output_has_nothing_to_expire(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, output = write_corpus(tmp_path / "corpus", 1), tmp_path / "out"
    run_pipeline(str(corpus), str(output), beam_args=RUNNER)
    assert _expire(capsys, str(output), "--keep-last", "1") == (
        0,
        f"kebab-chunk expire: nothing to expire in {output}\n",
        "",
    )


def test_an_output_a_run_holds_is_refused_with_the_busy_status(
    table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with claim_directory(str(table), LOCK_NAME, what="--output", by="kebab-chunk run"):
        status, out, err = _expire(capsys, str(table), "--keep-last", "1")
    assert (status, out) == (EXIT_BUSY, "")
    assert err.startswith(f"kebab-chunk expire: error: OUTPUT '{table}' is in use by another ")
    assert err.count("\n") == 1 and err.endswith(".\n"), err
    assert snapshot_ids(str(table)) == [1, 2, 3]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "say which snapshots to keep with --keep-last N or --newer-than DATE"),
        (["--keep-last", "0"], "--keep-last takes a whole number of snapshots, at least 1"),
        (["--keep-last", "-1"], "not '-1'"),
        (["--newer-than", "last week"], "--newer-than takes an ISO date or date-time"),
    ],
)
def test_bad_options_are_one_sentence_and_exit_2(
    table: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    status, out, err = _expire(capsys, str(table), *args)
    assert (status, out) == (EXIT_USAGE, "")
    assert err.count("\n") == 1 and err.endswith(".\n") and said in err, err
    assert snapshot_ids(str(table)) == [1, 2, 3]


def test_what_is_not_a_finished_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing"
    status, _, err = _expire(capsys, str(missing), "--keep-last", "1")
    assert status == EXIT_USAGE and f"OUTPUT '{missing}' does not exist" in err, err
    assert not missing.exists()  # the claim never created it
    unfinished = tmp_path / "unfinished"
    (unfinished / "chunks").mkdir(parents=True)
    status, _, err = _expire(capsys, str(unfinished), "--keep-last", "1")
    assert status == EXIT_USAGE and "is not a finished kebab-chunk output" in err, err
    assert sorted(p.name for p in unfinished.iterdir()) == ["chunks"]
