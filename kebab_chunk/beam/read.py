# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ReadCorpus``: match the corpus, spread the files over workers, read each one once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.pvalue import PBegin, PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.locations import CorpusLocation, relative_uri, resolve_corpus
from kebab_chunk.beam.records import ErrorRecord, RawDocument, SourceFile
from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.registry import detect_media_type

__all__ = ["DEFAULT_MAX_FILE_BYTES", "ReadCorpus"]

#: Files above this size become error rows unread (override with --max-file-bytes).
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
_HEAD_BYTES = 8

FILES = "files"
ERRORS = "errors"


class _ReadFileFn(beam.DoFn):
    """Emits one SourceFile per match, then either its bytes or one error row."""

    def __init__(self, root: str, max_file_bytes: int) -> None:
        self._root = root
        self._max = max_file_bytes

    def process(self, readable: fileio.ReadableFile) -> Iterator[object]:
        metrics.record_worker()
        path = readable.metadata.path
        uri = relative_uri(self._root, path)
        size = int(readable.metadata.size_in_bytes)
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


class ReadCorpus(beam.PTransform[PBegin, dict[str, PCollection[Any]]]):
    """Match ``input`` (directory, glob or file) and read every file, through FileSystems.

    Outputs (a dict): ``documents`` (RawDocument, main), ``files`` (one SourceFile
    per matched file, for the accounting) and ``errors`` (ErrorRecord, stage ``read``).
    The Reshuffle after matching spreads files over workers; without it every file stays in
    the single bundle MatchFiles produced, on one worker. Files over ``max_file_bytes`` are
    refused from their match metadata without being read whole. Every matched file counts,
    hidden ones included (nothing is skipped silently); narrow the input with a glob.
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
        return {"documents": read.documents, FILES: read[FILES], ERRORS: read[ERRORS]}
