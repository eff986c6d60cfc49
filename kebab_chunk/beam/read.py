# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ReadCorpus``: match the corpus, select files, spread them over workers, read each once.

Right after matching, a :class:`~kebab_chunk.corpus.CorpusFilter` decides which files are
read (``--include``, ``--exclude``, hidden entries and tool folders such as ``.git`` and
``node_modules`` skipped by default: docs/corpus-selection.md). A file it skips is not
matched: never read, no error row, not in the manifest's accounting; the counter
``files_skipped_by_filter`` counts them. The walk below never enters a skipped folder.

Local corpora get extra guards (object stores have none of these things). A local file
is opened exactly once, without blocking (``O_NONBLOCK``), and every decision is taken
from the open descriptor: it must be a regular file (a FIFO or device becomes a ``read``
error row, ``not_a_regular_file``) whose real path lies inside the corpus root (a symbolic
link leaving it becomes ``symlink_outside_corpus``). The bytes read are those of the
descriptor checked, so swapping a link or a file between the check and the read cannot
smuggle an outside file in, and a FIFO swapped in after the listing cannot block the read.
Entries that Beam's own listing skips without a word are found by a separate walk and
recorded the same way: symbolic links to directories outside the root, dangling links
(``broken_symlink``) and directories that cannot be listed (``unreadable_directory``, one
row per directory, its ``source_uri`` ending in ``/``), so the manifest's accounting sees
every entry. Symbolic links that stay inside the root are followed.

Messages in error rows name only corpus-relative paths: never a link's target, an
absolute path or a process id (a link to ``/proc/self/environ`` resolves to one), so
identical reruns write identical error rows. The full detail goes to the log.

``source_uri`` is an injective encoding of the file's relative path
(:func:`portable_uri`, inverted by :func:`uri_path_bytes`): valid UTF-8 names are kept as
they are, bytes that are not UTF-8 become ``%XX``, and a ``%`` that would read as such an
escape becomes ``%25``; two different files never share a ``source_uri``.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes, FileSystem
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import PBegin, PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.locations import CorpusLocation, relative_uri, resolve_corpora
from kebab_chunk.corpus import CorpusFilter
from kebab_chunk.errors import LimitExceededError, ReadRefused
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.records import ErrorRecord, RawDocument, SourceFile
from kebab_chunk.parsers.registry import detect_media_type

__all__ = [
    "BROKEN_SYMLINK",
    "DEFAULT_MAX_FILE_BYTES",
    "NOT_A_REGULAR_FILE",
    "SYMLINK_OUTSIDE_CORPUS",
    "UNREADABLE_DIRECTORY",
    "LocalFile",
    "ReadCorpus",
    "ReadRefused",
    "portable_uri",
    "read_local",
    "selected_files",
    "uri_path_bytes",
]

_log = logging.getLogger(__name__)

#: Files above this size become error rows unread (override with --max-file-bytes).
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
_HEAD_BYTES = 8

FILES = "files"
ERRORS = "errors"
#: Counter of matched files that the corpus filter left out (never read, not accounted).
SKIPPED_BY_FILTER = "files_skipped_by_filter"

#: ``error_type`` of the ``read`` rows for entries that are recorded but never read.
SYMLINK_OUTSIDE_CORPUS = "symlink_outside_corpus"
BROKEN_SYMLINK = "broken_symlink"
NOT_A_REGULAR_FILE = "not_a_regular_file"
UNREADABLE_DIRECTORY = "unreadable_directory"


_HEX = frozenset("0123456789abcdefABCDEF")


def _looks_escaped(text: str, i: int) -> bool:
    """True when ``text[i]`` is ``%`` followed by two hex digits (reads as ``%XX``)."""
    return text[i] == "%" and len(text) >= i + 3 and text[i + 1] in _HEX and text[i + 2] in _HEX


def portable_uri(uri: str) -> str:
    """``uri`` as valid UTF-8, injectively: distinct names give distinct results.

    Local file names arrive decoded with ``surrogateescape`` (one lone surrogate per
    byte that is not UTF-8); those cannot be written to Parquet or JSON, so each becomes
    ``%XX``. For the encoding to stay injective, a ``%`` already followed by two hex digits
    becomes ``%25``. Every other character is kept, so names without such a ``%`` and with
    valid UTF-8 come out unchanged. :func:`uri_path_bytes` inverts it.
    """
    if not any(0xDC80 <= ord(c) <= 0xDCFF for c in uri) and "%" not in uri:
        return uri  # the common case: nothing to escape
    out = []
    for i, c in enumerate(uri):
        if 0xDC80 <= ord(c) <= 0xDCFF:  # surrogateescape'd byte
            out.append(f"%{ord(c) - 0xDC00:02X}")
        elif c == "%" and _looks_escaped(uri, i):
            out.append("%25")
        else:
            out.append(c)
    return "".join(out)


def uri_path_bytes(uri: str) -> bytes:
    """The relative path's bytes that :func:`portable_uri` turned into ``uri``."""
    out = bytearray()
    i = 0
    while i < len(uri):
        if _looks_escaped(uri, i):
            out.append(int(uri[i + 1 : i + 3], 16))
            i += 3
        else:
            out += uri[i].encode("utf-8", "surrogatepass")
            i += 1
    return bytes(out)


def _is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def _inside(real_path: str, real_root: str) -> bool:
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class LocalFile:
    """What :func:`read_local` read: the bytes (None when over the limit), head and size."""

    raw: bytes | None
    head: bytes
    size: int


_OPEN_FLAGS = (
    os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
)


def _outside_message(uri: str) -> str:
    return (
        f"{uri} is a symbolic link to a target outside the corpus root; it was not "
        "followed (copy the file into the corpus to include it)."
    )


def _not_regular_message(uri: str) -> str:
    return (
        f"{uri} is not a regular file (a FIFO, socket or device); it was not read, "
        "remove it from the corpus."
    )


def _descriptor_path(fd: int, path: str) -> str | None:
    """The real path of the file open as ``fd``, or None if it cannot be told."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")  # Linux: the kernel's own answer
    except OSError:
        real = os.path.realpath(path)  # elsewhere: trust it only if it is the same file
        try:
            named, held = os.stat(real), os.fstat(fd)
        except OSError:
            return None
        return real if (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino) else None


def _read_upto(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def read_local(path: str, real_root: str, uri: str, max_bytes: int) -> LocalFile:
    """Read the local file ``path`` once, deciding from the open descriptor.

    Raises :class:`ReadRefused` for an entry that must not be read: not a regular file,
    real path outside ``real_root`` (the corpus root with links resolved), or an
    ``OSError`` (its ``strerror`` only, never the absolute path). A file over
    ``max_bytes`` is not read whole: ``raw`` is None. Never blocks: the open is
    non-blocking and nothing but a regular file is read.
    """
    try:
        # A cheap look first, so what is plainly outside or special is not even opened
        # (opening some devices has effects); the descriptor is checked again below.
        if not _inside(os.path.realpath(path), real_root):
            raise ReadRefused(SYMLINK_OUTSIDE_CORPUS, _outside_message(uri))
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ReadRefused(NOT_A_REGULAR_FILE, _not_regular_message(uri))
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if os.path.islink(path) and not os.path.exists(path):
            raise ReadRefused(BROKEN_SYMLINK, _broken_message(uri)) from None
        raise ReadRefused(
            type(exc).__name__, f"cannot read {uri}: {exc.strerror or type(exc).__name__}."
        ) from None
    try:
        held = os.fstat(fd)
        if not stat.S_ISREG(held.st_mode):
            raise ReadRefused(NOT_A_REGULAR_FILE, _not_regular_message(uri))
        real = _descriptor_path(fd, path)
        if real is None or not _inside(real, real_root):
            _log.info("not following %s: its target %r is outside %r", uri, real, real_root)
            raise ReadRefused(SYMLINK_OUTSIDE_CORPUS, _outside_message(uri))
        if held.st_size > max_bytes:
            return LocalFile(None, os.pread(fd, _HEAD_BYTES, 0), held.st_size)
        # At most one byte over the limit: a file that grew since is still refused.
        raw = _read_upto(fd, max_bytes + 1)
        return LocalFile(raw, raw[:_HEAD_BYTES], held.st_size)
    except OSError as exc:
        raise ReadRefused(
            type(exc).__name__, f"cannot read {uri}: {exc.strerror or type(exc).__name__}."
        ) from None
    finally:
        os.close(fd)


def _broken_message(uri: str) -> str:
    return f"{uri} is a symbolic link whose target does not exist; fix or remove the link."


class _SelectFn(beam.DoFn):
    """Keeps the matched files that the corpus filter selects (before anything is read)."""

    def __init__(self, location: CorpusLocation, corpus_filter: CorpusFilter) -> None:
        self._location = location
        self._filter = corpus_filter

    def process(self, match: Any) -> Iterator[Any]:
        if self._location.selects(match.path, self._filter):
            yield match
        else:
            metrics.inc(SKIPPED_BY_FILTER)


def selected_files(
    location: CorpusLocation, corpus_filter: CorpusFilter | None = None
) -> list[tuple[str, int]]:
    """``(path, size)`` of every matched file ``ReadCorpus`` would read, sorted, listed on
    this machine through FileSystems (for counting a run's files before it starts).
    Entries only the local walk records (dangling links, unreadable folders) are not in it."""
    chosen = corpus_filter if corpus_filter is not None else CorpusFilter()
    found = FileSystems.match([part.pattern for part in location.inputs])
    return sorted(
        (m.path, int(m.size_in_bytes))
        for result in found
        for m in result.metadata_list
        if not m.path.endswith("/") and location.selects(m.path, chosen)
    )


class _ReadFileFn(beam.DoFn):
    """Emits one SourceFile per match, then either its bytes or one error row.

    ``guard_roots``: the inputs' own roots; a local file must lie inside the one it was
    matched under (the corpus root when none is given), so with several inputs a link
    cannot reach a sibling folder that is no input."""

    def __init__(self, root: str, max_file_bytes: int, guard_roots: Sequence[str] = ()) -> None:
        self._root = root
        self._max = max_file_bytes
        self._guard_roots = tuple(sorted(guard_roots, key=len, reverse=True))

    def _guard_root(self, path: str) -> str:
        return next((r for r in self._guard_roots if path.startswith(r)), self._root)

    def process(self, readable: fileio.ReadableFile) -> Iterator[object]:
        metrics.record_worker()
        path = readable.metadata.path
        uri = portable_uri(relative_uri(self._root, path))
        size = int(readable.metadata.size_in_bytes)
        try:
            if _is_local(path):
                real_root = os.path.realpath(self._guard_root(path))
                local = read_local(path, real_root, uri, self._max)
                raw, head, size = local.raw, local.head, max(size, local.size)
            else:
                raw, head = self._read_remote(readable, size)
        except ReadRefused as refused:
            media_type = detect_media_type(uri)
            yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, size))
            yield pvalue.TaggedOutput(
                ERRORS,
                ErrorRecord(
                    uri, "read", refused.error_type, refused.message, media_type=media_type
                ),
            )
            return
        media_type = detect_media_type(uri, head)
        yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, size))
        if raw is None or len(raw) > self._max:
            yield pvalue.TaggedOutput(
                ERRORS,
                ErrorRecord(
                    uri,
                    "read",
                    LimitExceededError.error_type,
                    f"{uri} is {max(size, len(raw or b''))} bytes, above --max-file-bytes="
                    f"{self._max}; raise the limit or remove the file from the corpus.",
                    media_type=media_type,
                ),
            )
            return
        yield RawDocument(uri, media_type, content_hash(raw), raw)

    def _read_remote(self, readable: fileio.ReadableFile, size: int) -> tuple[bytes | None, bytes]:
        """``(raw or None when over the limit, head)`` of an object-store file."""
        uri = portable_uri(relative_uri(self._root, readable.metadata.path))
        try:
            with readable.open(compression_type=CompressionTypes.UNCOMPRESSED) as handle:
                if size > self._max:
                    return None, handle.read(_HEAD_BYTES)
                raw = handle.read(self._max + 1)
                return raw, raw[:_HEAD_BYTES]
        except Exception as exc:  # any I/O failure is this file's error row
            first = (str(exc).strip().splitlines() or [""])[0]
            raise ReadRefused(type(exc).__name__, f"cannot read {uri}: {first}") from None


class _UnlistedEntriesFn(beam.DoFn):
    """Records the entries of a local corpus that Beam's listing leaves out.

    Beam lists a local corpus with ``os.walk`` and ``os.path.getsize``: a link to a
    directory is neither listed nor entered, a dangling link is dropped when its size
    cannot be read, and a directory that cannot be listed is skipped with all its files.
    Links to directories inside the root need nothing (their files are matched under their
    real paths); every other such link, and every directory that cannot be listed, becomes
    one SourceFile and one ``read`` error row. Entries the corpus filter skips are not
    recorded, and skipped folders are not entered (a ``.git`` or ``node_modules`` is never
    walked). Each element is one input; ``corpus`` is the whole corpus when there are
    several (its root is what ``source_uri`` values are relative to).
    """

    def __init__(
        self, corpus_filter: CorpusFilter | None = None, corpus: CorpusLocation | None = None
    ) -> None:
        self._filter = corpus_filter if corpus_filter is not None else CorpusFilter()
        self._corpus = corpus

    def process(self, location: CorpusLocation) -> Iterator[object]:
        corpus = self._corpus or location
        pattern = re.compile(FileSystem.translate_pattern(location.pattern))
        real_root = os.path.realpath(location.root)
        unlistable: list[str] = []

        def refuse(path: str, error_type: str, message: Callable[[str], str]) -> Iterator[object]:
            uri = portable_uri(relative_uri(corpus.root, path))
            media_type = detect_media_type(uri)
            yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, 0))
            yield pvalue.TaggedOutput(
                ERRORS, ErrorRecord(uri, "read", error_type, message(uri), media_type=media_type)
            )

        def on_error(exc: OSError) -> None:
            if exc.filename is not None:
                unlistable.append(os.fsdecode(exc.filename))

        for dirpath, dirnames, filenames in os.walk(location.root, onerror=on_error):
            # In place, so os.walk never enters a folder the filter skips.
            dirnames[:] = sorted(
                d
                for d in dirnames
                if corpus.selects(os.path.join(dirpath, d), self._filter, folder=True)
            )
            for name in sorted([*dirnames, *filenames]):
                path = os.path.join(dirpath, name)
                if not os.path.islink(path) or not pattern.match(path):
                    continue
                if name not in dirnames and not corpus.selects(path, self._filter):
                    continue
                if not os.path.exists(path):
                    yield from refuse(path, BROKEN_SYMLINK, _broken_message)
                elif name in dirnames and not _inside(os.path.realpath(path), real_root):
                    yield from refuse(path, SYMLINK_OUTSIDE_CORPUS, _outside_dir_message)
                # links to files are listed by Beam; _ReadFileFn decides
        for path in sorted(unlistable):
            directory = path.rstrip("/") + "/"
            if directory != location.root and self._could_match(pattern, location, directory):
                yield from refuse(directory, UNREADABLE_DIRECTORY, _unreadable_dir_message)

    @staticmethod
    def _could_match(pattern: re.Pattern[str], location: CorpusLocation, directory: str) -> bool:
        """Whether files under ``directory`` could be matched (``**`` or a direct glob)."""
        return "**" in location.pattern or bool(pattern.match(directory + "x"))


def _outside_dir_message(uri: str) -> str:
    return (
        f"{uri} is a symbolic link to a directory outside the corpus root; it was not "
        "followed (copy the files into the corpus to include them)."
    )


def _unreadable_dir_message(uri: str) -> str:
    return (
        f"{uri} is a directory that cannot be listed (permission denied or an I/O error); "
        "none of its files were read, fix its permissions to include them."
    )


class ReadCorpus(beam.PTransform[PBegin, dict[str, PCollection[Any]]]):
    """Match the corpus (directories, globs or files) and read the selected files, through
    FileSystems.

    ``input_path``: one ``--input`` value, several (a list: one corpus whose root is their
    common parent folder, see :func:`~kebab_chunk.beam.locations.resolve_corpora`), or a
    resolved :class:`CorpusLocation`. ``corpus_filter`` (default: ``CorpusFilter()``, which
    skips hidden entries and tool folders) picks the files read; ``max_file_bytes``
    (default ``DEFAULT_MAX_FILE_BYTES``) is the largest file read. Outputs (a dict):
    ``documents`` (RawDocument, main), ``files`` (one SourceFile per selected file, for the
    accounting) and ``errors`` (ErrorRecord, stage ``read``). The Reshuffle after matching
    spreads files over workers; without it every file stays in the single bundle the match
    produced, on one worker. Files over ``max_file_bytes`` are refused from their match
    metadata without being read whole. Local corpora: see the module docstring for symbolic
    links and special files.
    """

    def __init__(
        self,
        input_path: str | Sequence[str] | CorpusLocation,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        corpus_filter: CorpusFilter | None = None,
    ) -> None:
        super().__init__()
        if max_file_bytes <= 0:
            raise ValueError(f"max_file_bytes must be > 0, got {max_file_bytes}")
        if isinstance(input_path, CorpusLocation):
            self._location = input_path
        elif isinstance(input_path, str):
            self._location = resolve_corpora([input_path])
        else:
            self._location = resolve_corpora(list(input_path))
        self._max = max_file_bytes
        self._filter = corpus_filter if corpus_filter is not None else CorpusFilter()

    @property
    def location(self) -> CorpusLocation:
        return self._location

    @property
    def corpus_filter(self) -> CorpusFilter:
        return self._filter

    def expand(self, pbegin: PBegin) -> dict[str, PCollection[Any]]:
        location = self._location
        if len(location.inputs) == 1:
            matched = pbegin | "Match files" >> fileio.MatchFiles(location.pattern)
        else:
            matched = (
                pbegin
                | "Input patterns" >> beam.Create([part.pattern for part in location.inputs])
                | "Match files" >> fileio.MatchAll()
            )
        guard_roots = [part.root for part in location.parts]
        read = (
            matched
            | "Select files" >> beam.ParDo(_SelectFn(location, self._filter))
            | "Spread files over workers" >> beam.Reshuffle()
            | "Open matches"
            >> fileio.ReadMatches(compression=CompressionTypes.UNCOMPRESSED, skip_directories=True)
            | "Read files"
            >> beam.ParDo(_ReadFileFn(location.root, self._max, guard_roots)).with_outputs(
                FILES, ERRORS, main="documents"
            )
        )
        if not _is_local(location.pattern):
            return {"documents": read.documents, FILES: read[FILES], ERRORS: read[ERRORS]}
        links = (
            pbegin
            | "Corpus location" >> beam.Create(list(location.inputs))
            | "Find links the match skips"
            >> beam.ParDo(_UnlistedEntriesFn(self._filter, location)).with_outputs(FILES, ERRORS)
        )
        files = (read[FILES], links[FILES]) | "All matched entries" >> beam.Flatten()
        errors = (read[ERRORS], links[ERRORS]) | "All read errors" >> beam.Flatten()
        return {"documents": read.documents, FILES: files, ERRORS: errors}
