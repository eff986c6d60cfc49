"""The progress bar of long runs: a real total from the start, rate, ETA and failed files as
they happen; nothing at all off a terminal or in CI.

Found by a user: the line read ``files 2628/1 done``, then ``2628/2053``, and the error
count stayed 0 until the end. The bar is forced on here with ``enabled=True`` and a string
stream, on a fake clock, and what it drew is read back.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kebab_chunk.report import progress as progress_module
from kebab_chunk.report.progress import (
    Progress,
    note_done,
    note_error,
    progress_enabled,
    write_above,
)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "corpus"
#: What a drawn bar writes that a log file must never get: carriage returns, ANSI escapes.
CONTROL = re.compile(r"[\r\x1b]")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _drawn(stream: io.StringIO) -> list[str]:
    """Every state the bar drew, in order (tqdm redraws with a carriage return)."""
    return [part.strip() for part in stream.getvalue().split("\r") if part.strip()]


def _bar(total: int | None, stream: io.StringIO, clock: _Clock) -> Progress:
    return Progress(total, stream=stream, enabled=True, clock=clock, min_interval=0, refresh_s=None)


def test_the_bar_shows_done_of_total_rate_eta_and_failed_files() -> None:
    stream, clock = _Tty(), _Clock()
    bar = _bar(10, stream, clock)
    assert "0/10" in _drawn(stream)[0]  # the total is there before anything finishes
    clock.now += 4
    bar.finish("a.md")
    bar.finish("b.pdf", error=True)  # 2 files in 4 s: 0.5 files/s; 8 left: 16 s to go
    last = _drawn(stream)[-1]
    for expected in (" 20%|", "2/10", "00:04<00:16", "0.50 files/s", "1 error"):
        assert expected in last, (expected, last)
    assert bar.line() == last
    bar.close()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_errors_are_counted_once_per_file_as_they_happen() -> None:
    stream, clock = _Tty(), _Clock()
    bar = _bar(5, stream, clock)
    bar.finish("a.md")
    bar.fail("a.md")  # a chunking error of a document already counted done
    assert (bar.done, bar.errors) == (1, 1)
    assert "1 error]" in _drawn(stream)[-1]  # drawn at once, not at the end
    bar.fail("a.md")  # a second label failing on the same document
    bar.finish("b.md", error=True)
    bar.fail("b.md")
    assert (bar.done, bar.errors) == (2, 2)
    assert "2/5" in _drawn(stream)[-1] and "2 errors]" in _drawn(stream)[-1]
    bar.close()


def test_done_never_exceeds_the_total() -> None:
    """Entries the up-front count cannot see (a broken link) grow the total, never 3/1."""
    stream, clock = _Tty(), _Clock()
    bar = _bar(1, stream, clock)
    for uri in ("a", "b", "c"):
        bar.finish(uri)
    assert bar.total == 3
    assert "3/3" in _drawn(stream)[-1] and "100%" in _drawn(stream)[-1]
    bar.close()


def test_without_a_total_it_counts_files_with_rate() -> None:
    stream, clock = _Tty(), _Clock()
    bar = _bar(None, stream, clock)
    clock.now += 2
    for uri in ("a", "b", "c", "d"):
        bar.finish(uri)
    last = _drawn(stream)[-1]
    assert last.startswith("kebab-chunk: 4 files [00:02") and "2.00 files/s" in last, last
    assert "%" not in last and "/?" not in last
    bar.close()


def test_elapsed_only_when_counts_cannot_reach_the_launcher() -> None:
    stream, clock = _Tty(), _Clock()
    bar = Progress(
        counting=False,
        description="kebab-chunk: running on FlinkRunner",
        stream=stream,
        enabled=True,
        clock=clock,
        refresh_s=None,
    )
    clock.now += 65
    bar.close()
    assert _drawn(stream)[-1] == "kebab-chunk: running on FlinkRunner [01:05]"


def test_the_elapsed_time_moves_without_counts() -> None:
    stream = _Tty()
    bar = Progress(3, stream=stream, enabled=True, refresh_s=0.01)
    deadline = time.monotonic() + 5
    while len(_drawn(stream)) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    bar.close()
    assert len(_drawn(stream)) >= 3  # redrawn by the ticker, nothing counted
    assert bar.done == 0


@pytest.mark.parametrize(
    ("tty", "env", "expected"),
    [
        (True, {}, True),
        (True, {"CI": "0"}, True),
        (True, {"CI": "true"}, False),
        (False, {}, False),
    ],
)
def test_enabled_only_on_a_terminal_outside_ci(
    tty: bool, env: dict[str, str], expected: bool
) -> None:
    assert progress_enabled(_Tty() if tty else io.StringIO(), env) is expected


def test_off_a_terminal_nothing_is_written_but_counts_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    piped = io.StringIO()
    with Progress(2, stream=piped) as bar:
        bar.finish("a")
        bar.finish("b", error=True)
    assert piped.getvalue() == ""
    assert (bar.done, bar.errors) == (2, 1)
    monkeypatch.setenv("CI", "true")
    terminal = _Tty()
    with Progress(2, stream=terminal) as bar:
        bar.advance(2)
    assert terminal.getvalue() == ""


def test_hooks_feed_the_active_reporter_from_many_threads() -> None:
    bar = Progress(4000, stream=io.StringIO())
    note_done("before")  # no reporter active: nothing happens
    with bar.activate():

        def work(worker: int) -> None:
            for i in range(500):
                uri = f"{worker}/{i}"
                note_done(uri, error=i % 10 == 0)
                if i % 10 == 1:
                    note_error(uri)  # counted done already, now failed

        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    note_done("after")
    assert (bar.done, bar.errors) == (4000, 800)


def test_log_lines_are_written_above_the_bar() -> None:
    stream, clock = _Tty(), _Clock()
    bar = _bar(4, stream, clock)
    bar.finish("a")
    write_above("WARNING something happened", stream)
    text = stream.getvalue()
    before, after = text.split("WARNING something happened\n")
    assert "1/4" in before and "1/4" in after  # cleared, the line written, then redrawn
    bar.close()
    plain = io.StringIO()
    write_above("no bar here", plain)
    assert plain.getvalue() == "no bar here\n"


@dataclass(frozen=True)
class _Outcome:
    source_uri: str


@dataclass(frozen=True)
class _Error:
    source_uri: str


class _Emit:
    """Per file: an outcome, or a parse error row for names starting with 'bad'."""

    def __call__(self, uri: str) -> Iterator[object]:
        import apache_beam as beam

        if uri.startswith("bad"):
            yield beam.pvalue.TaggedOutput("parse_errors", _Error(uri))
        else:
            yield _Outcome(uri)
            if uri.startswith("chunkfail"):
                yield beam.pvalue.TaggedOutput("chunk_errors", _Error(uri))


_SEEN: list[tuple[str, int]] = []


def _snapshot(outcome: _Outcome) -> None:
    reporter = progress_module._ACTIVE
    assert reporter is not None
    _SEEN.append((outcome.source_uri, reporter.errors))


def test_report_progress_counts_files_and_errors_while_the_stage_runs() -> None:
    """Each PCollection observed on its own, so counts arrive as elements are processed
    (a Flatten of several stages would hold them back until those stages end)."""
    import apache_beam as beam

    from kebab_chunk.beam.progress import ReportProgress

    uris = ["bad-1", "ok-1", "chunkfail-1", "ok-2", "ok-3"]
    bar = Progress(len(uris), stream=io.StringIO())
    _SEEN.clear()
    with bar.activate(), beam.Pipeline(runner="DirectRunner") as p:
        out = (
            p
            | beam.Create(uris, reshuffle=False)
            | beam.FlatMap(_Emit()).with_outputs("parse_errors", "chunk_errors", main="outcomes")
        )
        _ = {
            "outcomes": out.outcomes,
            "parse_errors": out.parse_errors,
            "chunk_errors": out.chunk_errors,
        } | ReportProgress()
        _ = out.outcomes | beam.Map(_snapshot)
    assert (bar.done, bar.errors) == (5, 2)
    seen = dict(_SEEN)
    assert seen["ok-3"] == 2, _SEEN  # both failures known before the stage ended


def _run_with_bar(
    corpus: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[int, _Tty]:
    """``kebab-chunk run`` with stderr a terminal; every count drawn (no throttling)."""
    from kebab_chunk.beam import graph
    from kebab_chunk.cli.run import main as run_main

    terminal = _Tty()
    original = graph.launch_progress

    def unthrottled(options: Any, count_files: Callable[[], int | None]) -> Progress:
        bar = original(options, count_files, stream=terminal, enabled=True)
        bar._bar.mininterval = 0
        return bar

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(graph, "launch_progress", unthrottled)
    monkeypatch.setattr(sys, "stderr", terminal)
    return run_main(["--input", str(corpus), "--output", str(out), *extra]), terminal


_STATE = re.compile(r"\| (\d+)/(\d+) \[.*?(\d+) errors?\]")


def test_kebab_chunk_run_draws_the_real_total_and_errors_as_they_happen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    good = [path for path in sorted(CORPUS.rglob("*.md")) if path.name != "blob.md"]
    for i in range(8):
        shutil.copy(good[i % len(good)], corpus / f"good-{i}.md")
    for i in range(8):
        (corpus / f"broken-{i}.pdf").write_bytes(b"%PDF-1.7 this is not a PDF at all")

    status, terminal = _run_with_bar(corpus, tmp_path / "out", monkeypatch)
    assert status == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    matched, errors = manifest["accounting"]["files_matched"], manifest["accounting"]["errors"]
    assert (matched, errors) == (16, 8)
    states = [tuple(map(int, m.groups())) for m in map(_STATE.search, _drawn(terminal)) if m]
    assert states[0] == (0, 16, 0)  # the total is known before the first file is done
    assert states[-1] == (16, 16, 8)
    assert all(total == 16 for _, total, _ in states)
    # Failures show while good files are still being done, not all at the end.
    assert any(failed > 0 and done < matched - errors + failed for done, _, failed in states)


def test_a_piped_run_writes_no_bar_and_no_info_logs(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in sorted(CORPUS.rglob("*.md"))[:3]:
        shutil.copy(path, corpus / path.name)
    command = [sys.executable, "-m", "kebab_chunk.cli", "run", "--input", str(corpus)]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    quiet = subprocess.run(
        [*command, "--output", str(tmp_path / "quiet")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert quiet.returncode == 0, quiet.stderr
    assert not CONTROL.search(quiet.stderr), repr(quiet.stderr[:300])
    assert "INFO" not in quiet.stderr, quiet.stderr[:300]
    verbose = subprocess.run(
        [*command, "--output", str(tmp_path / "verbose"), "--verbose"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert verbose.returncode == 0, verbose.stderr
    assert "INFO" in verbose.stderr  # Beam's own records, shown on request


def test_multi_processing_workers_keep_their_info_log_off_the_terminal(tmp_path: Path) -> None:
    """The DirectRunner's worker processes logged every stage at INFO to the terminal."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(CORPUS / "guides" / "configuration.md", corpus / "a.md")
    command = [sys.executable, "-m", "kebab_chunk.cli", "run", "--input", str(corpus)]
    beam_options = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    run = subprocess.run(
        [*command, "--output", str(tmp_path / "out"), *beam_options],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "CI"},
        check=False,
    )
    assert run.returncode == 0, run.stderr
    info = [line for line in run.stderr.splitlines() if line.startswith("INFO")]
    # Only the harness's own first line, printed before it reads its options, remains.
    assert all("Logging handler created" in line for line in info), "\n".join(info[:10])
