# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""Where the corpus is and where the output goes, checked on the launching machine.

Everything goes through Beam's ``FileSystems``, so ``gs://`` and ``s3://`` work the same
as local paths. Local paths are made absolute here, before the pipeline is built, so
workers started in another directory (a worker pool, a portable job service) see the same
files.

Several inputs (``--input`` given more than once, :func:`resolve_corpora`) are one
:class:`CorpusLocation` whose root is the inputs' longest common parent folder, so every
``source_uri`` stays unique and says which input it came from; one input keeps exactly
the root (and so the ``source_uri`` values and ``doc_id`` values) it always had. Inputs
must share one file system (and bucket) and must not overlap, so no file is read twice.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apache_beam.io.filesystems import FileSystems

from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.errors import RunSetupError, UsageError
from kebab_chunk.output.layout import CONTENT, LOCK_NAME, MANIFEST_NAME, TEMP_PREFIX

__all__ = [
    "LOCK_NAME",
    "CorpusLocation",
    "RunSetupError",
    "check_filesystems",
    "check_output_location",
    "locations_overlap",
    "output_layout_entries",
    "prepare_output",
    "relative_uri",
    "resolve_corpora",
    "resolve_corpus",
]

_GLOB_CHARS = "*?["


def _has_glob(path: str) -> bool:
    return any(c in path for c in _GLOB_CHARS)


@dataclass(frozen=True)
class CorpusLocation:
    """A match pattern and the root that ``source_uri`` values are relative to.

    For several inputs, ``parts`` holds each input as :func:`resolve_corpus` resolved it
    alone, ``root`` is their common parent folder and ``pattern`` is the first part's:
    iterate :attr:`inputs` to see every pattern.
    """

    pattern: str
    root: str  # always ends with "/"
    parts: tuple[CorpusLocation, ...] = ()  # several inputs; empty for one

    @property
    def inputs(self) -> tuple[CorpusLocation, ...]:
        """Every input, each with its own pattern and root (``(self,)`` for one input)."""
        return self.parts or (self,)

    def part_of(self, path: str) -> CorpusLocation | None:
        """The input a matched ``path`` belongs to (inputs never overlap), or None."""
        for part in self.inputs:
            if path == part.pattern or (_has_glob(part.pattern) and path.startswith(part.root)):
                return part
        return None

    def named(self, part: CorpusLocation) -> str:
        """What the user typed of ``part``, relative to the root: ``''`` for the root
        itself, ``'sub/'`` for a folder or the folder part of a glob, ``'sub/f.md'`` for a
        file. Names in it are never judged hidden (kebab_chunk/corpus.py)."""
        typed = part.root if _has_glob(part.pattern) else part.pattern
        return relative_uri(self.root, typed)

    def relative_patterns(self) -> list[str]:
        """Each input's pattern relative to the root (``'**'`` for a directory input):
        what the manifest records, the same wherever the corpus lies."""
        return [relative_uri(self.root, part.pattern) for part in self.inputs]

    def selects(self, path: str, corpus_filter: CorpusFilter, *, folder: bool = False) -> bool:
        """Whether ``corpus_filter`` keeps the matched file (or, with ``folder``, may keep
        something inside the folder) at ``path``, a full path under the root."""
        part = self.part_of(path) if not folder else self._part_around(path)
        named = self.named(part) if part is not None else ""
        relative = relative_uri(self.root, path)
        if folder:
            return corpus_filter.accepts_folder(relative, named=named)
        return corpus_filter.accepts(relative, named=named)

    def _part_around(self, folder: str) -> CorpusLocation | None:
        inside = folder.rstrip("/") + "/"
        return next((p for p in self.inputs if inside.startswith(p.root)), None)


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


def locations_overlap(a: str, b: str) -> bool:
    """Whether two directories are one, or one lies inside the other, compared as
    :func:`check_output_location` compares ``--input`` and ``--output``: local paths made
    absolute with every symlink resolved, URIs as written (on ``/`` boundaries).

    Used for every pair of locations where deleting one (``--overwrite``) would destroy
    the other, e.g. ``--output`` and ``--previous``: a link must not hide that they are one.
    """
    first, second = _resolved(_normalise(a)), _resolved(_normalise(b))
    return first.startswith(second) or second.startswith(first)


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
        if "," in input_path:
            raise RunSetupError(
                f"--input {input_path!r} matches no files; to give several inputs, repeat "
                "--input once for each directory, glob or file."
            )
        raise RunSetupError(
            f"--input {input_path!r} matches no files; check the path, or quote a glob "
            "so the shell does not expand it."
        )
    return location


def _place(path: str) -> str:
    """The file system a path lies in: ``''`` for local, ``scheme://bucket`` otherwise."""
    if _is_local(path):
        return ""
    scheme, _, rest = path.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _typed(part: CorpusLocation) -> str:
    """The literal part of an input (its folder ending with '/', or the file), with
    symlinks resolved for local paths, for the overlap check."""
    if _has_glob(part.pattern):
        return _resolved(part.root)
    return os.path.realpath(part.pattern) if _is_local(part.pattern) else part.pattern


def _overlap(a: str, b: str) -> bool:
    return a == b or (a.endswith("/") and b.startswith(a)) or (b.endswith("/") and a.startswith(b))


def resolve_corpora(inputs: Sequence[str], *, must_match: bool = True) -> CorpusLocation:
    """Several ``--input`` values as one corpus; one input is exactly :func:`resolve_corpus`.

    The root is the longest common parent folder of the inputs' roots, so ``source_uri``
    values stay unique and name the input they came from. Refused (RunSetupError, one
    sentence): inputs in different file systems or buckets (they share no root), and
    inputs that overlap, one inside another's folder, so that a file would be read twice.
    """
    given = list(inputs)
    if not given:
        raise RunSetupError("no --input was given; give a directory, a glob or a file path.")
    if len(given) == 1:
        return resolve_corpus(given[0], must_match=must_match)
    places = {_place(_normalise(i)) if i.strip() else "" for i in given}
    if len(places) > 1:
        shown = ", ".join(sorted(p or "local files" for p in places))
        raise RunSetupError(
            f"--input values lie in different file systems or buckets ({shown}); several "
            "inputs must share one, so run one job per place."
        )
    parts = [resolve_corpus(i, must_match=must_match) for i in given]
    typed = [_typed(p) for p in parts]
    for i, j in itertools.combinations(range(len(parts)), 2):
        if _overlap(typed[i], typed[j]):
            raise RunSetupError(
                f"--input {given[i]!r} and --input {given[j]!r} overlap, so some files "
                "would be read twice; give the outer folder once and narrow it with "
                "--include or --exclude."
            )
    root = posixpath.commonprefix([p.root for p in parts])
    root = root[: root.rfind("/") + 1]
    return CorpusLocation(parts[0].pattern, root, tuple(parts))


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
    out = _resolved(path)
    for part in corpus.inputs:  # each input's own folder: the common root may hold more
        root = _resolved(part.root)
        if out.startswith(root):
            raise RunSetupError(
                f"--output {output!r} is inside the corpus {part.root!r}; a rerun would "
                "read its own output, so choose a directory outside the input."
            )
        if root.startswith(out):
            raise RunSetupError(
                f"--output {output!r} contains the corpus {part.root!r}; the run would "
                "write into its own input and --overwrite would delete it, so choose a "
                "directory outside the input."
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
    # What marks an output finished goes first: the snapshots, then the manifest.
    snapshots = f"{path}/_snapshots"
    first = [d for d in doomed if d == snapshots or d.startswith(snapshots + "/")]
    manifest = f"{path}/{MANIFEST_NAME}"
    if manifest in doomed:
        first.append(manifest)
    for marker in first:
        FileSystems.delete([marker])
    rest = [d for d in doomed if d not in first]
    if rest:
        FileSystems.delete(rest)
    if _is_local(path):
        # Without a claim's lock file the directory itself goes too, as it always did.
        with contextlib.suppress(OSError):
            os.rmdir(path)
    return path


#: URI scheme -> (what it is, the requirement that installs Apache Beam's file system for it).
_FILESYSTEM_EXTRAS = {
    "gs": ("Google Cloud Storage", "kebab-chunk[gcs]"),
    "s3": ("Amazon S3", "kebab-chunk[s3]"),
    "azfs": ("Azure Blob Storage", "apache-beam[azure]"),
    "hdfs": ("HDFS", "apache-beam[hadoop]"),
}


def check_filesystems(paths: dict[str, Any]) -> None:
    """Refuse, in one sentence, a path whose scheme no installed Beam file system reads.

    ``paths`` maps an option (``--input``) to its value: a path, a list of paths (a
    repeatable option) or None. Without this check a ``gs://`` path fails deep inside Beam
    with "Unable to get filesystem"; this names the extra to install instead. Local paths
    and schemes with an installed file system pass.
    """
    from apache_beam.io import filesystem, filesystems  # the latter registers what is installed

    # Beam's own functions carry no annotations.
    base: Any = filesystem.FileSystem
    beam_filesystems: Any = filesystems.FileSystems
    installed = {fs.scheme() for fs in base.get_all_subclasses()}
    for option, value in paths.items():
        for path in [value] if isinstance(value, str) else list(value or ()):
            scheme = beam_filesystems.get_scheme(path)
            if scheme is None or scheme in installed:
                continue
            if scheme in _FILESYSTEM_EXTRAS:
                what, extra = _FILESYSTEM_EXTRAS[scheme]
                raise UsageError(
                    f"{option} {path!r} is on {what}, but Apache Beam's file system for "
                    f"{scheme}:// is not installed; install it with: pip install '{extra}'"
                )
            raise UsageError(
                f"{option} {path!r} uses {scheme}://, which no Apache Beam file system "
                "reads; use a local path, gs:// or s3://"
            )
