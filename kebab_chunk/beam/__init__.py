"""The Apache Beam side of kebab-chunk: composite transforms over the library.

Data flows one way::

    ReadCorpus ─ ParseDocuments ─ ChunkDocuments ─ ValidateChunks ─ WriteChunks
        └──────────────┴───────────────┴───────────────┴── errors ── WriteErrors
                                                        everything ── WriteManifest

Each transform wraps a private DoFn; the one Arrow schema of the output lives in
:mod:`kebab_chunk.beam.schema`. ``pipelines/chunk_corpus.py`` wires them into the job.
"""

from kebab_chunk.beam.chunk import ChunkDocuments, run_labels
from kebab_chunk.beam.manifest import WriteManifest, manifest_header
from kebab_chunk.beam.parse import ParseDocuments
from kebab_chunk.beam.read import ReadCorpus
from kebab_chunk.beam.records import (
    DocumentOutcome,
    ErrorRecord,
    RawDocument,
    SourceFile,
    WrittenFile,
)
from kebab_chunk.beam.validate import ValidateChunks
from kebab_chunk.beam.write import WriteChunks, WriteErrors

__all__ = [
    "ChunkDocuments",
    "DocumentOutcome",
    "ErrorRecord",
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
