"""kebab-chunk's optional compiled core: each function returns what the Python code it
replaces returns (``kebab_chunk._core`` chooses whether it is used)."""

from collections.abc import Callable

__version__: str

def split_run(
    text: str,
    structural: list[int],
    glue_end: int | None,
    budget: int,
    overlap_tokens: int,
    counter: str | Callable[[str], int],
) -> list[tuple[int, int, int]] | None:
    """``_md_heading.split_run``'s pieces; None for text UTF-8 cannot hold."""

def whitespace() -> list[int]:
    """Every code point read as whitespace (Python's ``str.isspace``)."""

def separator_starts(text: str, name: str) -> list[int]:
    """``_separators.separator_starts`` of the prose separator ``name``."""
