# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Where the corpus is and where the output goes, checked on the launching machine.

Everything goes through Beam's ``FileSystems``, so ``gs://`` and ``s3://`` work the same
as local paths. Local paths are made absolute here, before the pipeline is built, so
workers started in another directory (a worker pool, a portable job service) see the same
files.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.beam.spill import TEMP_PREFIX
from kebab_chunk.errors import KebabError

__all__ = [
    "CorpusLocation",
    "RunSetupError",
    "output_layout_entries",
    "prepare_output",
    "relative_uri",
    "resolve_corpus",
]

_GLOB_CHARS = "*?["
#: The only top-level entries a kebab-chunk output holds; --overwrite deletes nothing else.
_LAYOUT = frozenset({"chunks", "errors", "manifest.json"})


class RunSetupError(KebabError, ValueError):
    """An --input or --output value cannot be used; the message says how to fix it."""


@dataclass(frozen=True)
class CorpusLocation:
    """A match pattern and the root that ``source_uri`` values are relative to."""

    pattern: str
    root: str  # always ends with "/"


def _is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def _normalise(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path)) if _is_local(path) else path


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


def prepare_output(output: str, *, overwrite: bool, corpus: CorpusLocation) -> str:
    """Check ``--output`` and, with ``overwrite``, delete a previous run's output.

    A non-empty output needs ``overwrite``; even then only a directory that holds nothing
    but a kebab-chunk layout is deleted, so a mistyped path never wipes unrelated data.
    Returns the normalised output path.
    """
    if not output.strip():
        raise RunSetupError("--output is empty; give a directory (local, gs:// or s3://).")
    path = _normalise(output).rstrip("/")
    if (path + "/").startswith(corpus.root):
        raise RunSetupError(
            f"--output {output!r} is inside the corpus {corpus.root!r}; a rerun would read "
            "its own output, so choose a directory outside the input."
        )
    if _is_local(path) and os.path.exists(path) and not os.path.isdir(path):
        raise RunSetupError(f"--output {output!r} is a file; give a directory path.")
    entries = output_layout_entries(path)
    if not entries:
        return path
    if not overwrite:
        raise RunSetupError(
            f"--output {output!r} is not empty; pass --overwrite to replace the previous "
            "output or choose a new directory."
        )
    unexpected = [e for e in entries if e not in _LAYOUT and not e.startswith(TEMP_PREFIX)]
    # (a TEMP_PREFIX entry is a killed run's spill directory: kebab_chunk/beam/spill.py)
    if unexpected:
        raise RunSetupError(
            f"refusing to overwrite {output!r} because it holds {unexpected[0]!r}, which is "
            "not kebab-chunk output; choose an empty or new directory."
        )
    if _is_local(path):
        FileSystems.delete([path])
    else:
        found = FileSystems.match([path + "/**"])[0].metadata_list
        FileSystems.delete([m.path for m in found])
    return path
