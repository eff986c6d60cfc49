"""``--output`` never destroys the input, is never shared by two runs, and only a whole
manifest ever carries its name (issue 14, items 6-9).

- Overlap (item 6) and symlinks (item 9): an output inside the corpus or around it is
  refused, with symlinks resolved on both sides, before anything is created or deleted.
- Concurrent runs (item 7): a run claims its local output for its whole duration
  (kebab_chunk/beam/claim.py); a second run into it is refused, with or without
  ``--overwrite``, and the first run's files are untouched.
- The completion mark (item 8): ``manifest.json`` is written under a temporary name and
  renamed into place, so a full disk leaves no manifest, and ``--overwrite`` deletes the
  old manifest before any part file.

The concurrency test holds a real run at its manifest step, with the launcher that
tests/reliability/test_atomicity.py uses, and starts the second run meanwhile.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apache_beam.io.filesystem import FileMetadata, MatchResult
from apache_beam.io.filesystems import FileSystems

from kebab_chunk.beam import locations
from kebab_chunk.beam.locations import (
    CorpusLocation,
    RunSetupError,
    prepare_output,
    resolve_corpus,
)
from kebab_chunk.cli.run import main
from tests.beam.helpers import QUIET, REPO, python_stdout, quiet_beam, subprocess_env
from tests.reliability.held import HOLD_TIMEOUT_S, kill, start_held_run

quiet_beam()

LOCK = "_kebab.lock"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSome text.\n")
    (root / "b.txt").write_text("Plain text.\n")
    return root


def _files(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every file below ``root``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``main``, expect exit 2 with one sentence on stderr; returns the sentence."""
    assert main([*argv, *QUIET]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk run: error: "), err
    assert err.endswith(".") and "Traceback" not in err
    return err


# -- item 6: an output that contains the corpus --------------------------------------------


def test_overwrite_never_deletes_a_corpus_inside_the_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "D"
    (data / "chunks").mkdir(parents=True)
    (data / "chunks" / "a.md").write_text("# A\n\nThe corpus.\n")
    before = _files(data)
    argv = ["--input", str(data / "chunks"), "--output", str(data)]
    for extra in (["--overwrite"], []):
        err = _refused(capsys, [*argv, *extra])
        assert "contains the corpus" in err, err
    assert _files(data) == before, "the corpus is untouched and nothing was written"


def test_overlap_is_refused_in_both_directions_for_remote_uris() -> None:
    corpus = CorpusLocation("gs://bucket/data/corpus/**", "gs://bucket/data/corpus/")
    with pytest.raises(RunSetupError, match="contains the corpus"):
        locations.check_output_location("gs://bucket/data", corpus=corpus)
    with pytest.raises(RunSetupError, match="contains the corpus"):
        locations.check_output_location("gs://bucket/data/", corpus=corpus)
    with pytest.raises(RunSetupError, match="inside the corpus"):
        locations.check_output_location("gs://bucket/data/corpus/out", corpus=corpus)
    # a shared name prefix is not an overlap
    assert (
        locations.check_output_location("gs://bucket/data/corpus-out", corpus=corpus)
        == "gs://bucket/data/corpus-out"
    )
    assert locations.check_output_location("s3://bucket/data", corpus=corpus) == "s3://bucket/data"


# -- item 9: symlinks do not hide an overlap ----------------------------------------------


def test_output_inside_the_corpus_through_a_symlink_is_refused(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    link = tmp_path / "corpus_link"
    link.symlink_to(corpus, target_is_directory=True)
    before = _files(corpus)
    err = _refused(capsys, ["--input", str(corpus), "--output", str(link / "out")])
    assert "inside the corpus" in err, err
    # the input given through the link, the output inside the real directory
    err = _refused(capsys, ["--input", str(link), "--output", str(corpus / "out")])
    assert "inside the corpus" in err, err
    assert _files(corpus) == before and sorted(os.listdir(corpus)) == ["a.md", "b.txt"]


def test_output_around_the_corpus_through_a_symlink_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "D"
    (data / "chunks").mkdir(parents=True)
    (data / "chunks" / "a.md").write_text("# A\n\nThe corpus.\n")
    before = _files(data)
    link = tmp_path / "D_link"
    link.symlink_to(data, target_is_directory=True)
    err = _refused(capsys, ["--input", str(data / "chunks"), "--output", str(link), "--overwrite"])
    assert "contains the corpus" in err, err
    assert _files(data) == before


# -- issue 29 item 2: --previous and --output through symlinks ---------------------------


@pytest.fixture
def finished(tmp_path: Path, corpus: Path) -> Path:
    """A finished output ``outer/prev`` of the small corpus."""
    out = tmp_path / "outer" / "prev"
    assert main(["--input", str(corpus), "--output", str(out), *QUIET]) == 0
    return out


def test_overwrite_never_deletes_a_previous_reached_through_a_symlink(
    capsys: pytest.CaptureFixture[str], corpus: Path, finished: Path, tmp_path: Path
) -> None:
    """The previous output is the one --overwrite would delete, or lies inside or around
    it, with a symlink on either side: refused before anything is deleted."""
    (tmp_path / "prev_link").symlink_to(finished, target_is_directory=True)
    (tmp_path / "outer_link").symlink_to(finished.parent, target_is_directory=True)
    before = _files(finished)
    pairs = [
        (finished, tmp_path / "prev_link"),  # --output X --previous L, L -> X
        (tmp_path / "prev_link", finished),  # --output L --previous X
        (tmp_path / "outer_link", finished),  # the output holds the previous (via a link)
        (finished / "next", tmp_path / "outer_link" / "prev"),  # the output inside it
    ]
    for output, previous in pairs:
        argv = ["--input", str(corpus), "--output", str(output), "--previous", str(previous)]
        err = _refused(capsys, [*argv, "--overwrite"])
        assert "overlap" in err, err
        assert _files(finished) == before, f"--output {output} --previous {previous}"
    assert sorted(os.listdir(finished.parent)) == ["prev"]


# -- item 7: one run per output -----------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_into_a_running_output_is_refused(
    capsys: pytest.CaptureFixture[str], corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    argv = ["--input", str(corpus), "--output", str(out)]
    proc, log = start_held_run(tmp_path, *argv)
    try:
        first = _files(out)
        assert any(p.endswith(".parquet") for p in first), first
        for extra in (["--overwrite"], []):
            err = _refused(capsys, [*argv, *extra])
            assert "in use by another kebab-chunk run" in err and str(out) in err, err
        assert _files(out) == first, "the running output is untouched"
        # a console run sees the same refusal
        console = subprocess.run(
            [sys.executable, "-m", "pipelines.chunk_corpus", *argv, "--overwrite", *QUIET],
            cwd=REPO,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=HOLD_TIMEOUT_S,
            check=False,
        )
        assert console.returncode == 2, console.stderr[-3000:]
        assert "in use by another kebab-chunk run" in console.stderr
        assert _files(out) == first
    finally:
        kill(proc)
    assert proc.returncode == -signal.SIGKILL, log.read_text()[-3000:]
    # the killed run's lock file stays, its lock does not: a rerun takes the output over
    assert (out / LOCK).exists()
    assert main([*argv, "--overwrite", *QUIET]) == 0, capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["chunks", "documents", "errors", "manifest.json"]


def test_a_claim_refuses_a_second_claim_until_released(corpus: Path, tmp_path: Path) -> None:
    from kebab_chunk.beam.claim import claim_output

    location = resolve_corpus(str(corpus))
    out = tmp_path / "out"
    with claim_output(str(out), corpus=location) as claim:
        assert claim.held and (out / LOCK).exists()
        with pytest.raises(RunSetupError, match="in use by another kebab-chunk run"):
            claim_output(str(out), corpus=location)
        # the output counts as empty (the lock file is not output) and --overwrite keeps
        # the lock file and the directory that holds it
        assert prepare_output(str(out), overwrite=False, corpus=location) == str(out)
        (out / "chunks").mkdir()
        (out / "manifest.json").write_text("{}")
        assert prepare_output(str(out), overwrite=True, corpus=location) == str(out)
        assert sorted(os.listdir(out)) == [LOCK]
    assert not claim.held and os.listdir(out) == []
    # a lock file left by a killed run is only a file: the next claim takes it
    (out / LOCK).write_text("12345\n")
    with claim_output(str(out), corpus=location) as again:
        assert again.held
    assert os.listdir(out) == []


def test_a_claim_racing_a_release_locks_the_file_that_is_there(
    monkeypatch: pytest.MonkeyPatch, corpus: Path, tmp_path: Path
) -> None:
    from kebab_chunk.beam import claim as claim_module

    location = resolve_corpus(str(corpus))
    out = str(tmp_path / "out")
    first = claim_module.claim_output(out, corpus=location)
    real_flock = claim_module.fcntl.flock

    def flock(fd: int, operation: int) -> None:
        first.release()  # the holder lets go (and removes the file) after our open
        real_flock(fd, operation)

    monkeypatch.setattr(claim_module.fcntl, "flock", flock)
    second = claim_module.claim_output(out, corpus=location)
    monkeypatch.undo()
    try:
        assert second.held
        with pytest.raises(RunSetupError, match="in use by another kebab-chunk run"):
            claim_module.claim_output(out, corpus=location)
    finally:
        second.release()


def test_remote_outputs_are_not_claimed(corpus: Path) -> None:
    from kebab_chunk.beam.claim import claim_output

    claim = claim_output("gs://bucket/out", corpus=resolve_corpus(str(corpus)))
    assert not claim.held and claim.path == "gs://bucket/out"
    claim.release()


def test_run_as_a_library_takes_the_claim(corpus: Path, tmp_path: Path) -> None:
    from kebab_chunk.beam.claim import claim_output
    from kebab_chunk.beam.graph import run
    from kebab_chunk.cli.run import parse_args

    out = tmp_path / "out"
    config, beam_args = parse_args(["--input", str(corpus), "--output", str(out), *QUIET])
    with claim_output(str(out), corpus=config.corpus), pytest.raises(RunSetupError):
        run(config, beam_args)
    assert os.listdir(out) == []


# -- item 8: manifest.json is whole or absent ---------------------------------------------

_FULL_DISK = """
import json, os, resource, signal, sys
from kebab_chunk.beam.manifest import _WriteManifestFn

out = sys.argv[1]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))
header = {"padding": "x" * 20000}  # the manifest is larger than the disk has room for
try:
    list(_WriteManifestFn(out, header, {}).process({"counts": {}}, []))
except OSError as exc:
    print(json.dumps({"errno": exc.errno, "left": sorted(os.listdir(out))}))
else:
    print(json.dumps({"errno": None, "left": sorted(os.listdir(out))}))
"""


def test_a_full_disk_while_writing_the_manifest_leaves_no_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    script = tmp_path / "full_disk.py"
    script.write_text(_FULL_DISK)
    report = json.loads(python_stdout(str(script), str(out)).splitlines()[-1])
    assert report["errno"] is not None, "the write failed, as a full disk makes it"
    assert report["left"] == ["chunks"], "no manifest.json, not even a partial one"


def test_the_manifest_is_written_whole(tmp_path: Path) -> None:
    from kebab_chunk.beam.manifest import _WriteManifestFn

    out = tmp_path / "out"
    out.mkdir()
    (path,) = _WriteManifestFn(str(out), {"a": 1}, {"b": 2}).process({"counts": {}}, [])
    assert path == f"{out}/manifest.json" and os.listdir(out) == ["manifest.json"]
    written = json.loads((out / "manifest.json").read_text())
    assert written["a"] == 1 and written["run_info"]["b"] == 2


@pytest.fixture
def old_output(tmp_path: Path) -> Iterator[tuple[Path, CorpusLocation]]:
    corpus = tmp_path / "in"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n")
    out = tmp_path / "out"
    part = out / "chunks" / "chunker_version=md-heading-v1" / "part-00000-of-00001.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"old part")
    (out / "errors").mkdir()
    (out / "errors" / "part-00000-of-00001.parquet").write_bytes(b"old errors")
    (out / "_tmp-0123").mkdir()
    (out / "_tmp-0123" / "spill-x.bin").write_bytes(b"spill")
    (out / "manifest.json").write_text('{"old": true}')
    yield out, resolve_corpus(str(corpus))


def test_overwrite_deletes_the_manifest_before_any_part_file(
    monkeypatch: pytest.MonkeyPatch, old_output: tuple[Path, CorpusLocation]
) -> None:
    out, location = old_output
    manifest = out / "manifest.json"
    real_delete = FileSystems.delete
    early: list[str] = []

    def delete(paths: list[str]) -> None:
        early.extend(p for p in paths if manifest.exists() and p != str(manifest))
        real_delete(paths)

    monkeypatch.setattr(FileSystems, "delete", delete)
    prepare_output(str(out), overwrite=True, corpus=location)
    assert early == [], "these went while the old manifest still called the output complete"
    assert not out.exists() or os.listdir(out) == []


def test_a_kill_during_overwrite_leaves_no_old_manifest(
    monkeypatch: pytest.MonkeyPatch, old_output: tuple[Path, CorpusLocation]
) -> None:
    out, location = old_output
    real_delete = FileSystems.delete

    def delete_then_die(paths: list[str]) -> None:
        if any(not p.endswith("manifest.json") for p in paths):
            raise KeyboardInterrupt("killed while deleting the old output")
        real_delete(paths)

    monkeypatch.setattr(FileSystems, "delete", delete_then_die)
    with pytest.raises(KeyboardInterrupt):
        prepare_output(str(out), overwrite=True, corpus=location)
    assert not (out / "manifest.json").exists(), "what is left is visibly incomplete"


def test_overwrite_of_a_remote_output_deletes_the_manifest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = "gs://bucket/out"
    listed = [f"{root}/chunks/x/part-0.parquet", f"{root}/errors/part-0.parquet"]
    listed += [f"{root}/manifest.json", f"{root}/_tmp-1/spill.bin"]
    calls: list[list[str]] = []

    def match(patterns: list[str], limits: Any = None) -> list[MatchResult]:
        return [MatchResult(patterns[0], [FileMetadata(p, 1) for p in listed])]

    monkeypatch.setattr(FileSystems, "match", match)
    monkeypatch.setattr(FileSystems, "delete", lambda paths: calls.append(list(paths)))
    corpus = CorpusLocation("gs://bucket/in/**", "gs://bucket/in/")
    assert prepare_output(root, overwrite=True, corpus=corpus) == root
    assert calls[0] == [f"{root}/manifest.json"]
    assert sorted(p for call in calls[1:] for p in call) == sorted(
        p for p in listed if not p.endswith("manifest.json")
    )
