# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``ParseAndChunk``: parse and chunk each document in one trip to one helper process.

The job's path from bytes to chunks. It does what ``ParseDocuments`` followed by
``ChunkDocuments`` does, with the same error rows, outcomes and counters, but the
CanonicalDocument never leaves the helper process: one message goes out per document
(its bytes) and one comes back (its chunks, error rows and outcome), instead of two round
trips with the parsed document pickled through Beam in between. The budgets stay per
stage: the helper reports when parsing is done, and from then on the chunk budget runs;
a hang or crash names the stage it happened in (``parse`` or ``chunk``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.pvalue import PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.chunk import DEFAULT_CHUNK_TIMEOUT_S, ChunkDocuments, emit_chunked
from kebab_chunk.beam.isolation import IsolatedDoFn
from kebab_chunk.beam.parse import ParseDocuments, stopped_error
from kebab_chunk.elements import DocumentOutcome, RawDocument
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.runtime.supervisor import Finished
from kebab_chunk.runtime.tasks import (
    DEFAULT_MAX_MEMORY_MB,
    DEFAULT_PARSE_TIMEOUT_S,
    Chunked,
    ParseChunkTask,
    Parsed,
    ParseFn,
)

__all__ = ["ParseAndChunk"]

PARSE_ERRORS = "parse_errors"
CHUNK_ERRORS = "chunk_errors"
OUTCOMES = "outcomes"
_Outputs = dict[str, PCollection[Any]]


class _ParseChunkFn(IsolatedDoFn):
    """Sorts what the helper returns into chunks, parse/chunk error rows and outcomes."""

    def __init__(
        self,
        task: ParseChunkTask,
        *,
        budgets_s: tuple[float, float],
        max_memory_mb: int | None,
        isolate: bool,
    ) -> None:
        super().__init__(task, budgets_s=budgets_s, max_memory_mb=max_memory_mb, isolate=isolate)

    def outputs(self, done: Finished) -> Iterator[Any]:
        raw: RawDocument = done.element
        failure = done.failure
        if failure is None and isinstance(done.result, ErrorRecord):
            yield pvalue.TaggedOutput(PARSE_ERRORS, done.result)
        elif failure is None:
            chunked: Chunked = done.result
            metrics.inc(metrics.keyed("documents_parsed", chunked.outcome.media_type))
            for out in emit_chunked(chunked):
                if isinstance(out, pvalue.TaggedOutput) and out.tag != OUTCOMES:
                    yield pvalue.TaggedOutput(CHUNK_ERRORS, out.value)
                else:
                    yield out
        elif failure.stage == 0:
            yield pvalue.TaggedOutput(
                PARSE_ERRORS,
                stopped_error(
                    "parse",
                    failure,
                    source_uri=raw.source_uri,
                    content_hash=raw.content_hash,
                    media_type=raw.media_type,
                    budget_s=self._budgets_s[0],
                    max_memory_mb=self._max_memory_mb,
                ),
            )
        else:
            parsed: Parsed = failure.note
            metrics.inc(metrics.keyed("documents_parsed", parsed.media_type))
            yield pvalue.TaggedOutput(
                CHUNK_ERRORS,
                stopped_error(
                    "chunk",
                    failure,
                    source_uri=raw.source_uri,
                    content_hash=parsed.content_hash,
                    media_type=parsed.media_type,
                    budget_s=self._budgets_s[1],
                    max_memory_mb=self._max_memory_mb,
                ),
            )
            yield pvalue.TaggedOutput(OUTCOMES, DocumentOutcome(raw.source_uri, parsed, ()))


class ParseAndChunk(beam.PTransform[PCollection[RawDocument], _Outputs]):
    """RawDocuments -> chunks, in one isolated helper trip per document.

    Takes the options of ``ParseDocuments`` (``parse_timeout_s``, ``limits``, ``parse_fn``)
    and ``ChunkDocuments`` (``labels``, ``policy``, ``chunk_timeout_s``), with one memory
    guard for the helper. Outputs (a dict): ``chunks``; ``parse_errors`` and
    ``chunk_errors`` (ErrorRecord, exactly the rows the two transforms give); ``outcomes``
    (one DocumentOutcome per parsed document). ``labels=None`` chunks each document under
    the default labels of its media type; ``policy=None`` is ``ChunkPolicy()``.
    ``encode=True``: ``chunks`` holds EncodedChunks (see ``ChunkDocuments``).
    """

    def __init__(
        self,
        labels: Sequence[str] | None = None,
        policy: ChunkPolicy | None = None,
        *,
        parse_timeout_s: float = DEFAULT_PARSE_TIMEOUT_S,
        chunk_timeout_s: float = DEFAULT_CHUNK_TIMEOUT_S,
        limits: ParseLimits | None = None,
        parse_fn: ParseFn | None = None,
        max_memory_mb: int | None = DEFAULT_MAX_MEMORY_MB,
        isolate: bool = True,
        encode: bool = False,
    ) -> None:
        super().__init__()
        # The two transforms validate the options (one sentence each) and build the tasks.
        self._parse = ParseDocuments(
            timeout_s=parse_timeout_s,
            limits=limits,
            parse_fn=parse_fn,
            isolate=isolate,
            max_memory_mb=max_memory_mb,
        )
        self._chunk = ChunkDocuments(
            labels,
            policy,
            timeout_s=chunk_timeout_s,
            max_memory_mb=max_memory_mb,
            isolate=isolate,
            encode=encode,
        )
        self._isolate = isolate

    def expand(self, raw_docs: PCollection[RawDocument]) -> _Outputs:
        fn = _ParseChunkFn(
            ParseChunkTask(self._parse.task(), self._chunk.task()),
            budgets_s=(self._parse.timeout_s, self._chunk.timeout_s),
            max_memory_mb=self._parse.max_memory_mb,
            isolate=self._isolate,
        )
        out = raw_docs | "Parse and chunk in helper process" >> beam.ParDo(fn).with_outputs(
            PARSE_ERRORS, CHUNK_ERRORS, OUTCOMES, main="chunks"
        )
        return {
            "chunks": out.chunks,
            PARSE_ERRORS: out[PARSE_ERRORS],
            CHUNK_ERRORS: out[CHUNK_ERRORS],
            OUTCOMES: out[OUTCOMES],
        }
