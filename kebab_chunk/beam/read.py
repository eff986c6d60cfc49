# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ReadCorpus``: match the corpus, spread the files over workers, read each one once.

Local corpora get three extra guards (object stores have none of these things): a file
whose real path lies outside the corpus root (a symbolic link leaving it) is not read and
becomes one ``read`` error row (``symlink_outside_corpus``); so does a matched entry that
is not a regular file (a FIFO would block the reader forever: ``not_a_regular_file``).
Entries that Beam's own listing skips without a word, symbolic links to directories
outside the root and dangling links (``broken_symlink``), are found by a separate walk and
recorded the same way, so the manifest's accounting still sees every entry. Symbolic links
that stay inside the root are followed. File names that are not valid UTF-8 get a
``source_uri`` with each undecodable byte written as ``\\xNN``, so every record stays
valid UTF-8 (Parquet and JSON require it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes, FileSystem
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import PBegin, PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.locations import CorpusLocation, relative_uri, resolve_corpus
from kebab_chunk.beam.records import ErrorRecord, RawDocument, SourceFile
from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.registry import detect_media_type

__all__ = [
    "BROKEN_SYMLINK",
    "DEFAULT_MAX_FILE_BYTES",
    "NOT_A_REGULAR_FILE",
    "SYMLINK_OUTSIDE_CORPUS",
    "ReadCorpus",
    "portable_uri",
]

#: Files above this size become error rows unread (override with --max-file-bytes).
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
_HEAD_BYTES = 8

FILES = "files"
ERRORS = "errors"

#: ``error_type`` of the ``read`` rows for entries that are recorded but never read.
SYMLINK_OUTSIDE_CORPUS = "symlink_outside_corpus"
BROKEN_SYMLINK = "broken_symlink"
NOT_A_REGULAR_FILE = "not_a_regular_file"


def portable_uri(uri: str) -> str:
    """``uri`` as valid UTF-8: bytes of a non-UTF-8 file name become ``\\xNN`` escapes.

    Local file names arrive decoded with ``surrogateescape`` (one lone surrogate per
    undecodable byte); those cannot be written to Parquet or JSON. Valid names are
    returned unchanged.
    """
    try:
        raw = uri.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that does not stand for a byte
        raw = uri.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


def _is_local(path: str) -> bool:
    return FileSystems.get_scheme(path) is None


def _inside(real_path: str, real_root: str) -> bool:
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def _local_refusal(root: str, path: str, uri: str) -> tuple[str, str] | None:
    """Why a listed local entry must not be read (``(error_type, message)``), or None."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if not _inside(real, real_root):
        return (
            SYMLINK_OUTSIDE_CORPUS,
            f"{uri} is a symbolic link to {portable_uri(real)}, outside the corpus root "
            f"{portable_uri(real_root)}; it was not followed (copy the file into the "
            "corpus to include it).",
        )
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return ("OSError", f"cannot read {uri}: {exc.strerror or exc}.")
    if not stat.S_ISREG(mode):
        return (
            NOT_A_REGULAR_FILE,
            f"{uri} is not a regular file (a FIFO, socket or device); it was not read, "
            "remove it from the corpus.",
        )
    return None


class _ReadFileFn(beam.DoFn):
    """Emits one SourceFile per match, then either its bytes or one error row."""

    def __init__(self, root: str, max_file_bytes: int) -> None:
        self._root = root
        self._max = max_file_bytes

    def process(self, readable: fileio.ReadableFile) -> Iterator[object]:
        metrics.record_worker()
        path = readable.metadata.path
        uri = portable_uri(relative_uri(self._root, path))
        size = int(readable.metadata.size_in_bytes)
        refusal = _local_refusal(self._root, path, uri) if _is_local(path) else None
        if refusal is not None:
            media_type = detect_media_type(uri)
            yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, size))
            yield pvalue.TaggedOutput(
                ERRORS, ErrorRecord(uri, "read", refusal[0], refusal[1], media_type=media_type)
            )
            return
        try:
            with readable.open(compression_type=CompressionTypes.UNCOMPRESSED) as handle:
                if size > self._max:
                    head = handle.read(_HEAD_BYTES)
                    raw = None
                else:
                    # Read at most one byte over the limit: a file that grew since the
                    # match is still refused without reading it whole.
                    raw = handle.read(self._max + 1)
                    head = raw[:_HEAD_BYTES]
        except Exception as exc:  # any I/O failure is this file's error row
            media_type = detect_media_type(uri)
            yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, size))
            yield pvalue.TaggedOutput(
                ERRORS,
                ErrorRecord(
                    uri,
                    "read",
                    type(exc).__name__,
                    f"cannot read {uri}: {exc}",
                    media_type=media_type,
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


class _UnlistedLinksFn(beam.DoFn):
    """Records the symbolic links of a local corpus that Beam's listing leaves out.

    Beam lists a local corpus with ``os.walk`` and ``os.path.getsize``: a link to a
    directory is neither listed nor entered, and a dangling link is dropped when its size
    cannot be read. Links to directories inside the root need nothing (their files are
    matched under their real paths); every other such link becomes one SourceFile and one
    ``read`` error row.
    """

    def process(self, location: CorpusLocation) -> Iterator[object]:
        pattern = re.compile(FileSystem.translate_pattern(location.pattern))
        real_root = os.path.realpath(location.root)
        for dirpath, dirnames, filenames in os.walk(location.root):
            dirnames.sort()
            for name in sorted([*dirnames, *filenames]):
                path = os.path.join(dirpath, name)
                if not os.path.islink(path) or not pattern.match(path):
                    continue
                uri = portable_uri(relative_uri(location.root, path))
                if not os.path.exists(path):
                    error_type = BROKEN_SYMLINK
                    message = (
                        f"{uri} is a symbolic link to {portable_uri(os.readlink(path))}, "
                        "which does not exist; fix or remove the link."
                    )
                elif name in dirnames and not _inside(os.path.realpath(path), real_root):
                    error_type = SYMLINK_OUTSIDE_CORPUS
                    message = (
                        f"{uri} is a symbolic link to the directory "
                        f"{portable_uri(os.path.realpath(path))}, outside the corpus root; "
                        "it was not followed (copy the files into the corpus to include them)."
                    )
                else:
                    continue  # links to files are listed by Beam; _ReadFileFn decides
                media_type = detect_media_type(uri)
                yield pvalue.TaggedOutput(FILES, SourceFile(uri, media_type, 0))
                yield pvalue.TaggedOutput(
                    ERRORS, ErrorRecord(uri, "read", error_type, message, media_type=media_type)
                )


class ReadCorpus(beam.PTransform[PBegin, dict[str, PCollection[Any]]]):
    """Match ``input`` (directory, glob or file) and read every file, through FileSystems.

    Outputs (a dict): ``documents`` (RawDocument, main), ``files`` (one SourceFile
    per matched file, for the accounting) and ``errors`` (ErrorRecord, stage ``read``).
    The Reshuffle after matching spreads files over workers; without it every file stays in
    the single bundle MatchFiles produced, on one worker. Files over ``max_file_bytes`` are
    refused from their match metadata without being read whole. Every matched file counts,
    hidden ones included (nothing is skipped silently); narrow the input with a glob.
    Local corpora: see the module docstring for symbolic links and special files.
    """

    def __init__(self, input_path: str | CorpusLocation, *, max_file_bytes: int) -> None:
        super().__init__()
        if max_file_bytes <= 0:
            raise ValueError(f"max_file_bytes must be > 0, got {max_file_bytes}")
        self._location = (
            input_path if isinstance(input_path, CorpusLocation) else resolve_corpus(input_path)
        )
        self._max = max_file_bytes

    @property
    def location(self) -> CorpusLocation:
        return self._location

    def expand(self, pbegin: PBegin) -> dict[str, PCollection[Any]]:
        read = (
            pbegin
            | "Match files" >> fileio.MatchFiles(self._location.pattern)
            | "Spread files over workers" >> beam.Reshuffle()
            | "Open matches"
            >> fileio.ReadMatches(compression=CompressionTypes.UNCOMPRESSED, skip_directories=True)
            | "Read files"
            >> beam.ParDo(_ReadFileFn(self._location.root, self._max)).with_outputs(
                FILES, ERRORS, main="documents"
            )
        )
        if not _is_local(self._location.pattern):
            return {"documents": read.documents, FILES: read[FILES], ERRORS: read[ERRORS]}
        links = (
            pbegin
            | "Corpus location" >> beam.Create([self._location])
            | "Find links the match skips"
            >> beam.ParDo(_UnlistedLinksFn()).with_outputs(FILES, ERRORS)
        )
        files = (read[FILES], links[FILES]) | "All matched entries" >> beam.Flatten()
        errors = (read[ERRORS], links[ERRORS]) | "All read errors" >> beam.Flatten()
        return {"documents": read.documents, FILES: files, ERRORS: errors}
