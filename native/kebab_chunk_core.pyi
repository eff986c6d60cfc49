"""kebab-chunk's optional compiled core: each function returns what the Python code it
replaces returns (``kebab_chunk._core`` chooses whether it is used; docs/guide/core.md)."""

from collections.abc import Callable, Sequence
from typing import Any

__version__: str
#: The calling convention's number (``kebab_chunk._core.API`` must match it).
API: int

class Buffer:
    """Bytes the core made, lent through the buffer protocol (read-only, no copy)."""

    def __len__(self) -> int: ...

def split_run(
    text: str,
    structural: list[int],
    glue_end: int | None,
    budget: int,
    overlap_tokens: int,
    counter: str | Callable[[str], int],
) -> list[tuple[int, int, int]] | None:
    """``_md_heading.split_run``'s pieces; None for text UTF-8 cannot hold or a panic."""

def scan_markdown(body: str, max_blocks: int) -> tuple[list[Any], int, bool] | None:
    """``md_pyromark_v1._scan``'s records and deepest nesting, and whether the block count
    went over ``max_blocks``; None for text UTF-8 cannot hold or a panic."""

def chunk_markdown(
    documents: Sequence[tuple[bytes, int, str]],
    label: str,
    policy_hash: str,
    budget: int,
    overlap: int,
    merge_peers: bool,
    tokenizer: str,
    bound_lines: bool,
    leading: bool,
    max_blocks: int,
    entries: bool = False,
    engine: str = "md-heading",
    cut_list_markers: bool = False,
    merge_list_items: bool = True,
) -> dict[str, Any]:
    """``(raw, body_start, source_uri)`` documents to chunk rows (``engine``: the
    ``"md-heading"`` or ``"hybrid"`` engine's label ``label``) as Arrow buffers, with
    ``doc_rows`` (-1: declined, -2: the core panicked), ``deepest``, ``seconds``,
    ``blocks`` and ``first_h1`` per document; with ``entries``, each document's rows as
    spill entries (``output.spill_entry.row_entry``) under ``entries`` instead."""

def embed_text(headings: list[str], captions: list[str], text: str, leading: bool) -> str:
    """``chunkers.embedding.embed_text`` of a chunk's parts."""

def repeat_string(value: str, count: int) -> tuple[Buffer, Buffer]:
    """``value`` ``count`` times as an Arrow string column's ``(offsets, data)``."""

def inject_fault(on: bool, after_rows: int | None = None) -> None:
    """Make every entry point panic where its work starts, or with ``after_rows`` make
    ``chunk_markdown`` panic halfway through the row after that many (for the tests)."""

def shard_rows(chains: list[list[tuple[str, int, int]]]) -> dict[str, Any] | None:
    """One shard's part-file rows from its sorted spill segments (Arrow buffers and
    ``counts``), or None where the Python writer must write the shard."""

def whitespace() -> list[int]:
    """Every code point read as whitespace (Python's ``str.isspace``)."""

def separator_starts(text: str, name: str) -> list[int]:
    """``_separators.separator_starts`` of the prose separator ``name``."""
