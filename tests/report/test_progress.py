"""The progress line: drawn on a terminal only, quiet in CI, thread-safe, throttled."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path

import pytest

from kebab_chunk.report import progress
from kebab_chunk.report.progress import Progress, note_done, note_matched, progress_enabled


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("tty", "env", "expected"),
    [
        (True, {}, True),
        (True, {"CI": ""}, True),
        (True, {"CI": "0"}, True),
        (True, {"CI": "true"}, False),
        (True, {"CI": "1"}, False),
        (False, {}, False),
    ],
)
def test_enabled_only_on_a_terminal_outside_ci(tty: bool, env: dict[str, str], expected: bool):
    stream = _Tty() if tty else io.StringIO()
    assert progress_enabled(stream, env) is expected


def test_default_detection_reads_the_real_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CI", "true")
    assert Progress(stream=_Tty()).enabled is False
    monkeypatch.delenv("CI")
    assert Progress(stream=_Tty()).enabled is True
    assert Progress(stream=io.StringIO()).enabled is False


def test_draws_done_matched_and_errors_then_ends_the_line():
    stream, clock = _Tty(), _Clock()
    with Progress(total=3, stream=stream, enabled=True, clock=clock) as p:
        p.advance()
        clock.now += 1
        p.advance(error=True)
    out = stream.getvalue()
    assert "\rkebab-chunk: files 1/3 done, 0 errors" in out
    assert "\rkebab-chunk: files 2/3 done, 1 error" in out
    assert out.endswith("\n")
    assert out.count("\n") == 1


def test_redraws_are_throttled_but_the_final_state_is_always_drawn():
    stream, clock = _Tty(), _Clock()
    p = Progress(total=100, stream=stream, enabled=True, clock=clock, min_interval=0.5)
    for _ in range(50):
        p.advance()  # clock does not move: only the first is drawn
    assert stream.getvalue().count("\r") == 1
    p.close()
    assert stream.getvalue().count("\r") == 2
    assert "files 50/100 done" in stream.getvalue().rsplit("\r", 1)[1]
    p.close()  # idempotent
    assert stream.getvalue().count("\r") == 2


def test_disabled_reporter_writes_nothing():
    stream = io.StringIO()
    with Progress(total=2, stream=stream) as p:
        p.advance()
        p.advance(error=True)
    assert stream.getvalue() == ""
    assert (p.done, p.errors) == (2, 1)


def test_module_hooks_are_noops_without_an_active_reporter():
    assert progress._ACTIVE is None
    note_matched(3)
    note_done(error=True)  # nothing to feed, nothing raised


def test_module_hooks_feed_the_active_reporter_from_many_threads():
    p = Progress(stream=io.StringIO())
    with p.activate():

        def work() -> None:
            for i in range(500):
                note_matched()
                note_done(error=i % 10 == 0)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert (p.matched, p.done, p.errors) == (4000, 4000, 400)
    note_done()  # after the block the reporter is detached
    assert p.done == 4000
    assert "4000/4000 done, 400 errors" in p.line()


def test_a_reporter_that_counted_nothing_stays_silent():
    stream = _Tty()
    with Progress(stream=stream, enabled=True):
        pass
    assert stream.getvalue() == ""


def test_direct_runner_transforms_reach_the_active_reporter():
    """The pipeline's use: DoFns on the DirectRunner run in this process and feed the line."""
    import apache_beam as beam

    stream, clock = _Tty(), _Clock()
    with (
        Progress(stream=stream, enabled=True, clock=clock) as p,
        p.activate(),
        beam.Pipeline(runner="DirectRunner") as pipeline,
    ):
        _ = (
            pipeline
            | beam.Create(list(range(6)))
            | beam.Map(lambda i: (note_matched(), note_done(error=i == 2)))
        )
    assert (p.matched, p.done, p.errors) == (6, 6, 1)
    assert stream.getvalue().endswith("files 6/6 done, 1 error\n")


def test_kebab_chunk_run_shows_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real pipeline run feeds the line: every matched file ends done, errors counted."""
    import io
    import json

    from kebab_chunk.cli.run import main as run_main

    class _Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = _Terminal()
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", terminal)
    corpus = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
    status = run_main(["--input", str(corpus), "--output", str(tmp_path / "out")])
    assert status == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    matched = manifest["accounting"]["files_matched"]
    errors = manifest["accounting"]["errors"]
    final = terminal.getvalue().split("\r")[-1].strip()
    assert f"{matched}/{matched} done" in final and f"{errors} error" in final, final
