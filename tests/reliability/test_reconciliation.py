"""Every entry on disk is accounted for exactly once, file by file (issue 14).

A corpus with hostile names, a directory and a file the run may not read, a directory it
may list but not search (mode 644: its files are named but cannot be opened), a FIFO, a
socket, links in, out and dangling goes through the real command line without the
privilege to read everything (root bypasses file modes; as root the run is started by
``setpriv`` with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped, so modes apply). The
entries on disk, listed independently here, must equal the union of the chunks', the
errors' and the manifest's zero-chunk ``source_uri`` values, each entry in exactly one of
them; and the exit status is 0 exactly when the manifest says the accounting closes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kebab_chunk.beam.read import portable_uri
from kebab_chunk.output.reader import read_chunks, read_errors
from tests.beam.helpers import QUIET, REPO, subprocess_env

pytestmark = pytest.mark.slow

#: Runs a command as this root user without the capabilities that bypass file modes.
_NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search"]
_NO_DAC += ["--bounding-set=-dac_override,-dac_read_search"]
GOOD = b"# Title\n\nSome text that makes a chunk.\n"


def _build(root: Path, outside: Path) -> None:
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("# Outside\n\nnever read\n")
    raw_root = os.fsencode(root)
    for name in (b"good.md", b"n\xff.md", b"n\\xff.md", b"p%FF.md", b"100%.md", b"-dash.md"):
        with open(raw_root + b"/" + name, "wb") as f:
            f.write(GOOD)
    (root / "new\nline.md").write_bytes(GOOD)
    (root / "empty.md").write_bytes(b"")
    locked = root / "locked"
    (locked / "deeper").mkdir(parents=True)
    for name in ("a.md", "b.md", "deeper/c.md"):
        (locked / name).write_bytes(GOOD)
    (root / "unreadable.md").write_bytes(GOOD)
    unsearchable = root / "unsearchable"
    (unsearchable / "inner").mkdir(parents=True)
    for name in ("e.md", "f.md", "inner/g.md"):
        (unsearchable / name).write_bytes(GOOD)
    os.mkfifo(root / "fifo.md")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(root / "socket.md"))
    (root / "link-in.md").symlink_to(root / "good.md")
    (root / "link-out.md").symlink_to(outside / "secret.md")
    (root / "broken.md").symlink_to(outside / "missing.md")
    (root / "dir-out").symlink_to(outside, target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "inner.md").write_bytes(GOOD)
    (root / "dir-in").symlink_to(root / "sub", target_is_directory=True)


def _entries_on_disk(root: Path, unreadable_dirs: set[Path]) -> set[str]:
    """The uri of every entry the accounting must name (the rule in docs/guide/limits.md)."""
    found: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(os.fsencode(root)):
        here = Path(os.fsdecode(dirpath))
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            rel = os.fsdecode(os.path.relpath(path, os.fsencode(root)))
            if Path(os.fsdecode(path)) in unreadable_dirs:
                found.add(portable_uri(rel) + "/")  # one entry; nothing under it is read
            elif os.path.islink(path) and os.path.isdir(path):
                real = os.fsdecode(os.path.realpath(path))
                if not real.startswith(os.path.realpath(root) + os.sep):
                    found.add(portable_uri(rel))  # a link leaving the root: one entry
            elif not stat.S_ISDIR(os.lstat(path).st_mode):
                found.add(portable_uri(rel))
        dirnames[:] = [d for d in dirnames if here / os.fsdecode(d) not in unreadable_dirs]
    return found


def test_every_entry_is_accounted_for_exactly_once(open_tmp: Path) -> None:
    root, outside, out = open_tmp / "corpus", open_tmp / "outside", open_tmp / "out"
    _build(root, outside)
    (root / "locked").chmod(0o000)
    (root / "unsearchable").chmod(0o644)
    (root / "unreadable.md").chmod(0o000)
    unprivileged = _NO_DAC if os.geteuid() == 0 else []
    assert not unprivileged or shutil.which("setpriv"), "setpriv (util-linux) is needed"
    command = [sys.executable, "-m", "kebab_chunk.cli", "run", "--input", str(root)]
    run = subprocess.run(
        [*unprivileged, *command, "--output", str(out), *QUIET],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    (root / "locked").chmod(0o755)
    (root / "unsearchable").chmod(0o755)
    manifest = json.loads((out / "manifest.json").read_text())
    accounting = manifest["accounting"]
    assert run.returncode == (0 if accounting["closes"] else 1), run.stderr[-3000:]

    chunked = set(read_chunks(str(out)).column("source_uri").to_pylist())
    errors = Counter(read_errors(str(out)).column("source_uri").to_pylist())
    zero = accounting["zero_chunk_files"]
    named = Counter([*chunked, *set(errors), *zero])
    on_disk = _entries_on_disk(root, {root / "locked", root / "unsearchable" / "inner"})
    assert set(named) == on_disk
    assert all(n == 1 for n in named.values()), [u for u, n in named.items() if n > 1]
    assert accounting["files_matched"] == len(on_disk) and accounting["closes"] is True
    # The hostile names kept apart, the refused entries as errors, nothing read outside.
    assert {"n%FF.md", "n\\xff.md", "p%25FF.md", "100%.md", "new\nline.md"} <= chunked
    assert zero == ["empty.md"]
    assert {
        "locked/",
        "unreadable.md",
        "fifo.md",
        "socket.md",
        "link-out.md",
        "broken.md",
        "dir-out",
        "unsearchable/e.md",  # listed, but opening it is denied: one row each
        "unsearchable/f.md",
        "unsearchable/inner/",  # cannot be listed through a folder that cannot be searched
    } <= set(errors)
    assert "link-in.md" in chunked and "sub/inner.md" in chunked
