"""Parsers keyed by media type, and media-type detection by extension and content.

Entries are import paths so the registry imports nothing heavy until a parser is used.
"""

from __future__ import annotations

import importlib
import posixpath

from kebab_chunk.errors import ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, Parser

__all__ = ["detect_media_type", "get_parser", "parse_document", "supported_media_types"]

_REGISTRY: dict[str, str] = {
    "text/markdown": "kebab_chunk.parsers.markdown:MarkdownParser",
    "text/plain": "kebab_chunk.parsers.text:PlainTextParser",
    "application/pdf": "kebab_chunk.parsers.pdf:PdfParser",
    "text/html": "kebab_chunk.parsers.html:HtmlParser",
    "text/csv": "kebab_chunk.parsers.csv_:CsvParser",
    "text/tab-separated-values": "kebab_chunk.parsers.csv_:TsvParser",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (
        "kebab_chunk.parsers.docx:DocxParser"
    ),
    "application/vnd.docling+json": "kebab_chunk.parsers.docling_json:DoclingJsonParser",
}

_EXTENSIONS: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".mdown": "text/markdown",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
    ".csv": "text/csv",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".json": "application/json",
    ".tsv": "text/tab-separated-values",
    ".docling.json": "application/vnd.docling+json",  # multi-dot: matched before splitext
}


class UnsupportedMediaTypeError(ParseError):
    """No parser is registered for the document's media type."""

    error_type = "unsupported_media_type"


def supported_media_types() -> list[str]:
    return sorted(_REGISTRY)


def detect_media_type(path: str, head: bytes = b"") -> str | None:
    """Media type from the extension, corrected by the first bytes when they disagree.

    A ``%PDF-`` header wins over any extension (a PDF named ``.txt`` is still a PDF); a
    ``.pdf`` name without that header stays ``application/pdf`` so the PDF parser reports
    the corruption. Unknown extensions give ``None``.
    """
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    lowered = path.lower()
    for suffix, media_type in _EXTENSIONS.items():  # multi-dot suffixes (".docling.json")
        if suffix.count(".") > 1 and lowered.endswith(suffix):
            return media_type
    ext = posixpath.splitext(lowered)[1]
    return _EXTENSIONS.get(ext)


def get_parser(media_type: str) -> Parser:
    target = _REGISTRY.get(media_type)
    if target is None:
        raise UnsupportedMediaTypeError(
            f"no parser is registered for media type {media_type!r}; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    module_name, _, attr = target.partition(":")
    parser: Parser = getattr(importlib.import_module(module_name), attr)()
    return parser


def parse_document(
    raw: bytes,
    source_uri: str,
    media_type: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> CanonicalDocument:
    """Detect the media type (unless given), pick the parser, and parse."""
    media_type = media_type or detect_media_type(source_uri, raw[:8])
    if media_type is None:
        raise UnsupportedMediaTypeError(
            f"cannot tell the media type of {source_uri!r} from its extension; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    return get_parser(media_type).parse(raw, source_uri, limits)
