"""The reuse rule of ``--previous``, one condition at a time, as the pure function it is.

Records are made by the real parser and chunker, so a "previous record" here is exactly
what an earlier run would have written. The pipeline folds them into a ``Summary`` and
carries a reused document's records by carry key; ``_decide`` does both steps in plain
Python, and the bucketing of large documents has its own test.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from kebab_chunk.beam.reuse_rule import (
    CARRY_BUCKET,
    DELETED,
    NEW,
    RECHUNKED,
    REUSED,
    PreviousRun,
    ReuseRule,
    Summary,
    carry_key,
    carry_keys,
    reuse_blocked,
)
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.elements import DocumentOutcome, RawDocument
from kebab_chunk.model import Chunk, ChunkPolicy, make_policy
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.output.records import DocumentFacts
from kebab_chunk.parsers.registry import DEFAULT_PARSER_VERSIONS, ParserChoice, parse_document
from tests.beam.helpers import records

POLICY = ChunkPolicy()
MD = DEFAULT_LABELS_BY_MEDIA_TYPE["text/markdown"][0]
PDF = DEFAULT_LABELS_BY_MEDIA_TYPE["application/pdf"][0]
URI = "guide.md"
RAW = b"# Guide\n\nFirst paragraph.\n\n## Part\n\nSecond paragraph.\n"
#: The manifest options the reuse rule compares, as a run with the defaults records them.
OPTIONS: dict[str, Any] = {
    "max_blocks": 200_000,
    "max_nesting": 64,
    "max_pages": 2000,
    "chunk_timeout_s": 60.0,
    "max_memory_mb": 2048,
    "parse_timeout_s": 60.0,
}


def _previous(
    policy: ChunkPolicy = POLICY,
    requested: tuple[str, ...] | None = None,
    options: dict[str, Any] | None = None,
    verified: bool = True,
) -> PreviousRun:
    return PreviousRun(
        output="/prev",
        policy_hash=policy.policy_hash,
        labels=(MD, PDF),
        requested=requested,
        defaults_by_media_type=tuple(sorted(DEFAULT_LABELS_BY_MEDIA_TYPE.items())),
        options=tuple((options if options is not None else OPTIONS).items()),
        verified=verified,
    )


MARKDOWN_PARSER = DEFAULT_PARSER_VERSIONS["text/markdown"]


def _records(raw: bytes = RAW, label: str = MD, parser_version: str | None = None) -> list[Chunk]:
    doc = parse_document(raw, URI, parser_version=parser_version)
    return records(label, doc, POLICY)


def _previous_facts(raw: bytes | None, chunks: list[Chunk]) -> DocumentFacts | None:
    """The documents row a previous run wrote beside ``chunks``: the facts of the parse
    that made them (their bytes' hash, their parser version)."""
    if raw is None or not chunks:
        return None
    doc = parse_document(raw, URI, parser_version=chunks[0].parser_version)
    return dataclasses.replace(DocumentFacts.of(doc), content_hash=chunks[0].content_hash)


_FROM_RECORDS: Any = object()


def _decide(
    *,
    files: bool = True,
    raw: bytes | None = RAW,
    chunks: Iterable[Chunk] = (),
    prints: Iterable[tuple[str, str, str]] = (),
    errored: bool = False,
    previous: PreviousRun | None = None,
    labels: tuple[str, ...] | None = None,
    parsers: ParserChoice | None = None,
    facts: DocumentFacts | None = _FROM_RECORDS,
    options: dict[str, Any] | None = None,
) -> tuple[list[str], list[Any], list[Chunk], list[DocumentOutcome]]:
    rule = ReuseRule(
        previous or _previous(),
        labels,
        POLICY.policy_hash,
        parsers or ParserChoice(),
        OPTIONS if options is None else options,
    )
    chunks = list(chunks)
    if facts is _FROM_RECORDS:
        facts = _previous_facts(raw, chunks)
    run_labels = {MD, *(labels or ())}
    seen = [
        (
            c.chunker_version if c.chunker_version in run_labels else None,
            (c.content_hash, c.parser_version, c.policy_hash),
            c.position,
        )
        for c in chunks
    ] + [(None, p, 0) for p in prints]
    summary = Summary.of(seen) if seen else None
    document = None if raw is None else RawDocument(URI, "text/markdown", content_hash(raw), raw)
    decision = rule.decide(
        matched=files, raw=document, summary=summary, errored=errored, facts=facts
    )
    decisions = [] if decision.name is None else [decision.name]
    to_parse = [document] if decision.name in (RECHUNKED, NEW) else []
    keys: set[tuple[str, str, int]] = set()
    outcomes: list[DocumentOutcome] = []
    if decision.name == REUSED and summary is not None and document is not None:
        keys = set(carry_keys(doc_id(URI), summary, dict(decision.carried)))
        assert facts is not None
        outcomes = [rule.outcome(document, decision.carried, facts)]
    carried = [c for c in chunks if carry_key(c) in keys]
    return decisions, to_parse, carried, outcomes


def test_unchanged_document_is_carried_forward_without_parsing() -> None:
    records = _records()
    decisions, to_parse, carried, outcomes = _decide(chunks=records)
    assert decisions == [REUSED] and not to_parse
    assert sorted(carried, key=lambda c: c.position) == records
    [outcome] = outcomes
    assert outcome.parser_version == records[0].parser_version
    assert outcome.chunks_by_label == ((MD, len(records)),)


def test_a_reused_document_gets_the_facts_of_its_previous_documents_row() -> None:
    """Title, front matter, warnings and block count come from the previous documents
    table, as a parse of the same bytes gives them (warnings included, not zero)."""
    raw = b"---\ntitle: Guide\n---\n# Guide\n\nFirst paragraph \xff.\n"
    doc = parse_document(raw, URI)
    assert doc.warnings and doc.title == "Guide"
    made = records(MD, doc, POLICY)
    decisions, _, _, [outcome] = _decide(raw=raw, chunks=made)
    assert decisions == [REUSED]
    assert outcome.facts == DocumentFacts.of(doc)
    assert outcome.warnings == doc.warnings and outcome.facts.front_matter == '{"title":"Guide"}'


@pytest.mark.parametrize(
    "facts",
    [
        None,  # no row: a previous output written before the documents table existed
        DocumentFacts.of(parse_document(RAW + b"\nOther bytes.\n", URI)),  # a stale row
    ],
)
def test_without_a_matching_documents_row_the_document_is_parsed_again(
    facts: DocumentFacts | None,
) -> None:
    decisions, to_parse, carried, outcomes = _decide(chunks=_records(), facts=facts)
    assert decisions == [RECHUNKED]
    assert [d.source_uri for d in to_parse] == [URI] and not carried and not outcomes


@pytest.mark.parametrize(
    ("case", "kwargs"),
    [
        ("bytes changed", {"chunks": _records(RAW + b"\nMore.\n")}),
        ("previous error row", {"chunks": _records(), "errored": True}),
        (
            "other policy",
            {"chunks": _records(), "previous": _previous(make_policy(target_tokens=99))},
        ),
        (
            "label the previous run did not apply",
            {"chunks": _records(), "labels": (MD, "hybrid-v1")},
        ),
        (
            "only records of another label",
            {"prints": [(content_hash(RAW), MARKDOWN_PARSER, POLICY.policy_hash)]},
        ),
    ],
)
def test_documents_that_could_differ_are_parsed_again(case: str, kwargs: dict[str, Any]) -> None:
    decisions, to_parse, carried, outcomes = _decide(**kwargs)
    assert decisions == [RECHUNKED], case
    assert [d.source_uri for d in to_parse] == [URI] and not carried and not outcomes


def test_a_stale_record_under_another_label_blocks_reuse() -> None:
    stale = (content_hash(b"old bytes"), MARKDOWN_PARSER, POLICY.policy_hash)
    decisions, _, carried, _ = _decide(chunks=_records(), prints=[stale])
    assert decisions == [RECHUNKED] and not carried


def test_records_of_another_parser_version_are_reused_only_under_that_version() -> None:
    """Records parsed by md-mistune-v1 (the former default) are not carried into a run that
    parses Markdown with md-pyromark-v1, but are when the run names md-mistune-v1 again."""
    old = _records(parser_version="md-mistune-v1")
    assert MARKDOWN_PARSER != "md-mistune-v1"
    assert _decide(chunks=old)[0] == [RECHUNKED]
    decisions, to_parse, carried, _ = _decide(
        chunks=old, parsers=ParserChoice.from_option("md-mistune-v1")
    )
    assert decisions == [REUSED] and not to_parse
    assert sorted(carried, key=lambda c: c.position) == old


def test_new_deleted_and_unread_documents() -> None:
    assert _decide()[0] == [NEW]
    decisions, to_parse, _, _ = _decide(files=False, raw=None, chunks=_records())
    assert decisions == [DELETED] and not to_parse
    assert _decide(raw=None, chunks=_records()) == ([], [], [], [])  # read error: no decision
    assert _decide(files=False, raw=None) == ([], [], [], [])


def test_a_large_document_is_carried_in_bounded_groups() -> None:
    """Carry keys split a label's records by position: every record falls in one of the
    document's keys, and no group holds more than CARRY_BUCKET records."""
    raw = "".join(f"# Section {i}\n\nText {i}.\n\n" for i in range(2 * CARRY_BUCKET + 50))
    records = _records(raw.encode())
    assert len(records) > 2 * CARRY_BUCKET
    decisions, _, carried, _ = _decide(raw=raw.encode(), chunks=records)
    assert decisions == [REUSED] and sorted(carried, key=lambda c: c.position) == records
    fingerprint = (records[0].content_hash, records[0].parser_version, POLICY.policy_hash)
    summary = Summary.merge(
        Summary.of([(MD, fingerprint, c.position) for c in records[start::3]]) for start in range(3)
    )
    groups = Counter(carry_key(c) for c in records)
    assert set(groups) == set(carry_keys(doc_id(URI), summary, [MD]))
    assert len(groups) == 3 and max(groups.values()) <= CARRY_BUCKET


@pytest.mark.parametrize(
    ("case", "options", "decision"),
    [
        ("same options", {}, REUSED),
        ("other max_blocks", {"max_blocks": 20}, RECHUNKED),
        ("other max_nesting", {"max_nesting": 10}, RECHUNKED),
        ("other max_pages", {"max_pages": 5}, RECHUNKED),
        ("smaller parse budget", {"parse_timeout_s": 0.5}, RECHUNKED),
        ("smaller chunk budget", {"chunk_timeout_s": 1.0}, RECHUNKED),
        ("smaller memory guard", {"max_memory_mb": 64}, RECHUNKED),
        ("no memory guard now", {"max_memory_mb": None}, REUSED),
        ("larger budgets", {"parse_timeout_s": 600.0, "max_memory_mb": 8192}, REUSED),
    ],
)
def test_parse_limits_must_match_and_budgets_must_not_shrink(
    case: str, options: dict[str, Any], decision: str
) -> None:
    """Records made under other parse limits could differ (a refused or flattened
    document); a budget only decides whether a document finishes, so a larger one gives
    the same records and a smaller one might not (docs/internals/decisions.md, "Issue 29.3")."""
    decisions, to_parse, carried, _ = _decide(chunks=_records(), options={**OPTIONS, **options})
    assert decisions == [decision], case
    assert bool(to_parse) == (decision == RECHUNKED) and bool(carried) == (decision == REUSED)


@pytest.mark.parametrize(
    "previous",
    [
        _previous(options={k: v for k, v in OPTIONS.items() if k != "max_nesting"}),
        _previous(verified=False),
    ],
    ids=["limits not recorded", "part files without digests"],
)
def test_an_older_previous_output_reuses_nothing(previous: PreviousRun) -> None:
    decisions, to_parse, carried, _ = _decide(chunks=_records(), previous=previous)
    assert decisions == [RECHUNKED] and to_parse and not carried


@pytest.mark.parametrize(
    ("previous", "options", "policy", "reason"),
    [
        (_previous(), OPTIONS, POLICY, None),
        (
            _previous(),
            {**OPTIONS, "max_blocks": 20},
            POLICY,
            "max_blocks changed from 200000 to 20",
        ),
        (_previous(), {**OPTIONS, "parse_timeout_s": 0.5}, POLICY, "parse_timeout_s shrank"),
        (_previous(), {**OPTIONS, "max_memory_mb": None}, POLICY, None),
        (_previous(), OPTIONS, ChunkPolicy(merge_peers=False), "the chunk policy changed"),
        (_previous(verified=False), OPTIONS, POLICY, "no part-file digests"),
        (
            _previous(options={k: v for k, v in OPTIONS.items() if k != "max_nesting"}),
            OPTIONS,
            POLICY,
            "records no max_nesting",
        ),
    ],
    ids=["reusable", "limit", "budget", "more budget", "policy", "no digests", "older options"],
)
def test_the_run_wide_reason_nothing_is_reused(
    previous: PreviousRun, options: dict[str, Any], policy: ChunkPolicy, reason: str | None
) -> None:
    """The manifest and the run summary say why an incremental run reused nothing when
    the reason is run-wide (not a document's own change)."""
    got = reuse_blocked(previous, options, policy.policy_hash)
    if reason is None:
        assert got is None
    else:
        assert got is not None and reason in got, got
