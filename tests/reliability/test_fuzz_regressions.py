"""Replays of the fuzz harness (issue 7, item 5): seeds, found crashes, and the engine.

Every crash ``python -m fuzz`` finds is fixed and its input is stored under
``tests/reliability/fuzz_regressions/<target>/``; this module runs each stored input and
each fixture seed through the target's check, so the crash cannot come back. It also runs
the fallback mutation engine for a moment per target, proving the harness itself works
without atheris.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from fuzz.mutate import mutate, run
from fuzz.targets import check, seed_files, targets

REGRESSIONS = Path(__file__).parent / "fuzz_regressions"
TARGETS = targets()

#: Crashes found and stored, whose fix is in a module this work could not change; strict,
#: so the mark must go once the fix lands (an unexpected pass fails the suite).
KNOWN_OPEN: dict[str, tuple[type[BaseException], str]] = {}


def _regression_inputs() -> list[object]:
    found: list[object] = []
    for folder in sorted(p for p in REGRESSIONS.iterdir() if p.is_dir()):
        assert folder.name in TARGETS, f"{folder} is not a fuzz target"
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            key = f"{folder.name}/{path.name}"
            marks = []
            if key in KNOWN_OPEN:
                raises, reason = KNOWN_OPEN[key]
                marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=reason))
            found.append(pytest.param(folder.name, path, id=key, marks=marks))
    return found


def test_every_registered_parser_is_a_fuzz_target() -> None:
    from kebab_chunk.parsers.registry import parser_versions

    assert {t.version for t in TARGETS.values()} == set(parser_versions())


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_seeds_of_every_target_pass_the_check(name: str) -> None:
    seeds = list(seed_files(TARGETS[name]))
    assert seeds, f"no fixture of {TARGETS[name].media_type} to start fuzzing {name} from"
    logging.disable(logging.WARNING)
    try:
        for path in seeds:
            check(TARGETS[name], path.read_bytes())
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize(("name", "path"), _regression_inputs())
def test_inputs_that_once_crashed_stay_fixed(name: str, path: Path) -> None:
    check(TARGETS[name], path.read_bytes())


def test_every_known_open_crash_is_stored() -> None:
    for key in KNOWN_OPEN:
        assert (REGRESSIONS / key).is_file(), key


def test_the_check_reports_a_parser_that_escapes_the_contract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The oracle is not vacuous: an IndexError from a parser is a crash."""
    from fuzz import targets as module

    def broken(*_: object, **__: object) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr(module, "parse_document", broken)
    with pytest.raises(IndexError):
        check(TARGETS["md-mistune-v1"], b"# fine\n")


def test_mutations_are_deterministic_and_bounded() -> None:
    import random

    pool = [b"# Title\n\nSome text.\n", b"%PDF-1.4\n"]
    first = [mutate(random.Random(7), pool[0], pool) for _ in range(20)]
    again = [mutate(random.Random(7), pool[0], pool) for _ in range(20)]
    assert first == again and all(len(m) <= 1 << 16 for m in first)


@pytest.mark.parametrize("name", ["md-mistune-v1", "pdf-text-v1", "html-v1"])
def test_the_mutation_engine_runs_without_finding_crashes(name: str, tmp_path: Path) -> None:
    logging.disable(logging.WARNING)
    try:
        assert run(name, seconds=1.0, seed=1, crashes=tmp_path) == 0
    finally:
        logging.disable(logging.NOTSET)
    assert not list(tmp_path.iterdir())
