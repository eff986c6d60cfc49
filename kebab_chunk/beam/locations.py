# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Where the corpus is and where the output goes, checked on the launching machine.

Everything goes through Beam's ``FileSystems``, so ``gs://`` and ``s3://`` work the same
as local paths. Local paths are made absolute here, before the pipeline is built, so
workers started in another directory (a worker pool, a portable job service) see the same
files.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.errors import RunSetupError
from kebab_chunk.output.layout import CONTENT, LOCK_NAME, MANIFEST_NAME, TEMP_PREFIX

__all__ = [
    "LOCK_NAME",
    "CorpusLocation",
    "RunSetupError",
    "check_output_location",
    "output_layout_entries",
    "prepare_output",
    "relative_uri",
    "resolve_corpus",
]

_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class CorpusLocation:
    """A match pattern and the root that ``source_uri`` values are relative to."""

    pattern: str
    root: str  # always ends with "/"


def _is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def _normalise(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path)) if _is_local(path) else path


def _resolved(path: str) -> str:
    """``path`` with every symlink of its existing part resolved, ending with ``/``.

    Used only to compare locations: ``os.path.realpath`` resolves the longest existing
    prefix and keeps the rest as written, so an output that does not exist yet still
    resolves through a symlinked parent. Remote URIs have no links and stay as given.
    """
    resolved = os.path.realpath(path) if _is_local(path) else path
    return resolved.rstrip("/") + "/"


def resolve_corpus(input_path: str, *, must_match: bool = True) -> CorpusLocation:
    """Turn ``--input`` (a directory, a glob or one file) into a pattern and a root.

    A directory means every file below it (``dir/**``); a glob is used as given, with the
    root at the last ``/`` before its first wildcard; a single file is its own corpus.
    """
    if not input_path.strip():
        raise RunSetupError("--input is empty; give a directory, a glob or a file path.")
    path = _normalise(input_path)
    first_glob = min((i for i in (path.find(c) for c in _GLOB_CHARS) if i >= 0), default=-1)
    if first_glob >= 0:
        location = CorpusLocation(path, path[: path.rfind("/", 0, first_glob) + 1])
    elif _is_local(path) and os.path.isfile(path):
        location = CorpusLocation(path, posixpath.dirname(path) + "/")
    elif not _is_local(path) and not path.endswith("/") and FileSystems.exists(path):
        location = CorpusLocation(path, path[: path.rfind("/") + 1])
    else:
        root = path.rstrip("/") + "/"
        location = CorpusLocation(root + "**", root)
    if must_match and not FileSystems.match([location.pattern], limits=[1])[0].metadata_list:
        raise RunSetupError(
            f"--input {input_path!r} matches no files; check the path, or quote a glob "
            "so the shell does not expand it."
        )
    return location


def relative_uri(root: str, path: str) -> str:
    """``path`` relative to the corpus root, as a POSIX path (the ``source_uri``)."""
    return path[len(root) :] if path.startswith(root) else path


def output_layout_entries(output: str) -> list[str]:
    """Top-level names under ``output`` (empty when it does not exist)."""
    if _is_local(output):
        return sorted(os.listdir(output)) if os.path.isdir(output) else []
    root = output.rstrip("/") + "/"
    found = FileSystems.match([root + "**"])[0].metadata_list
    return sorted({m.path[len(root) :].split("/", 1)[0] for m in found})


def check_output_location(output: str, *, corpus: CorpusLocation) -> str:
    """Refuse an ``--output`` that cannot be used, before anything is created or deleted.

    The output must not overlap the corpus in either direction: inside the corpus a rerun
    reads its own output; around the corpus ``--overwrite`` would delete the input. Both
    sides are compared with symlinks resolved, so a link cannot hide the overlap. Returns
    the normalised output path.
    """
    if not output.strip():
        raise RunSetupError("--output is empty; give a directory (local, gs:// or s3://).")
    path = _normalise(output).rstrip("/")
    out, root = _resolved(path), _resolved(corpus.root)
    if out.startswith(root):
        raise RunSetupError(
            f"--output {output!r} is inside the corpus {corpus.root!r}; a rerun would read "
            "its own output, so choose a directory outside the input."
        )
    if root.startswith(out):
        raise RunSetupError(
            f"--output {output!r} contains the corpus {corpus.root!r}; the run would write "
            "into its own input and --overwrite would delete it, so choose a directory "
            "outside the input."
        )
    if _is_local(path) and os.path.exists(path) and not os.path.isdir(path):
        raise RunSetupError(f"--output {output!r} is a file; give a directory path.")
    return path


def prepare_output(output: str, *, overwrite: bool, corpus: CorpusLocation) -> str:
    """Check ``--output`` and, with ``overwrite``, delete a previous run's output.

    A non-empty output needs ``overwrite``; even then only a directory that holds nothing
    but a kebab-chunk layout is deleted, so a mistyped path never wipes unrelated data.
    ``manifest.json`` goes first: it marks an output complete, so a run killed while
    deleting leaves an incomplete output, never an old manifest beside missing files.
    The claim's lock file (``LOCK_NAME``) is neither content nor deleted. Returns the
    normalised output path.
    """
    path = check_output_location(output, corpus=corpus)
    entries = [e for e in output_layout_entries(path) if e != LOCK_NAME]
    if not entries:
        return path
    if not overwrite:
        raise RunSetupError(
            f"--output {output!r} is not empty; pass --overwrite to replace the previous "
            "output or choose a new directory."
        )
    unexpected = [e for e in entries if e not in CONTENT and not e.startswith(TEMP_PREFIX)]
    # (a TEMP_PREFIX entry is a killed run's spill directory: kebab_chunk/beam/spill.py)
    if unexpected:
        raise RunSetupError(
            f"refusing to overwrite {output!r} because it holds {unexpected[0]!r}, which is "
            "not kebab-chunk output; choose an empty or new directory."
        )
    if _is_local(path):
        doomed = [f"{path}/{e}" for e in entries]
    else:
        found = FileSystems.match([path + "/**"])[0].metadata_list
        doomed = [m.path for m in found if m.path[len(path) + 1 :] != LOCK_NAME]
    manifest = f"{path}/{MANIFEST_NAME}"
    if manifest in doomed:
        FileSystems.delete([manifest])
    rest = [d for d in doomed if d != manifest]
    if rest:
        FileSystems.delete(rest)
    if _is_local(path):
        # Without a claim's lock file the directory itself goes too, as it always did.
        with contextlib.suppress(OSError):
            os.rmdir(path)
    return path
