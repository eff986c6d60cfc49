"""The read stage's guards against a hostile or changing local corpus (issue 14).

Each test names the failure an outside tester saw: a symbolic link flipped between the
check and the read, a FIFO swapped in after the listing, directories that cannot be
listed, two file names sharing one ``source_uri``, and error rows that differ between
identical runs because they carried absolute paths or process ids.
"""

from __future__ import annotations

import os
import pickle
import threading
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.beam import ReadCorpus, read
from kebab_chunk.beam.locations import resolve_corpus
from kebab_chunk.beam.read import (
    BROKEN_SYMLINK,
    NOT_A_REGULAR_FILE,
    SYMLINK_OUTSIDE_CORPUS,
    UNREADABLE_DIRECTORY,
    ReadRefused,
    portable_uri,
    read_local,
    uri_path_bytes,
)
from kebab_chunk.output.records import ErrorRecord
from tests.beam.listing import read_listing

INSIDE = b"# Inside\n\nThe corpus's own text.\n"
SECRET = b"# Outside\n\nTHE SECRET that must never be read.\n"


def _read(root: Path, path: Path, max_bytes: int = 1 << 20) -> bytes | ReadRefused:
    try:
        got = read_local(str(path), os.path.realpath(root), path.name, max_bytes)
    except ReadRefused as refused:
        return refused
    assert got.raw is not None
    return got.raw


def test_a_link_flipped_between_inside_and_outside_never_yields_the_outside_text(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "corpus", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "inside.md").write_bytes(INSIDE)
    (outside / "secret.md").write_bytes(SECRET)
    link = root / "flip.md"
    link.symlink_to(root / "inside.md")
    stop = threading.Event()

    def flip() -> None:
        targets = [outside / "secret.md", root / "inside.md"]
        i = 0
        while not stop.is_set():
            tmp = root / f".flip-{i}"
            tmp.symlink_to(targets[i % 2])
            os.replace(tmp, link)  # atomic: the link always exists, pointing one way
            i += 1

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    outcomes: set[str] = set()
    try:
        for _ in range(3000):
            got = _read(root, link)
            if isinstance(got, ReadRefused):
                assert got.error_type == SYMLINK_OUTSIDE_CORPUS, got.message
                outcomes.add("refused")
            else:
                assert got == INSIDE, "the outside file's bytes were read"
                outcomes.add("read")
    finally:
        stop.set()
        flipper.join(10)
    assert outcomes == {"read", "refused"}  # both directions were really exercised


def test_a_fifo_listed_as_a_file_is_refused_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    fifo = root / "was-a-file.md"
    os.mkfifo(fifo)  # no writer ever opens it: a blocking open would wait forever
    result: list[bytes | ReadRefused] = []
    reader = threading.Thread(target=lambda: result.append(_read(root, fifo)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the stuck reader so the test process can end
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    [got] = result
    assert isinstance(got, ReadRefused) and got.error_type == NOT_A_REGULAR_FILE


def test_a_link_to_a_fifo_inside_the_root_is_refused_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    os.mkfifo(root / "fifo")
    (root / "link.md").symlink_to(root / "fifo")
    got = _read(root, root / "link.md")
    assert isinstance(got, ReadRefused) and got.error_type == NOT_A_REGULAR_FILE


def test_a_link_inside_the_root_is_followed_and_the_size_limit_holds(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "real.md").write_bytes(INSIDE)
    (root / "link.md").symlink_to(root / "sub" / "real.md")
    assert _read(root, root / "link.md") == INSIDE
    big = read_local(str(root / "link.md"), os.path.realpath(root), "link.md", 4)
    assert big.raw is None and big.head == INSIDE[:8] and big.size == len(INSIDE)


# --- each entry ends in exactly one place, whatever the file system does meanwhile -------


def test_links_that_flip_during_the_run_each_end_in_exactly_one_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Links flip between an inside file and a missing target every time the corpus
    folder is listed and before every read, so no two looks agree. Each link must still be
    one ``files`` entry with exactly one outcome: its bytes or one error row. (Listing the
    folder twice, Beam's match and a walk for dangling links, put such a link in both
    listings or in neither: 13 entries chunked and errored, 39 in no table.)"""
    root, outside = tmp_path / "corpus", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "inside.md").write_bytes(INSIDE)
    links = [root / f"flip-{i}.md" for i in range(6)]
    targets = [root / "inside.md", outside / "missing.md"]
    state = [0]
    lock = threading.Lock()

    def flip() -> None:
        state[0] = 1 - state[0]
        for link in links:
            tmp = root / f".tmp-{link.name}"
            tmp.symlink_to(targets[state[0]])
            os.replace(tmp, link)  # atomic: the link always exists

    flip()
    location = resolve_corpus(str(root))  # before the patches: resolving matches once
    real_scandir, real_read_local = os.scandir, read.read_local

    def scandir(path: Any = ".") -> Any:
        if isinstance(path, str) and os.path.normpath(path) == str(root):
            with lock:
                flip()
        return real_scandir(path)

    def read_local(*args: Any, **kwargs: Any) -> Any:
        with lock:
            flip()
            return real_read_local(*args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(read, "read_local", read_local)
    uris = sorted(link.name for link in links)

    def one_place_each(outputs: list[tuple[str, str]]) -> None:
        files = Counter(u for kind, u in outputs if kind == "file")
        ends = Counter(u for kind, u in outputs if kind != "file")
        assert sorted(u for u in files if u in uris) == uris, files
        assert all(files[u] == 1 and ends[u] == 1 for u in files), (files, ends)
        assert {kind for kind, u in outputs if u in uris} == {"file", "read", "error"}

    with BeamTestPipeline() as p:
        out = p | ReadCorpus(location)
        tagged = (
            out["files"] | "f" >> beam.Map(lambda f: ("file", f.source_uri)),
            out["documents"] | "d" >> beam.Map(lambda d: ("read", d.source_uri)),
            out["errors"] | "e" >> beam.Map(lambda e: ("error", e.source_uri)),
            out["skipped"] | "s" >> beam.Map(lambda f: ("skipped", f.source_uri)),
        ) | beam.Flatten()
        assert_that(tagged, one_place_each)


# --- source_uri: an injective encoding of the relative path ------------------------------

_NAME_BYTES = st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\0" not in b)
_PATHS = st.lists(
    st.one_of(_NAME_BYTES, st.sampled_from([b"%", b"%ff", b"\\xff", b"\xff", b"%25", b"a%2"])),
    min_size=1,
    max_size=4,
).map(lambda parts: b"/".join(parts))


def _uri(path: bytes) -> str:
    return portable_uri(os.fsdecode(path))


@settings(max_examples=400, deadline=None)
@given(_PATHS, _PATHS)
def test_distinct_paths_never_share_a_source_uri(a: bytes, b: bytes) -> None:
    ua, ub = _uri(a), _uri(b)
    ua.encode("utf-8")  # valid UTF-8: Parquet and JSON can hold it
    assert uri_path_bytes(ua) == a
    if a != b:
        assert ua != ub


def test_valid_names_without_escape_lookalikes_are_unchanged() -> None:
    for name in ["docs/a b.md", "100%.md", "ü/日本.md", "a%2.md", "new\nline.md"]:
        assert portable_uri(name) == name
    # The two names the outside tester collided now differ.
    assert _uri(b"x\xff.md") == "x%FF.md"
    assert _uri(b"x\\xff.md") == "x\\xff.md"
    assert _uri(b"x%FF.md") == "x%25FF.md"


# --- directories that cannot be listed -----------------------------------------------------


def _walk_as_nobody(root: Path) -> list[ErrorRecord]:
    """The unlisted-entries walk run in a child that dropped root's right to read all."""
    read_r, write_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: no pytest machinery past this point, only os._exit
        code = 1
        try:
            os.close(read_r)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            rows = [
                out
                for out in read_listing(resolve_corpus(str(root), must_match=False))
                if isinstance(out, ErrorRecord)
            ]
            os.write(write_w, pickle.dumps(rows))
            code = 0
        except BaseException:
            os.write(write_w, traceback.format_exc().encode())
        finally:
            os._exit(code)
    os.close(write_w)
    with os.fdopen(read_r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, data.decode(errors="replace")
    rows: list[ErrorRecord] = pickle.loads(data)
    return rows


def test_a_directory_that_cannot_be_listed_becomes_one_error_row(open_tmp: Path) -> None:
    root = open_tmp / "corpus"
    (root / "open").mkdir(parents=True)
    (root / "open" / "a.md").write_bytes(INSIDE)
    locked = root / "locked"
    (locked / "deeper").mkdir(parents=True)
    for name in ("b.md", "c.md", "deeper/d.md"):
        (locked / name).write_bytes(INSIDE)
    for d in (root, root / "open"):
        d.chmod(0o755)
    locked.chmod(0o000)
    try:
        rows = _walk_as_nobody(root)
    finally:
        locked.chmod(0o755)
    assert [(r.source_uri, r.error_type) for r in rows] == [("locked/", UNREADABLE_DIRECTORY)]
    assert "cannot be listed" in rows[0].message


def test_files_of_a_folder_that_can_be_listed_but_not_searched_are_error_rows(
    open_tmp: Path,
) -> None:
    """Mode 644 on a folder: its names can be read, its files cannot be opened. Each file
    is one row (it used to be in no table), and a folder inside it, which cannot be listed
    through it, is one ``unreadable_directory`` row."""
    root = open_tmp / "corpus"
    noexec = root / "noexec"
    (noexec / "inner").mkdir(parents=True)
    for name in ("a.md", "b.md", "inner/c.md"):
        (noexec / name).write_bytes(INSIDE)
    root.chmod(0o755)
    noexec.chmod(0o644)
    try:
        rows = _walk_as_nobody(root)
    finally:
        noexec.chmod(0o755)
    assert sorted((r.source_uri, r.error_type) for r in rows) == [
        ("noexec/a.md", "PermissionError"),
        ("noexec/b.md", "PermissionError"),
        ("noexec/inner/", UNREADABLE_DIRECTORY),
    ]


# --- error rows are reproducible: no absolute paths, no process ids ------------------------


def test_error_messages_carry_no_host_paths_or_process_ids(tmp_path: Path) -> None:
    root, outside = tmp_path / "corpus", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_bytes(SECRET)
    (root / "environ").symlink_to("/proc/self/environ")
    (root / "out.md").symlink_to(outside / "secret.md")
    (root / "broken.md").symlink_to(outside / "missing.md")
    (root / "dir-out").symlink_to(outside, target_is_directory=True)
    os.mkfifo(root / "fifo.md")
    messages: list[str] = []
    for name in ("environ", "out.md", "fifo.md"):
        got = _read(root, root / name)
        assert isinstance(got, ReadRefused)
        messages.append(got.message)
    again = [_read(root, root / n) for n in ("environ", "out.md", "fifo.md")]
    assert [g.message for g in again if isinstance(g, ReadRefused)] == messages
    walked = [
        out for out in read_listing(resolve_corpus(str(root))) if isinstance(out, ErrorRecord)
    ]
    assert {(r.source_uri, r.error_type) for r in walked} == {
        ("broken.md", BROKEN_SYMLINK),
        ("dir-out", SYMLINK_OUTSIDE_CORPUS),
        ("environ", SYMLINK_OUTSIDE_CORPUS),
        ("out.md", SYMLINK_OUTSIDE_CORPUS),
        ("fifo.md", NOT_A_REGULAR_FILE),
    }
    messages += [r.message for r in walked]
    for message in messages:
        assert str(tmp_path) not in message and "/proc/" not in message, message
        assert str(os.getpid()) not in message, message


def test_a_folder_swapped_for_a_link_after_listing_never_yields_the_outside_text(
    tmp_path: Path,
) -> None:
    """A listed path's file is a regular file with no link, so it is opened at once; when
    its folder became a link to outside meanwhile, the descriptor's real path refuses it,
    with the error row the closer look gave before opening."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("inside")
    listed = root / "sub" / "a.md"
    outside.mkdir()
    (outside / "a.md").write_text("outside secret")
    (root / "sub").rename(tmp_path / "moved")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    got = _read(root, listed)
    assert isinstance(got, ReadRefused) and got.error_type == SYMLINK_OUTSIDE_CORPUS
