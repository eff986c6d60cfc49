# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: FileSystems is untyped.)
"""Writing a small file whole, through Beam's FileSystems: readers see all of it or none.

Used for the file that marks an output finished: ``manifest.json`` (and, in an updated
output, the copy of its latest snapshot; the snapshot itself is created only if absent,
kebab_chunk/output/snapshots.py).
"""

from __future__ import annotations

import contextlib
import os
import uuid

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.output.layout import TEMP_PREFIX

__all__ = ["write_whole"]


def write_whole(path: str, data: bytes, temp_prefix: str = TEMP_PREFIX) -> None:
    """Write ``data`` to ``path`` so that ``path`` holds either all of it or nothing new.

    Why: the manifest marks an output complete, so a half-written one (a full disk, a kill
    mid-write) must never carry its name. The bytes go to a temporary name in the same
    directory (by default ``_tmp-``: disposable for readers and ``--overwrite``) and are
    renamed into
    place. Locally the file is fsynced before ``os.replace`` (atomic within a filesystem)
    and the directory after it. Remote filesystems use ``FileSystems.rename``; on object
    stores that is a copy and a delete, but an object only appears once whole. A failed
    write removes its temporary file and raises.
    """
    directory, name = path.rsplit("/", 1)
    temp = f"{directory}/{temp_prefix}{uuid.uuid4().hex}-{name}"
    try:
        if FileSystems.get_scheme(path) is None:
            with open(temp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)
            _fsync_directory(directory)
        else:
            with FileSystems.create(temp, mime_type="application/octet-stream") as f:
                f.write(data)
            FileSystems.rename([temp], [path])
    except BaseException:
        with contextlib.suppress(Exception):
            if FileSystems.exists(temp):
                FileSystems.delete([temp])
        raise


def _fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (best effort: not every OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
