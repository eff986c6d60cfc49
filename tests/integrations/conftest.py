"""Records the adapter tests convert: headings, a caption, and a section cut into slices."""

from __future__ import annotations

import pytest

from kebab_chunk.markdown_chunker import MarkdownChunker
from kebab_chunk.model import Chunk

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
