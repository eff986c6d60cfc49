"""Records the adapter tests convert: headings, a caption, and a section cut into slices;
and a real pipeline output over a mixed corpus, read back as Parquet rows."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads
import pytest

from kebab_chunk.integrations.markdown_chunker import MarkdownChunker
from kebab_chunk.model import Chunk
from kebab_chunk.output.schema import row_to_chunk
from tests.report.helpers import FIXTURES, run_pipeline

SAMPLE = """# Install

Download the wheel.

![Architecture diagram](img/arch.png "Data flow")

## Configure

""" + "\n\n".join(f"Setting {i} controls part {i} of the pipeline." for i in range(20))


@pytest.fixture
def records() -> list[Chunk]:
    chunks = MarkdownChunker(max_chunk_size=200, overlap=40).chunk_records(
        SAMPLE, source="guides/install.md"
    )
    assert len(chunks) > 3
    assert any(c.captions for c in chunks) and any(len(c.heading_path) == 2 for c in chunks)
    return chunks


# --- a real pipeline output -----------------------------------------------------------------

#: corpus path -> fixture file: line spans (Markdown, text, HTML), page spans (PDF) and
#: element spans (DOCX), so Parquet's span structs carry nulls of every kind.
MIXED_CORPUS = {
    "guides/installation.md": FIXTURES / "corpus" / "guides" / "installation.md",
    "guides/long-section.md": FIXTURES / "markdown" / "long-section.md",
    "notes/release-notes-2.4.txt": FIXTURES / "corpus" / "notes" / "release-notes-2.4.txt",
    "pdf/three-page-en.pdf": FIXTURES / "pdf" / "three-page-en.pdf",
    "office/report.docx": FIXTURES / "docx" / "report.docx",
    "web/article.html": FIXTURES / "html" / "article.html",
}


@pytest.fixture(scope="session")
def pipeline_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``kebab-chunk run`` (DirectRunner, default labels and policy) over MIXED_CORPUS."""
    corpus = tmp_path_factory.mktemp("adapters-corpus")
    for name, source in MIXED_CORPUS.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, corpus / name)
    return run_pipeline(corpus, tmp_path_factory.mktemp("adapters-run") / "out")


@pytest.fixture(scope="session")
def parquet_rows(pipeline_out: Path) -> list[dict[str, Any]]:
    """The output's chunk rows as pyarrow gives them (hive partitioning restores the label)."""
    table = pads.dataset(pipeline_out / "chunks", format="parquet", partitioning="hive")
    rows: list[dict[str, Any]] = table.to_table().sort_by("chunk_id").to_pylist()
    return rows


@pytest.fixture(scope="session")
def pipeline_records(parquet_rows: list[dict[str, Any]]) -> list[Chunk]:
    """The same rows as records, through the output package's own converter (the oracle)."""
    records = [row_to_chunk(row) for row in parquet_rows]
    kinds = {span.kind for record in records for span in record.source_spans}
    assert kinds == {"lines", "page", "element"}, kinds
    return records
