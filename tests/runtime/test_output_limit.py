"""The output limit: one document's chunks under one label hold at most
``max(factor x its text, floor)`` characters before they leave the helper (docs/guide/limits.md).

hybrid-v3 repeats a wide CSV header on every continuation chunk, so its output grows with
the square of the header: the limit turns that into one ``chunk`` / ``limit_exceeded`` row
for the label, while the other labels of the document still chunk it and no fixture comes
near the limit.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument, ChunkPolicy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.runtime.output_limit import DEFAULT_OUTPUT_LIMIT, OutputLimit, document_chars
from kebab_chunk.runtime.tasks import ChunkTask
from tests.chunkers.test_hybrid_v2 import GOLDEN_POLICIES
from tests.chunkers.test_hybrid_v4 import wide_csv

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
POLICY = ChunkPolicy()


def _task(labels: tuple[str, ...], limit: OutputLimit = DEFAULT_OUTPUT_LIMIT) -> ChunkTask:
    return ChunkTask(labels, POLICY, {label: get_chunker(label) for label in labels}, None, limit)


def test_a_quadratic_output_is_one_error_row_for_its_label_only() -> None:
    doc = wide_csv(30_000, 200)  # v3: ~140 M characters from 0.35 M; v4: ~0.7 M
    done = _task(("hybrid-v3", "hybrid-v4")).chunk(doc)
    (error,) = done.errors
    assert (error.stage, error.error_type, error.chunker_version) == (
        "chunk",
        "limit_exceeded",
        "hybrid-v3",
    )
    assert error.source_uri == "wide.csv" and error.message.count(". ") == 0
    assert "hybrid-v4" in error.message and f"{DEFAULT_OUTPUT_LIMIT.floor_chars:,}" in error.message
    assert dict(done.outcome.chunks_by_label)["hybrid-v3"] == 0
    assert done.chunks and {c.chunker_version for c in done.chunks} == {"hybrid-v4"}
    assert dict(done.outcome.chunks_by_label)["hybrid-v4"] == len(done.chunks)


def test_the_limit_is_a_multiple_of_the_document_above_the_floor() -> None:
    doc = wide_csv(5_000, 50)
    limit = OutputLimit(factor=32, floor_chars=0)
    assert limit.chars_for(doc) == 32 * document_chars(doc)
    (error,) = _task(("hybrid-v3",), limit).chunk(doc).errors
    assert error.error_type == "limit_exceeded"
    assert not _task(("hybrid-v4",), limit).chunk(doc).errors


def _fixtures() -> list[CanonicalDocument]:
    docs = []
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        try:
            docs.append(parse_document(path.read_bytes(), path.relative_to(FIXTURES).as_posix()))
        except ParseError:
            continue
    return docs


@pytest.mark.parametrize("policy_name", sorted(GOLDEN_POLICIES))
def test_no_fixture_comes_near_the_limit_even_without_its_floor(policy_name: str) -> None:
    """Every label on every fixture stays under the factor alone, so the limit changes no
    fixture's (or golden's) output."""
    logging.disable(logging.WARNING)
    try:
        policy = GOLDEN_POLICIES[policy_name]
        strict = OutputLimit(factor=DEFAULT_OUTPUT_LIMIT.factor, floor_chars=0)
        for doc in _fixtures():
            for label in registered_labels():
                chunker = get_chunker(label)
                if document_chars(doc) and chunker.accepts(doc):
                    made = strict.collect(chunker.chunk(doc, policy), doc)
                    assert made is not None, (label, doc.source_uri)
    finally:
        logging.disable(logging.NOTSET)
