"""The Apache Beam side of kebab-chunk: composite transforms that wire the library.

Data flows one way::

    ReadCorpus ─ ParseAndChunk ─ WriteChunks (checks one record per label and chunk_id)
        └──────────────┴───────────────┴── errors ── WriteErrors
                                         everything ── WriteManifest

``ParseAndChunk`` parses and chunks each document in one helper process
(:mod:`kebab_chunk.runtime`); ``ParseDocuments``, ``ChunkDocuments`` and
``ValidateChunks`` are the same steps one at a time, for callers that want them
separately. The records and the Arrow schema of the output live in
:mod:`kebab_chunk.output`, which never imports Beam; ``kebab_chunk.beam.graph`` builds the
whole job (docs/internals/architecture.md).
"""

from __future__ import annotations

from kebab_chunk.errors import MissingDependencyError

try:  # Apache Beam is the pipeline extra: its absence is one sentence, not a traceback
    import apache_beam  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name != "apache_beam":
        raise
    raise MissingDependencyError.for_extra("kebab_chunk.beam", "Apache Beam", "pipeline") from None

from kebab_chunk.beam.chunk import ChunkDocuments, run_labels
from kebab_chunk.beam.manifest import WriteManifest, manifest_header
from kebab_chunk.beam.parse import ParseDocuments
from kebab_chunk.beam.parse_chunk import ParseAndChunk
from kebab_chunk.beam.read import ReadCorpus
from kebab_chunk.beam.validate import ValidateChunks
from kebab_chunk.beam.write import WriteChunks, WriteErrors
from kebab_chunk.elements import DocumentOutcome, RawDocument, SourceFile, WrittenFile
from kebab_chunk.output.records import ErrorRecord

__all__ = [
    "ChunkDocuments",
    "DocumentOutcome",
    "ErrorRecord",
    "ParseAndChunk",
    "ParseDocuments",
    "RawDocument",
    "ReadCorpus",
    "SourceFile",
    "ValidateChunks",
    "WriteChunks",
    "WriteErrors",
    "WriteManifest",
    "WrittenFile",
    "manifest_header",
    "run_labels",
]
