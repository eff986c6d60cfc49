# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: FileSystems is untyped.)
"""An exclusive claim on a local ``--output`` for the whole of a run.

Why: the emptiness check and ``--overwrite`` look at the output once, on the launching
machine. Two runs started into the same directory would both pass that check and then
write into each other's partitions, or one run's ``--overwrite`` would delete the other's
finished output. So a run claims its output before the check and holds the claim until
it has finished.

How: ``OUTPUT/_kebab.lock`` (``LOCK_NAME``) is opened and locked with ``flock`` (exclusive,
non-blocking) and kept open for the run. The kernel drops the lock when the process ends
in any way, so a killed run never leaves a stale claim; its lock file may stay behind, and
the next run simply locks it again. The file's presence means nothing, only the lock does.
The lock file is removed, still locked, when the run lets go, so a finished output holds
exactly what it held before claims existed. A run that opened the file just before it was
removed would lock a dead file; it notices that the path now names another file (or none)
and tries again, so two claims never coexist. ``claim_directory`` is the same claim on any
directory and lock name: ``kebab-chunk rechunk`` holds ``RUNS/_rechunk.lock`` with it
(kebab_chunk/cli/rechunk.py).

Object stores (``gs://``, ``s3://``) have no lock that Beam's FileSystems can take (there
is no create-if-absent), so a claim on a remote output is a no-op, as it is on Windows (no
``flock``): do not start two runs into one such output. ``flock`` is advisory (it binds
only processes that take it) and not reliable on every network filesystem (Linux NFS
clients emulate it with byte-range locks; some FUSE filesystems ignore it).
"""

from __future__ import annotations

import contextlib
import errno
import os
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock: claims are no-ops there
    fcntl = None  # type: ignore[assignment]

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.beam.locations import (
    LOCK_NAME,
    CorpusLocation,
    RunSetupError,
    check_output_location,
)
from kebab_chunk.errors import ClaimBusyError

__all__ = ["LOCK_NAME", "ClaimBusyError", "OutputClaim", "claim_directory", "claim_output"]


class OutputClaim:
    """A held claim on an output directory; ``release()`` (or leaving ``with``) lets go.

    ``path`` is the normalised output path; ``lock_path`` is None for a remote output,
    which cannot be claimed (module docstring).
    """

    def __init__(self, path: str, lock_path: str | None = None, fd: int | None = None) -> None:
        self.path = path
        self.lock_path = lock_path
        self._fd = fd

    @property
    def held(self) -> bool:
        """True while this process holds the lock (always False for a remote output)."""
        return self._fd is not None

    def release(self) -> None:
        """Remove the lock file (while still holding it) and drop the lock; idempotent."""
        fd, self._fd = self._fd, None
        if fd is None or self.lock_path is None:
            return
        try:
            with contextlib.suppress(OSError):  # the output may have been removed meanwhile
                if _same_file(fd, self.lock_path):
                    os.unlink(self.lock_path)
        finally:
            os.close(fd)

    def __enter__(self) -> OutputClaim:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def claim_output(output: str, *, corpus: CorpusLocation) -> OutputClaim:
    """Check where ``--output`` is, then claim it for this run (RunSetupError if held).

    The location is checked first (kebab_chunk/beam/locations.py), so a refused output is
    never created. A local output directory is created here, since the lock file lives in
    it; a directory that cannot be created or written is refused in one sentence.
    """
    path = check_output_location(output, corpus=corpus)
    return claim_directory(path, LOCK_NAME, what=f"--output {output!r}", by="kebab-chunk run")


def claim_directory(path: str, lock_name: str, *, what: str, by: str) -> OutputClaim:
    """Claim the directory ``path`` with a ``flock`` on ``path/lock_name`` (module docstring).

    ``what`` names the directory in messages (e.g. ``--output 'out'``), ``by`` the kind of
    process that holds such claims (e.g. ``kebab-chunk run``). A local directory is created;
    a remote one (or any path on a system without ``flock``) gets a claim that holds
    nothing. Raises ClaimBusyError when another process holds the claim, RunSetupError when
    the directory or its lock file cannot be created or locked.
    """
    if FileSystems.get_scheme(path) is not None or fcntl is None:
        return OutputClaim(path)
    lock_path = f"{path}/{lock_name}"
    while True:
        try:
            os.makedirs(path, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise RunSetupError(
                f"cannot write to {what} ({exc.strerror or exc}); choose a "
                "directory you can create files in."
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _holder(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise RunSetupError(
                    f"cannot lock {lock_path!r} to claim {what} "
                    f"({exc.strerror or exc}); use a local directory that supports flock."
                ) from exc
            raise ClaimBusyError(
                f"{what} is in use by another {by}{holder}; wait for "
                "it to finish or choose another directory."
            ) from None
        if _same_file(fd, lock_path):
            _record_holder(fd)
            return OutputClaim(path, lock_path, fd)
        os.close(fd)  # the previous holder removed the file after we opened it: retry


def _same_file(fd: int, path: str) -> bool:
    """True when ``path`` still names the file open as ``fd``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _record_holder(fd: int) -> None:
    """Write this process id into the lock file, for the message a second run prints."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def _holder(fd: int) -> str:
    """`` (process N)`` from the lock file, or nothing when it does not say."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode().strip())
        return f" (process {pid})"
    return ""
