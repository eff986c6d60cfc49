"""A bug in the compiled core ends on the Python path, never in a crash or a lost document.

``kebab_chunk_core.inject_fault(True)`` makes every entry point of the core panic where its
work starts. A Rust panic reaches Python as ``PanicException``, a ``BaseException`` that no
``except Exception`` in the pipeline would catch; the core therefore catches it itself and
answers as for a declined input, so the Python path gives the records (the same ones).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from benchmarks.corpora import fixture_markdown
from fuzz.targets import check, targets
from kebab_chunk._core import using
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import parse_document
from kebab_chunk.table import chunk_tables

POLICY = ChunkPolicy(target_tokens=64, overlap_tokens=8)


@pytest.fixture
def faulty(compiled: ModuleType) -> Iterator[ModuleType]:
    compiled.inject_fault(True)
    try:
        yield compiled
    finally:
        compiled.inject_fault(False)


def _documents() -> list[tuple[bytes, str]]:
    docs = fixture_markdown().documents
    return [(d.raw, f"file:///fault/{i}.md") for i, d in enumerate(docs)]


def test_every_entry_point_panics_under_the_fault(faulty: ModuleType) -> None:
    """The guards below are reached: the fault really fires inside each entry point."""
    assert faulty.split_run("a b c", [], None, 1, 0, "bytes-3") is None
    assert faulty.split_run("a b c", [], None, 1, 0, len) is None
    assert faulty.scan_markdown("# a\n\nb\n", 1000) is None
    found = faulty.chunk_markdown(
        [(b"# a\n\nb\n", 0, "file:///a.md")],
        "md-heading-v2",
        "h",
        64,
        8,
        True,
        "bytes-3",
        True,
        True,
        1000,
    )
    assert list(found["doc_rows"]) == [-2]
    assert len(found["position"]) == 0  # no half-written row is left behind


def test_chunk_tables_falls_back_to_python_with_a_warning(
    faulty: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    docs = _documents()
    with caplog.at_level(logging.WARNING, logger="kebab_chunk.table"):
        table = chunk_tables(docs, "md-heading-v2", POLICY)
    faulty.inject_fault(False)
    with using("python"):
        reference = chunk_tables(docs, "md-heading-v2", POLICY)
    assert table.num_rows > 50
    assert table.equals(reference)
    warned = [r.getMessage() for r in caplog.records if "compiled core failed" in r.getMessage()]
    assert len(warned) == len(docs)
    assert all(uri in message for (_, uri), message in zip(docs, warned, strict=True))


def test_a_panic_mid_row_is_cut_back_and_only_that_document_is_redone(
    compiled: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """The panic strikes halfway through the first row of the second document, leaving
    the text column a row longer than the others. That document's rows are taken back
    and it goes to the Python path; the rows of the documents before and after it stay
    the core's, lined up with their columns (the table equals the reference)."""
    docs = _documents()[:3]
    with using("python"):
        reference = chunk_tables(docs, "md-heading-v2", POLICY)
        first_rows = chunk_tables(docs[:1], "md-heading-v2", POLICY).num_rows
    counts: list[list[int]] = []
    original = compiled.chunk_markdown

    def recording(*args: object) -> Any:
        found = original(*args)
        counts.append(list(found["doc_rows"]))
        return found

    compiled.inject_fault(True, after_rows=first_rows)
    try:
        with (
            pytest.MonkeyPatch.context() as patch,
            caplog.at_level(logging.WARNING, logger="kebab_chunk.table"),
        ):
            patch.setattr(compiled, "chunk_markdown", recording)
            table = chunk_tables(docs, "md-heading-v2", POLICY)
    finally:
        compiled.inject_fault(False)
    assert counts[0][0] == first_rows and counts[0][1] == -2 and counts[0][2] > 0
    assert table.equals(reference)
    assert [docs[1][1] in r.getMessage() for r in caplog.records] == [True]


def test_parse_and_chunk_fall_back_inside_the_python_path(faulty: ModuleType) -> None:
    """``scan_markdown`` and ``split_run`` inside the parser and chunker: same chunks."""
    chunker = get_chunker("md-heading-v2")
    for raw, uri in _documents():
        doc = parse_document(raw, uri)
        got = [c.model_dump() for c in chunker.chunk(doc, POLICY)]
        faulty.inject_fault(False)
        with using("python"):
            want_doc = parse_document(raw, uri)
            want = [c.model_dump() for c in chunker.chunk(want_doc, POLICY)]
        faulty.inject_fault(True)
        assert doc == want_doc
        assert got == want


def test_the_core_fuzz_target_reports_a_panic(compiled: ModuleType) -> None:
    """``./run_local.sh fuzz core-markdown`` compares the paths and counts a panic (which
    the Python path would otherwise hide) as a crash."""
    target = targets()["core-markdown"]
    raw, _ = _documents()[0]
    check(target, raw)
    compiled.inject_fault(True)
    try:
        with pytest.raises(AssertionError, match="compiled core failed"):
            check(target, raw)
    finally:
        compiled.inject_fault(False)
