"""The Debian documentation corpus and the dated history of the Markdown speed race.

No network here: the corpus is read from an already unpacked package tree in a temporary
cache (as ``apt-get download`` + ``dpkg-deb -x`` leave it), and a machine without apt must
get an absent corpus with its reason instead of a failed benchmark run.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import bench_markdown, corpora


def _unpacked(cache: Path, name: str, files: dict[str, bytes]) -> None:
    root = cache / name
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / ".unpacked").write_text("pkg\n", encoding="utf-8")


def test_markdown_is_read_from_the_unpacked_packages_gzipped_or_not(tmp_path: Path) -> None:
    page = b"---\ntitle: API\n---\n# API\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    _unpacked(
        tmp_path,
        "pkg-doc_1.0-1_all",
        {
            "usr/share/doc/pkg/api/fs.md.gz": gzip.compress(page),
            "usr/share/doc/pkg/README.md": b"# Readme\n\ntext\n",
            "usr/share/doc/pkg/copy.markdown": b"# Readme\n\ntext\n",  # same bytes: once
            "usr/share/doc/pkg/binary.md": b"\x00\x01",  # not text: left out
            "usr/share/doc/pkg/index.html": b"<p>not markdown</p>",
        },
    )
    corpus = corpora.debian_markdown(["pkg-doc"], cache=tmp_path)
    assert corpus.absent is None
    assert [d.name for d in corpus.documents] == [
        "pkg-doc_1.0-1_all/usr/share/doc/pkg/README.md",
        "pkg-doc_1.0-1_all/usr/share/doc/pkg/api/fs.md",
    ]
    assert corpus.documents[1].raw == page
    assert corpus.summary()["documents"] == 2


def test_without_apt_the_corpus_is_absent_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    corpus = corpora.debian_markdown(["pkg-doc"], cache=tmp_path)
    assert corpus.documents == ()
    assert corpus.absent == "apt-get or dpkg-deb is not installed"
    assert corpus.summary()["absent"] == corpus.absent


def test_a_failed_download_makes_the_corpus_absent_not_the_run_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise subprocess.CalledProcessError(100, "apt-get download no-such-doc")

    monkeypatch.setattr(subprocess, "run", fail)
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    corpus = corpora.debian_markdown(["no-such-doc"], cache=tmp_path)
    assert corpus.documents == ()
    assert corpus.absent is not None and "CalledProcessError" in corpus.absent


def test_history_files_are_dated_and_never_overwritten(tmp_path: Path) -> None:
    first = bench_markdown.save_history("markdown", {"x": 1}, tmp_path)
    second = bench_markdown.save_history("markdown", {"x": 2}, tmp_path)
    assert first != second
    assert json.loads(first.read_text())["x"] == 1
    assert json.loads(second.read_text())["x"] == 2
    assert second.name.endswith("-2.json")
    assert {"cpu", "cores", "python"} <= set(json.loads(first.read_text())["machine"])
