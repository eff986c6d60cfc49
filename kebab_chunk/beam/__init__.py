"""The Apache Beam side of kebab-chunk: composite transforms over the library.

Data flows one way::

    ReadCorpus ─ ParseAndChunk ─ WriteChunks (checks one record per label and chunk_id)
        └──────────────┴───────────────┴── errors ── WriteErrors
                                         everything ── WriteManifest

``ParseAndChunk`` parses and chunks each document in one helper process;
``ParseDocuments``, ``ChunkDocuments`` and ``ValidateChunks`` are the same steps one at a
time, for callers that want them separately.

Each transform wraps a private DoFn; the one Arrow schema of the output lives in
:mod:`kebab_chunk.beam.schema`. ``pipelines/chunk_corpus.py`` wires them into the job.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any


def _not_apitools_notice(record: logging.LogRecord) -> bool:
    # Beam logs this on import whenever the optional GCP client libraries are absent; it is
    # noise for local and non-GCP runs, and it would break the CLI's one-line error output.
    return "apitools not found" not in record.getMessage()


logging.getLogger().addFilter(_not_apitools_notice)

# Names resolve lazily (PEP 562): importing ``kebab_chunk.beam.schema`` (the output readers
# used by ``diff``/``inspect``) must not import Apache Beam, which costs seconds and logs.
_WHERE = {
    "ChunkDocuments": "chunk",
    "run_labels": "chunk",
    "WriteManifest": "manifest",
    "manifest_header": "manifest",
    "ParseDocuments": "parse",
    "ParseAndChunk": "parse_chunk",
    "ReadCorpus": "read",
    "DocumentOutcome": "records",
    "ErrorRecord": "records",
    "RawDocument": "records",
    "SourceFile": "records",
    "WrittenFile": "records",
    "ValidateChunks": "validate",
    "WriteChunks": "write",
    "WriteErrors": "write",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
