# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ReadCorpus``: list the corpus, select files, spread them over workers, read each once.

While listing, a :class:`~kebab_chunk.corpus.CorpusFilter` decides which files are read
(``--include``, ``--exclude``, hidden entries and tool folders such as ``.git`` and
``node_modules`` skipped by default: docs/guide/corpus-selection.md). A file it skips is not
listed: never read, no error row, not in the manifest's accounting; the counter
``files_skipped_by_filter`` counts them. The listing never enters a skipped folder.

A local corpus is listed once, by :func:`list_local`, which yields each entry exactly
once with what it is; Beam's match is not used for it (it skips dangling links, links to
directories and unlistable directories without a word, and a second walk to find those
saw a link that changed between the two listings twice or not at all). The read step
turns each listed entry into exactly one outcome: its bytes, one ``read`` error row, or
(``skip_unsupported``) one skipped record. A local file is opened exactly once, without
blocking (``O_NONBLOCK``), and every decision is taken from the open descriptor: it must
be a regular file (a FIFO or device becomes ``not_a_regular_file``) whose real path lies
inside the corpus root (a link leaving it becomes ``symlink_outside_corpus``; a dangling
one ``broken_symlink``). The bytes read are those of the descriptor checked, so swapping
a link or a file between the listing and the read cannot smuggle an outside file in nor
count an entry twice, and a FIFO swapped in after the listing cannot block the read.
Entries the listing decides alone: a link to a directory outside the root
(``symlink_outside_corpus``) and a directory that cannot be listed
(``unreadable_directory``, one row per directory, its ``source_uri`` ending in ``/``).
The files of a directory that can be listed but not searched are listed, and their open
fails: one row each. Symbolic links that stay inside the root are followed. Object
stores have none of these things and are matched through FileSystems.

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
from kebab_chunk.elements import RawDocument, SourceFile
from kebab_chunk.errors import LimitExceededError, ReadRefused
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.parsers.registry import MediaTypeMap, is_supported

__all__ = [
    "BROKEN_SYMLINK",
    "DEFAULT_MAX_FILE_BYTES",
    "NOT_A_REGULAR_FILE",
    "SKIPPED",
    "SYMLINK_OUTSIDE_CORPUS",
    "UNREADABLE_DIRECTORY",
    "ListedEntry",
    "LocalFile",
    "ReadCorpus",
    "ReadRefused",
    "list_local",
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
#: Output of the files ``skip_unsupported`` leaves out (no parser reads their media type).
SKIPPED = "skipped"
_NO_MAP = MediaTypeMap()
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


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


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


def _open_plain_file(path: str) -> int | None:
    """A descriptor of ``path`` when it is a regular file and no link (``lstat``), opened
    at once; else None, and :func:`read_local` looks closer before opening anything.

    Opening a regular file has no effect, and whatever it turns out to be, the descriptor
    checks of :func:`read_local` judge it: a listed path has no linked folder in it (the
    listing enters none), and one swapped in since is caught by the descriptor's real path.
    A failed open also goes the long way, so its error row is the one the closer look gives.
    """
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return os.open(path, _OPEN_FLAGS)
    except OSError:
        return None


def _open_checked(path: str, real_root: str, uri: str) -> int:
    """Open ``path`` after a cheap look, so what is plainly dangling, outside or special
    is not even opened (opening some devices has effects); the descriptor is checked
    again by :func:`read_local`."""
    try:
        if not os.path.exists(path) and os.path.islink(path):
            raise ReadRefused(BROKEN_SYMLINK, _broken_message(uri))
        if not _inside(os.path.realpath(path), real_root):
            raise ReadRefused(SYMLINK_OUTSIDE_CORPUS, _outside_message(uri))
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ReadRefused(NOT_A_REGULAR_FILE, _not_regular_message(uri))
        return os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if os.path.islink(path) and not os.path.exists(path):
            raise ReadRefused(BROKEN_SYMLINK, _broken_message(uri)) from None
        raise ReadRefused(
            type(exc).__name__, f"cannot read {uri}: {exc.strerror or type(exc).__name__}."
        ) from None


def read_local(path: str, real_root: str, uri: str, max_bytes: int) -> LocalFile:
    """Read the local file ``path`` once, deciding from the open descriptor.

    Raises :class:`ReadRefused` for an entry that must not be read: not a regular file,
    real path outside ``real_root`` (the corpus root with links resolved), or an
    ``OSError`` (its ``strerror`` only, never the absolute path). A file over
    ``max_bytes`` is not read whole: ``raw`` is None. Never blocks: the open is
    non-blocking and nothing but a regular file is read.
    """
    fd = _open_plain_file(path)
    if fd is None:
        fd = _open_checked(path, real_root, uri)
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


@dataclass(frozen=True)
class ListedEntry:
    """One entry of a local corpus, as :func:`list_local` found it.

    ``path``: absolute (a directory's ends with ``/``). ``refused``: the ``read`` error
    type the listing itself decided (``symlink_outside_corpus`` for a link to a directory
    outside the root, ``unreadable_directory``), or None for an entry the read step opens
    and judges from the open descriptor.
    """

    path: str
    refused: str | None = None


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _is_directory(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a directory itself (a link to one is not)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:  # its type cannot be told: the read step opens it and reports why
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:  # its type cannot be told: the read step opens it and reports why
        return False


def _folder_test(pattern: str) -> Callable[[str], bool]:
    """Whether a file below a folder could match ``pattern``: the folder's names must
    match the pattern's leading names, up to its first ``**`` (after which anything
    could); without ``**`` the pattern also fixes how deep its files lie."""
    names = pattern.split("/")
    free = next((i for i, name in enumerate(names) if "**" in name), None)
    checked = len(names) - 1 if free is None else free
    prefixes = [
        re.compile(FileSystem.translate_pattern("/".join(names[:n]))) for n in range(1, checked + 1)
    ]

    def could_hold(folder: str) -> bool:
        n = folder.count("/") + 1
        if n > checked:
            return free is not None
        return bool(prefixes[n - 1].match(folder))

    return could_hold


def _points_to_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:  # dangling, or not searchable: the read step opens it and reports why
        return False


def list_local(
    part: CorpusLocation,
    corpus: CorpusLocation | None = None,
    corpus_filter: CorpusFilter | None = None,
    on_filtered: Callable[[], None] | None = None,
) -> Iterator[ListedEntry]:
    """Every entry of the local input ``part`` that the run accounts for, each exactly once.

    The one listing of a local corpus (Beam's own match is not used for it): one pass that
    tells each entry's kind as it lists it, so an entry that changes meanwhile (a link
    flipped between a file and a missing target) is still listed once, and the read step
    turns it into exactly one outcome. Directories are entered unless the corpus filter
    skips them (never a ``.git``); links to directories are not entered: one inside the
    root is no entry (its files are listed under their real paths), one leaving it is an
    entry refused as ``symlink_outside_corpus``; a directory that cannot be listed is one
    entry refused as ``unreadable_directory``. Everything else that ``part.pattern``
    matches and the filter keeps is an entry to open: files, links to files, dangling
    links, FIFOs, and the files of a directory that can be listed but not searched (their
    open fails, one error row each). ``corpus`` is the whole corpus when there are several
    inputs; ``on_filtered`` is called once per file the filter leaves out. Sorted by name
    within each directory, so the order is the same on every run.
    """
    whole = corpus or part
    chosen = corpus_filter if corpus_filter is not None else CorpusFilter()
    if not _has_glob(part.pattern):  # the input is one file
        if whole.selects(part.pattern, chosen):
            yield ListedEntry(part.pattern)
        elif on_filtered is not None:
            on_filtered()
        return
    pattern = re.compile(FileSystem.translate_pattern(part.pattern))
    real_root = os.path.realpath(part.root)
    top = part.root.rstrip("/") or "/"
    could_hold = _folder_test(part.pattern)

    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            if directory == top:
                _log.warning("cannot list the corpus folder %s: %s", directory, exc.strerror)
            else:
                yield ListedEntry(directory + "/", UNREADABLE_DIRECTORY)
            continue
        below: list[str] = []
        for entry in entries:
            path = entry.path
            if _is_directory(entry):
                if could_hold(path) and whole.selects(path, chosen, folder=True):
                    below.append(path)
                continue
            if not pattern.match(path):
                continue
            if _is_link(entry) and _points_to_directory(path):
                if whole.selects(path, chosen, folder=True) and not _inside(
                    os.path.realpath(path), real_root
                ):
                    yield ListedEntry(path, SYMLINK_OUTSIDE_CORPUS)
            elif whole.selects(path, chosen):
                yield ListedEntry(path)
            elif on_filtered is not None:
                on_filtered()
        stack.extend(reversed(below))


def selected_files(
    location: CorpusLocation, corpus_filter: CorpusFilter | None = None
) -> list[tuple[str, int]]:
    """``(path, size)`` of every file ``ReadCorpus`` would open, sorted (for counting a
    run's files before it starts): the local listing's entries to open (size 0 when it
    cannot be read), FileSystems' match of a remote corpus. Entries the listing refuses
    (links to outside folders, unreadable folders) are not in it."""
    chosen = corpus_filter if corpus_filter is not None else CorpusFilter()
    if _is_local(location.pattern):
        return sorted(
            (entry.path, _size(entry.path))
            for part in location.inputs
            for entry in list_local(part, location, chosen)
            if entry.refused is None
        )
    found = FileSystems.match([part.pattern for part in location.inputs])
    return sorted(
        (m.path, int(m.size_in_bytes))
        for result in found
        for m in result.metadata_list
        if not m.path.endswith("/") and location.selects(m.path, chosen)
    )


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


#: The first entries of an input's listing travel one per element, so a small corpus still
#: spreads over every worker; the rest travel in groups: each element a runner shuffles
#: costs it and the SDK worker far more than one entry's bytes (about 12 µs per element in
#: the in-memory DirectRunner's Reshuffle).
_SINGLE_ENTRIES = 256
_ENTRIES_PER_GROUP = 64


class _ListFn(beam.DoFn):
    """The local listing (:func:`list_local`) of each input, as lists of entries to read
    (one entry each for the first :data:`_SINGLE_ENTRIES`, then groups)."""

    def __init__(self, corpus: CorpusLocation, corpus_filter: CorpusFilter) -> None:
        self._corpus = corpus
        self._filter = corpus_filter

    def process(self, part: CorpusLocation) -> Iterator[list[ListedEntry]]:
        group: list[ListedEntry] = []
        listing = list_local(
            part, self._corpus, self._filter, lambda: metrics.inc(SKIPPED_BY_FILTER)
        )
        for n, entry in enumerate(listing):
            if n < _SINGLE_ENTRIES:
                yield [entry]
                continue
            group.append(entry)
            if len(group) == _ENTRIES_PER_GROUP:
                yield group
                group = []
        if group:
            yield group


def _entries(group: list[ListedEntry]) -> list[ListedEntry]:
    return group


class _ReadFn(beam.DoFn):
    """What both readers share: one SourceFile per entry, then exactly one of its bytes
    (main output), one ``read`` error row, or (``skip_unsupported``) one skipped record.

    ``guard_roots``: the inputs' own roots; a local file must lie inside the one it was
    listed under (the corpus root when none is given), so with several inputs a link
    cannot reach a sibling folder that is no input. ``media_types``: the user's extension
    map; ``skip_unsupported``: a file no parser reads goes to ``skipped``, not ``errors``.
    """

    def __init__(
        self,
        root: str,
        max_file_bytes: int,
        guard_roots: Sequence[str] = (),
        media_types: MediaTypeMap = _NO_MAP,
        skip_unsupported: bool = False,
    ) -> None:
        self._root = root
        self._max = max_file_bytes
        self._guard_roots = tuple(sorted(guard_roots, key=len, reverse=True))
        self._media = media_types
        self._skip = skip_unsupported
        self._real_roots: dict[str, str] = {}

    def _guard_root(self, path: str) -> str:
        return next((r for r in self._guard_roots if path.startswith(r)), self._root)

    def _real_root(self, path: str) -> str:
        """The real path of ``path``'s guard root, resolved once per root and worker: every
        file under it is judged against the root as the worker first found it."""
        root = self._guard_root(path)
        real = self._real_roots.get(root)
        if real is None:
            real = self._real_roots[root] = os.path.realpath(root)
        return real

    def _refused(self, uri: str, size: int, error_type: str, message: str) -> Iterator[object]:
        media_type = self._media.detect(uri)
        yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, size))
        yield pvalue.TaggedOutput(
            ERRORS, ErrorRecord(uri, "read", error_type, message, media_type=media_type)
        )

    def _read(
        self, uri: str, raw: bytes | None, head: bytes, size: int, *, listed: bool = True
    ) -> Iterator[object]:
        """``listed=False``: a second read of a file already counted (no SourceFile)."""
        media_type = self._media.detect(uri, head)
        source = SourceFile(uri, media_type, size)
        if listed:
            yield pvalue.TaggedOutput(FILES, source)
        if self._skip and not is_supported(media_type):
            yield pvalue.TaggedOutput(SKIPPED, source)
            return
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


class _ReadEntryFn(_ReadFn):
    """Reads one listed local entry (:class:`ListedEntry`), deciding from the open
    descriptor (:func:`read_local`); an entry the listing refused is not opened."""

    def process(self, entry: ListedEntry) -> Iterator[object]:
        metrics.record_worker()
        uri = portable_uri(relative_uri(self._root, entry.path))
        if entry.refused is not None:
            message = _LISTING_MESSAGES[entry.refused](uri)
            yield from self._refused(uri, 0, entry.refused, message)
            return
        try:
            local = read_local(entry.path, self._real_root(entry.path), uri, self._max)
        except ReadRefused as refused:
            yield from self._refused(uri, 0, refused.error_type, refused.message)
            return
        yield from self._read(uri, local.raw, local.head, local.size)


class _ReadFileFn(_ReadFn):
    """Reads one matched object-store file (a ``fileio.ReadableFile``)."""

    def process(self, readable: fileio.ReadableFile) -> Iterator[object]:
        metrics.record_worker()
        uri = portable_uri(relative_uri(self._root, readable.metadata.path))
        size = int(readable.metadata.size_in_bytes)
        try:
            raw, head = self._read_remote(readable, size)
        except ReadRefused as refused:
            yield from self._refused(uri, size, refused.error_type, refused.message)
            return
        yield from self._read(uri, raw, head, size)

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


class _ReadAgainFn(_ReadFn):
    """Reads again, by ``source_uri``, a file the first pass already listed, read and
    counted (``run --update`` keeps only a hash then, and parses the changed files from a
    second read): the same checks as the first read, and its bytes or one ``read`` error
    row, never another SourceFile. A file changed between the two reads is chunked as it
    is now, its ``content_hash`` with it."""

    def process(self, uri: str) -> Iterator[object]:
        metrics.record_worker()
        if _is_local(self._root):
            path = os.path.join(self._root, os.fsdecode(uri_path_bytes(uri)))
            try:
                local = read_local(path, self._real_root(path), uri, self._max)
            except ReadRefused as refused:
                yield pvalue.TaggedOutput(
                    ERRORS,
                    ErrorRecord(
                        uri,
                        "read",
                        refused.error_type,
                        refused.message,
                        media_type=self._media.detect(uri),
                    ),
                )
                return
            yield from self._read(uri, local.raw, local.head, local.size, listed=False)
            return
        try:
            with FileSystems.open(
                f"{self._root.rstrip('/')}/{uri}", compression_type=CompressionTypes.UNCOMPRESSED
            ) as handle:
                raw = handle.read(self._max + 1)
        except Exception as exc:  # any I/O failure is this file's error row
            first = (str(exc).strip().splitlines() or [""])[0]
            yield pvalue.TaggedOutput(
                ERRORS,
                ErrorRecord(
                    uri,
                    "read",
                    type(exc).__name__,
                    f"cannot read {uri}: {first}",
                    media_type=self._media.detect(uri),
                ),
            )
            return
        yield from self._read(uri, raw, raw[:_HEAD_BYTES], len(raw), listed=False)


class ReadAgain(beam.PTransform[PCollection[str], dict[str, PCollection[Any]]]):
    """Read the files named by ``source_uri`` again (see ``_ReadAgainFn``); the same
    arguments as the :class:`ReadCorpus` that listed them. Outputs: ``documents``
    (RawDocument), ``errors`` (ErrorRecord, stage ``read``) and ``skipped``."""

    def __init__(self, read: ReadCorpus) -> None:
        super().__init__()
        self._read = read

    def expand(self, uris: PCollection[str]) -> dict[str, PCollection[Any]]:
        r = self._read
        location = r.location
        reader = _ReadAgainFn(
            location.root,
            r.max_file_bytes,
            [p.root for p in location.parts],
            r.media_types,
            r.skip_unsupported,
        )
        read = uris | "Read changed files again" >> beam.ParDo(reader).with_outputs(
            ERRORS, SKIPPED, main="documents"
        )
        return {"documents": read.documents, ERRORS: read[ERRORS], SKIPPED: read[SKIPPED]}


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


#: The message of each error type the listing decides on its own.
_LISTING_MESSAGES: dict[str, Callable[[str], str]] = {
    SYMLINK_OUTSIDE_CORPUS: _outside_dir_message,
    UNREADABLE_DIRECTORY: _unreadable_dir_message,
}


class ReadCorpus(beam.PTransform[PBegin, dict[str, PCollection[Any]]]):
    """List the corpus (directories, globs or files) and read the selected files.

    ``input_path``: one ``--input`` value, several (a list: one corpus whose root is their
    common parent folder, see :func:`~kebab_chunk.beam.locations.resolve_corpora`), or a
    resolved :class:`CorpusLocation`. ``corpus_filter`` (default: ``CorpusFilter()``, which
    skips hidden entries and tool folders) picks the files read; ``max_file_bytes``
    (default ``DEFAULT_MAX_FILE_BYTES``) is the largest file read; ``media_types`` maps
    extensions to media types; with ``skip_unsupported`` a file no parser reads is
    ``skipped`` instead of an error row. Outputs (a dict): ``documents`` (RawDocument,
    main), ``files`` (one SourceFile per entry, for the accounting), ``errors``
    (ErrorRecord, stage ``read``) and ``skipped`` (SourceFile); every entry in ``files``
    is in exactly one of the other three or goes on as a document. A local corpus is
    listed by :func:`list_local` (one listing, each entry once); an object store through
    FileSystems' match. The Reshuffle after listing spreads files over workers; without it
    every file stays in the single bundle the listing produced, on one worker. Files over
    ``max_file_bytes`` are refused from their size without being read whole. Local
    corpora: see the module docstring for symbolic links and special files.
    """

    def __init__(
        self,
        input_path: str | Sequence[str] | CorpusLocation,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        corpus_filter: CorpusFilter | None = None,
        media_types: MediaTypeMap = _NO_MAP,
        skip_unsupported: bool = False,
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
        self._media = media_types
        self._skip = skip_unsupported

    @property
    def location(self) -> CorpusLocation:
        return self._location

    @property
    def corpus_filter(self) -> CorpusFilter:
        return self._filter

    @property
    def max_file_bytes(self) -> int:
        return self._max

    @property
    def media_types(self) -> MediaTypeMap:
        return self._media

    @property
    def skip_unsupported(self) -> bool:
        return self._skip

    def expand(self, pbegin: PBegin) -> dict[str, PCollection[Any]]:
        location = self._location
        guard_roots = [part.root for part in location.parts]
        reader = (location.root, self._max, guard_roots, self._media, self._skip)
        outputs = (FILES, ERRORS, SKIPPED)
        if _is_local(location.pattern):
            read = (
                pbegin
                | "Corpus inputs" >> beam.Create(list(location.inputs))
                | "List corpus" >> beam.ParDo(_ListFn(location, self._filter))
                | "Spread files over workers" >> beam.Reshuffle()
                | "Entries of a group" >> beam.FlatMap(_entries)
                | "Read files"
                >> beam.ParDo(_ReadEntryFn(*reader)).with_outputs(*outputs, main="documents")
            )
        else:
            if len(location.inputs) == 1:
                matched = pbegin | "Match files" >> fileio.MatchFiles(location.pattern)
            else:
                matched = (
                    pbegin
                    | "Input patterns" >> beam.Create([part.pattern for part in location.inputs])
                    | "Match files" >> fileio.MatchAll()
                )
            read = (
                matched
                | "Select files" >> beam.ParDo(_SelectFn(location, self._filter))
                | "Spread files over workers" >> beam.Reshuffle()
                | "Open matches"
                >> fileio.ReadMatches(
                    compression=CompressionTypes.UNCOMPRESSED, skip_directories=True
                )
                | "Read files"
                >> beam.ParDo(_ReadFileFn(*reader)).with_outputs(*outputs, main="documents")
            )
        return {"documents": read.documents, **{name: read[name] for name in outputs}}
