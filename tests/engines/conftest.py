"""Fixtures of the distributed-engine tests: provisioned tools, a mixed corpus, job runs.

Provisioning failures are test errors, never skips: a machine without Java, Maven or Go
fails these tests with one sentence saying what to install (tests/engines/provision.py).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.beam.helpers import CORPUS, REPO, part_files
from tests.engines import provision
from tests.hostile.corpus import Expect, build_bad_corpus

RUN_TIMEOUT_S = 600
#: Hostile cases above this size stay out of the engine corpus (the hostile suite runs
#: them all on the DirectRunner); everything else of that corpus goes in.
HOSTILE_MAX_BYTES = 2 * 1024 * 1024
HOSTILE = "hostile"


@dataclass(frozen=True)
class Mixed:
    """The engine tests' corpus: fixtures/corpus, HTML, DOCX and hostile files."""

    root: Path
    hostile: dict[str, Expect]  # source_uri -> what the run must make of it


@pytest.fixture(scope="session")
def beam262_bin() -> Path:
    return provision.beam_env()


@pytest.fixture(scope="session")
def boot262() -> Path:
    return provision.python_boot()


def _drop_heavy(root: Path) -> None:
    """Remove FIFOs and files above HOSTILE_MAX_BYTES (links are left as they are)."""
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            big = stat.S_ISREG(st.st_mode) and st.st_size > HOSTILE_MAX_BYTES
            if stat.S_ISFIFO(st.st_mode) or big:
                os.unlink(path)


@pytest.fixture(scope="session")
def mixed_corpus(tmp_path_factory: pytest.TempPathFactory) -> Mixed:
    base = tmp_path_factory.mktemp("engines-corpus")
    root = base / "corpus"
    shutil.copytree(CORPUS, root)
    for sub, names in {
        "web": ["article.html", "malformed.html", "cp1252-meta.html"],
        "office": ["report.docx", "not-a-zip.docx", "truncated.docx"],
    }.items():
        (root / sub).mkdir()
        src = REPO / "fixtures" / ("html" if sub == "web" else "docx")
        for name in names:
            shutil.copyfile(src / name, root / sub / name)
    expected = build_bad_corpus(root / HOSTILE, base / "outside")
    _drop_heavy(root / HOSTILE)
    hostile = {
        f"{HOSTILE}/{uri}": e
        for uri, e in expected.items()
        if os.path.lexists(root / HOSTILE / uri)
    }
    return Mixed(root, hostile)


@dataclass
class Output:
    path: Path
    log: str

    @property
    def manifest(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.path / "manifest.json").read_text())
        return loaded

    def deterministic_manifest(self) -> dict[str, Any]:
        return {k: v for k, v in self.manifest.items() if k not in ("run_info", "incremental")}

    def part_files(self) -> dict[str, bytes]:
        return part_files(self.path)


def kebab_run(bin_dir: Path, corpus: Path, output: Path, *args: str, **env: str) -> Output:
    """``kebab-chunk run`` from ``bin_dir``'s venv in a child process; fails the test on a
    non-zero exit, showing the end of the log."""
    child_env = dict(os.environ, **env)
    child_env["PATH"] = os.pathsep.join([str(bin_dir), child_env.get("PATH", "")])
    # No --default_sdk_harness_log_level=WARNING here: Java job servers parse it as their
    # own LogLevel enum, which has no WARNING, and reject the whole job (docs/guide/runners.md).
    cmd = [
        str(bin_dir / "kebab-chunk"),
        "run",
        "--input",
        str(corpus),
        "--output",
        str(output),
        *args,
    ]
    proc = subprocess.run(
        cmd,
        cwd=output.parent,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{log[-6000:]}"
    return Output(output, log)


def assert_same_output(got: Output, want: Output) -> None:
    """Byte-identical Parquet files, and the same manifest apart from run information."""
    got_files, want_files = got.part_files(), want.part_files()
    assert sorted(got_files) == sorted(want_files)
    differing = [name for name in want_files if got_files[name] != want_files[name]]
    assert differing == []
    assert got.deterministic_manifest() == want.deterministic_manifest()


@pytest.fixture(scope="session")
def direct262(
    tmp_path_factory: pytest.TempPathFactory, mixed_corpus: Mixed, beam262_bin: Path
) -> Output:
    """The oracle of the Flink and Spark runs: the DirectRunner in the same Beam venv."""
    out = tmp_path_factory.mktemp("direct262") / "out"
    return kebab_run(beam262_bin, mixed_corpus.root, out)


@pytest.fixture(scope="session")
def direct_main(tmp_path_factory: pytest.TempPathFactory, mixed_corpus: Mixed) -> Output:
    """The DirectRunner of the main environment (this project's pinned Beam)."""
    out = tmp_path_factory.mktemp("direct-main") / "out"
    return kebab_run(Path(sys.executable).parent, mixed_corpus.root, out)
