"""Fixtures of the report tests: one real pipeline output, and hand-built outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.output.records import ErrorRecord
from tests.report.helpers import CORPUS, chunks_with_tokens, make_doc, run_pipeline, write_output

#: Small target and an overlap, so the corpus PDFs give overlapping page slices.
PIPELINE_FLAGS = ("--target-tokens", "200", "--overlap-tokens", "20")
POLICY = ChunkPolicy(target_tokens=50, overlap_tokens=5)


@pytest.fixture(scope="session")
def pipeline_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real pipeline (DirectRunner) over fixtures/corpus, run once per session."""
    return run_pipeline(CORPUS, tmp_path_factory.mktemp("pipeline") / "out", *PIPELINE_FLAGS)


def synthetic_parts() -> tuple[list[Chunk], list[ErrorRecord], dict[str, tuple[str, str]]]:
    """Chunks with hand-chosen token counts, three error rows, and every file's bucket.

    md-heading-v1: a.md has tokens 1..100, b.md one chunk of 200 (101 chunks, 2 documents);
    pdf-page-v1: c.pdf has 10, 30, 20. Errors: parse/binary_content for z.md and y.md,
    read/too_large for big.pdf. e.txt parsed to zero chunks.
    """
    a, b, c = make_doc("a.md"), make_doc("b.md"), make_doc("c.pdf", media_type="application/pdf")
    chunks = [
        *chunks_with_tokens(a, "md-heading-v1", range(1, 101), POLICY),
        *chunks_with_tokens(b, "md-heading-v1", [200], POLICY),
        *chunks_with_tokens(c, "pdf-page-v1", [10, 30, 20], POLICY),
    ]
    errors = [
        ErrorRecord("z.md", "parse", "binary_content", "z.md contains NUL bytes", "h1"),
        ErrorRecord("y.md", "parse", "binary_content", "y.md contains NUL bytes", "h2"),
        ErrorRecord("big.pdf", "read", "too_large", "big.pdf is over the limit", None),
    ]
    media = {
        "a.md": ("text/markdown", "chunked"),
        "b.md": ("text/markdown", "chunked"),
        "c.pdf": ("application/pdf", "chunked"),
        "e.txt": ("text/plain", "zero_chunks"),
        "y.md": ("text/markdown", "errors"),
        "z.md": ("text/markdown", "errors"),
        "big.pdf": ("application/pdf", "errors"),
    }
    return chunks, errors, media


@pytest.fixture(scope="session")
def synthetic_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-built output of :func:`synthetic_parts` (read-only: shared by the session)."""
    chunks, errors, media = synthetic_parts()
    return write_output(
        tmp_path_factory.mktemp("synthetic") / "new",
        chunks,
        errors,
        POLICY,
        ["md-heading-v1", "pdf-page-v1"],
        media,
    )


@pytest.fixture(scope="session")
def older_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An 'old' run: a.md's 100 chunks (same ids as in synthetic_output) and d.md's 7."""
    a, d = make_doc("a.md"), make_doc("d.md")
    chunks = [
        *chunks_with_tokens(a, "md-heading-v1", range(1, 101), POLICY),
        *chunks_with_tokens(d, "md-heading-v1", [7], POLICY),
    ]
    media = {"a.md": ("text/markdown", "chunked"), "d.md": ("text/markdown", "chunked")}
    return write_output(
        tmp_path_factory.mktemp("older") / "old", chunks, [], POLICY, ["md-heading-v1"], media
    )
