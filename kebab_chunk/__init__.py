"""kebab-chunk: deterministic, versioned document chunking for retrieval.

Data flows one way: bytes → parser → CanonicalDocument → chunker → Chunk → sink.
"""

from kebab_chunk.chunkers import get_chunker, registered_labels
from kebab_chunk.errors import KebabError
from kebab_chunk.markdown_chunker import MarkdownChunker
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, make_policy
from kebab_chunk.parsers import parse_document

__version__ = "0.1.0"

__all__ = [
    "CanonicalDocument",
    "Chunk",
    "ChunkPolicy",
    "KebabError",
    "MarkdownChunker",
    "__version__",
    "get_chunker",
    "make_policy",
    "parse_document",
    "registered_labels",
]
