"""Parsers (one engine per format, built from a row of the registry's table of versions) and
their registry."""

from kebab_chunk.parsers.base import ParseLimits, Parser
from kebab_chunk.parsers.registry import detect_media_type, get_parser, parse_document

__all__ = ["ParseLimits", "Parser", "detect_media_type", "get_parser", "parse_document"]
