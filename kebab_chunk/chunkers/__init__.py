"""Versioned chunkers and their registry."""

from kebab_chunk.chunkers.base import Chunker, make_chunk
from kebab_chunk.chunkers.registry import get_chunker, registered_labels

__all__ = ["Chunker", "get_chunker", "make_chunk", "registered_labels"]
