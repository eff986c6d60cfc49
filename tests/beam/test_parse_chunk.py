"""``ParseAndChunk``: the job's one-trip parse + chunk step gives the two-step records.

Expected records come from calling the parsers and chunkers directly. Hostile documents
hang or crash in either stage; the error row must name the stage (and the budget option
of that stage), and a document that fails while chunking still has its outcome.
"""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.beam import DocumentOutcome, ErrorRecord, ParseAndChunk, RawDocument
from kebab_chunk.beam._testing import hostile_parse
from kebab_chunk.chunkers import registry as chunker_registry
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.errors import ParseError
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.parsers.registry import detect_media_type, parse_document
from tests.beam.helpers import CORPUS, quiet_beam, records
from tests.reliability.hostile import HOSTILE_LABEL, HOSTILE_ROW

quiet_beam()
POLICY = ChunkPolicy()


def _raw(uri: str, raw: bytes) -> RawDocument:
    return RawDocument(uri, detect_media_type(uri, raw[:8]), content_hash(raw), raw)


def _corpus() -> list[RawDocument]:
    paths = sorted(p for p in CORPUS.rglob("*") if p.is_file())
    return [_raw(p.relative_to(CORPUS).as_posix(), p.read_bytes()) for p in paths]


def test_parse_and_chunk_gives_the_records_of_parsing_then_chunking() -> None:
    raws = _corpus()
    chunks: list[Chunk] = []
    parse_errors: list[ErrorRecord] = []
    outcomes: list[DocumentOutcome] = []
    for r in raws:
        try:
            doc = parse_document(r.raw, r.source_uri, r.media_type)
        except ParseError as exc:
            parse_errors.append(
                ErrorRecord(
                    r.source_uri, "parse", exc.error_type, str(exc), r.content_hash, r.media_type
                )
            )
            continue
        counts = []
        for label in DEFAULT_LABELS_BY_MEDIA_TYPE[doc.media_type]:
            produced = records(label, doc, POLICY)
            chunks.extend(produced)
            counts.append((label, len(produced)))
        outcomes.append(DocumentOutcome(doc.source_uri, DocumentFacts.of(doc), tuple(counts)))
    assert parse_errors and chunks  # the fixture corpus has both
    with BeamTestPipeline() as p:
        out = p | beam.Create(raws) | ParseAndChunk(None, POLICY)
        assert_that(out["chunks"], equal_to(chunks), label="chunks")
        assert_that(out["parse_errors"], equal_to(parse_errors), label="parse errors")
        assert_that(out["chunk_errors"], equal_to([]), label="no chunk errors")
        assert_that(out["outcomes"], equal_to(outcomes), label="outcomes")


def test_hangs_and_crashes_in_either_stage_are_one_row_naming_the_stage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(chunker_registry._BY_NAME, HOSTILE_LABEL, HOSTILE_ROW)
    good = _raw("good.md", b"# Fine\n\nA normal document with one paragraph.\n")
    hostile = [
        _raw("p-hang.md", b"HANG forever"),
        _raw("p-crash.md", b"CRASH the process"),
        _raw("c-hang.md", b"# T\n\nHANG here\n"),
        _raw("c-crash.md", b"# T\n\nCRASH here\n"),
    ]
    labels = ["md-heading-v1", HOSTILE_LABEL]
    doc = parse_document(good.raw, good.source_uri)
    parsed = {r.source_uri: parse_document(r.raw, r.source_uri) for r in hostile[2:]}

    def key(e: ErrorRecord) -> tuple[object, ...]:
        option = "--parse-timeout-s" if e.stage == "parse" else "--chunk-timeout-s"
        named = option in e.message if e.error_type == "timeout" else None
        return (e.source_uri, e.stage, e.error_type, e.content_hash, named)

    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create([*hostile, good])
            | ParseAndChunk(
                labels,
                POLICY,
                parse_fn=hostile_parse,
                parse_timeout_s=2,
                chunk_timeout_s=2,
                max_memory_mb=512,
            )
        )
        assert_that(
            out["chunks"],
            equal_to(records("md-heading-v1", doc, POLICY)),
            label="the good document is chunked",
        )
        assert_that(
            out["parse_errors"] | "Parse keys" >> beam.Map(key),
            equal_to(
                [
                    ("p-hang.md", "parse", "timeout", hostile[0].content_hash, True),
                    ("p-crash.md", "parse", "worker_crash", hostile[1].content_hash, None),
                ]
            ),
            label="parse-stage rows",
        )
        assert_that(
            out["chunk_errors"] | "Chunk keys" >> beam.Map(key),
            equal_to(
                [
                    ("c-hang.md", "chunk", "timeout", hostile[2].content_hash, True),
                    ("c-crash.md", "chunk", "worker_crash", hostile[3].content_hash, None),
                ]
            ),
            label="chunk-stage rows",
        )
        assert_that(
            out["outcomes"],
            equal_to(
                [
                    DocumentOutcome(
                        "good.md",
                        DocumentFacts.of(doc),
                        (("md-heading-v1", 1), (HOSTILE_LABEL, 0)),
                    ),
                    # a document stopped while chunking keeps every fact of its parse
                    *(DocumentOutcome(uri, DocumentFacts.of(d), ()) for uri, d in parsed.items()),
                ]
            ),
            label="an outcome for every parsed document",
        )
