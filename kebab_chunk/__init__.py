"""kebab-chunk: deterministic, versioned document chunking for retrieval.

Data flows one way: bytes → parser → CanonicalDocument → chunker → Chunk → sink.
"""

from typing import TYPE_CHECKING, Any

from kebab_chunk.chunkers import get_chunker, registered_labels
from kebab_chunk.errors import ConfigurationError, DocumentError, EnvironmentProblem, KebabError
from kebab_chunk.integrations.markdown_chunker import MarkdownChunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.output.manifest import Manifest
from kebab_chunk.parsers import parse_document

if TYPE_CHECKING:  # imported lazily at run time, see __getattr__
    from kebab_chunk.results import (
        read_chunks,
        read_documents,
        read_errors,
        read_manifest,
        read_table,
    )

__version__ = "0.1.0"

#: Readers of a finished output (kebab_chunk/results.py), imported on first use: they need
#: pyarrow's dataset module, which the parse and chunk helper processes never load.
_READERS = frozenset(
    {"read_chunks", "read_documents", "read_errors", "read_manifest", "read_table"}
)


def __getattr__(name: str) -> Any:
    if name in _READERS:
        from kebab_chunk import results

        return getattr(results, name)
    raise AttributeError(f"module 'kebab_chunk' has no attribute {name!r}")


__all__ = [
    "CanonicalDocument",
    "Chunk",
    "ChunkPolicy",
    "ConfigurationError",
    "DocumentError",
    "EnvironmentProblem",
    "KebabError",
    "Manifest",
    "MarkdownChunker",
    "__version__",
    "get_chunker",
    "make_policy",
    "parse_document",
    "read_chunks",
    "read_documents",
    "read_errors",
    "read_manifest",
    "read_table",
    "registered_labels",
]
