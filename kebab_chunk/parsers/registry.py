"""Parsers keyed by media type, and media-type detection by extension and content.

Entries are import paths so the registry imports nothing heavy until a parser is used.
"""

from __future__ import annotations

import importlib
import posixpath

from kebab_chunk.errors import KebabError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, Parser

__all__ = [
    "UnknownParserVersionError",
    "detect_media_type",
    "get_parser",
    "get_parser_by_version",
    "parse_document",
    "parser_versions",
    "supported_media_types",
]

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

#: Every registered parser version -> media type -> "module:Class", the defaults above
#: included (``csv-v1`` reads two media types). A version missing from ``_REGISTRY`` (e.g.
#: ``md-pyromark-v1``) is used only when asked for by name (``parser_version=``).
_VERSIONS: dict[str, dict[str, str]] = {
    "md-mistune-v1": {"text/markdown": "kebab_chunk.parsers.markdown:MarkdownParser"},
    "md-pyromark-v1": {
        "text/markdown": "kebab_chunk.parsers.markdown_pyromark:PyromarkMarkdownParser"
    },
    "text-plain-v1": {"text/plain": "kebab_chunk.parsers.text:PlainTextParser"},
    "pdf-text-v1": {"application/pdf": "kebab_chunk.parsers.pdf:PdfParser"},
    "html-v1": {"text/html": "kebab_chunk.parsers.html:HtmlParser"},
    "csv-v1": {
        "text/csv": "kebab_chunk.parsers.csv_:CsvParser",
        "text/tab-separated-values": "kebab_chunk.parsers.csv_:TsvParser",
    },
    "docx-v1": {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (
            "kebab_chunk.parsers.docx:DocxParser"
        )
    },
    "docling-json-v1": {
        "application/vnd.docling+json": "kebab_chunk.parsers.docling_json:DoclingJsonParser"
    },
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


class UnknownParserVersionError(KebabError, KeyError):
    """No parser is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


def parser_versions() -> dict[str, tuple[str, ...]]:
    """Registered parser versions -> the media types each reads, sorted by version."""
    return {version: tuple(by_type) for version, by_type in sorted(_VERSIONS.items())}


def _load(target: str) -> Parser:
    module_name, _, attr = target.partition(":")
    parser: Parser = getattr(importlib.import_module(module_name), attr)()
    return parser


def get_parser(media_type: str) -> Parser:
    """The default parser for ``media_type``."""
    target = _REGISTRY.get(media_type)
    if target is None:
        raise UnsupportedMediaTypeError(
            f"no parser is registered for media type {media_type!r}; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    return _load(target)


def get_parser_by_version(version: str, media_type: str | None = None) -> Parser:
    """The parser registered as ``version`` (e.g. ``md-pyromark-v1``), default or not.

    ``media_type`` picks among the media types one version reads (``csv-v1``: CSV or
    TSV); without it the version's first media type is used.
    """
    by_type = _VERSIONS.get(version)
    if by_type is None:
        raise UnknownParserVersionError(
            f"no parser is registered as {version!r}; "
            f"registered parser versions are: {', '.join(parser_versions())}."
        )
    if media_type is None:
        return _load(next(iter(by_type.values())))
    target = by_type.get(media_type)
    if target is None:
        raise UnsupportedMediaTypeError(
            f"parser {version} reads {', '.join(by_type)}, not {media_type}; choose a "
            f"parser version for {media_type} or leave the parser version unset."
        )
    return _load(target)


def parse_document(
    raw: bytes,
    source_uri: str,
    media_type: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
    parser_version: str | None = None,
) -> CanonicalDocument:
    """Detect the media type (unless given), pick the parser, and parse.

    ``parser_version`` picks a registered parser by version instead of the media type's
    default; it must read the document's media type.
    """
    media_type = media_type or detect_media_type(source_uri, raw[:8])
    if media_type is None:
        raise UnsupportedMediaTypeError(
            f"cannot tell the media type of {source_uri!r} from its extension; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    if parser_version is None:
        return get_parser(media_type).parse(raw, source_uri, limits)
    return get_parser_by_version(parser_version, media_type).parse(raw, source_uri, limits)
