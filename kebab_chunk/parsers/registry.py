"""The parser versions: one table, one row per immutable parser version; media-type
detection by extension and content.

A row (:class:`~kebab_chunk.parsers.base.ParserVersion`) names the version, the engine that
reads each of its media types, the engine's frozen rules for it
(:mod:`kebab_chunk.parsers.rules`) and a one-line summary. A new version is a new row,
usually ``replace(older.rules, field=...)``; a version, once registered, is never removed or
repointed at code with different output (docs/internals/versioning.md). Engines are import paths, so
listing versions imports no engine (nothing heavy until a parser is used). What each
version changed against the one before it, and why, is in docs/internals/parser-changes.md.
"""

from __future__ import annotations

import importlib
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kebab_chunk.errors import (
    NotBytesError,
    UnknownParserVersionError,
    UnsupportedMediaTypeError,
    UsageError,
)
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, Parser, ParserVersion
from kebab_chunk.parsers.rules import DoclingRules, HtmlRules, PdfRules, PlainTextRules

__all__ = [
    "DEFAULT_PARSER_VERSIONS",
    "MEDIA_TYPE_NAMES",
    "PARSER_VERSIONS",
    "MediaTypeMap",
    "ParserChoice",
    "UnknownParserVersionError",
    "detect_media_type",
    "get_parser",
    "get_parser_by_version",
    "is_supported",
    "media_type_names",
    "parse_document",
    "parser_versions",
    "parser_versions_for",
    "supported_media_types",
    "version_row",
]

_MARKDOWN = "text/markdown"
_PDF = "application/pdf"
_HTML = "text/html"
_DOCLING = "application/vnd.docling+json"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

_PDF_TEXT_V1 = PdfRules(
    whole_pages=True, outline_headings=False, drop_running_lines=False, font_headings=False
)
_PDF_TEXT_V2 = replace(
    _PDF_TEXT_V1, whole_pages=False, outline_headings=True, drop_running_lines=True
)
_DOCLING_JSON_V1 = DoclingRules(skip_picture_text=False, captions_in_tables=False)
_HTML_V1 = HtmlRules(
    drop_navigation=False,
    refusal_names_assertion_error=True,
    page_footer_names=False,
    terms_with_definitions=False,
    lone_section_links=False,
    unix_line_endings=False,
    code_in_lists=False,
)
_HTML_V2 = replace(_HTML_V1, drop_navigation=True, refusal_names_assertion_error=False)

#: Every registered parser version. A version stays registered, and reproducible, after it
#: stops being a default: ``md-mistune-v1`` is still chosen with ``parser_version=`` or
#: ``--parsers``.
PARSER_VERSIONS: tuple[ParserVersion, ...] = (
    ParserVersion(
        "md-mistune-v1",
        ((_MARKDOWN, "kebab_chunk.parsers.md_mistune_v1:MarkdownParser"),),
        None,
        "Markdown top-level blocks found by mistune 3's block parser, exact line spans",
    ),
    ParserVersion(
        "md-pyromark-v1",
        ((_MARKDOWN, "kebab_chunk.parsers.md_pyromark_v1:PyromarkMarkdownParser"),),
        None,
        "Markdown top-level blocks from pulldown-cmark's source ranges (pyromark), exact "
        "line spans, md-mistune-v1's blocks at 2.4x the speed",
    ),
    ParserVersion(
        "text-plain-v1",
        (("text/plain", "kebab_chunk.parsers._plain_text:PlainTextParser"),),
        PlainTextRules(headings=False),
        "blank-line separated paragraphs, exact line spans",
    ),
    ParserVersion(
        "text-plain-v2",
        (("text/plain", "kebab_chunk.parsers._plain_text:PlainTextParser"),),
        PlainTextRules(headings=True),
        "text-plain-v1's paragraphs, and AsciiDoc and setext section titles as headings",
    ),
    ParserVersion(
        "pdf-text-v1",
        ((_PDF, "kebab_chunk.parsers._pdf:PdfTextParser"),),
        _PDF_TEXT_V1,
        "one paragraph per page of pypdf's text, each citing its whole page",
    ),
    ParserVersion(
        "pdf-text-v2",
        ((_PDF, "kebab_chunk.parsers._pdf:PdfTextParser"),),
        _PDF_TEXT_V2,
        "pdf-text-v1's page text cut into headings from the outline and paragraphs, running "
        "headers and footers left out",
    ),
    ParserVersion(
        "pdf-text-v3",
        ((_PDF, "kebab_chunk.parsers._pdf:PdfTextParser"),),
        replace(_PDF_TEXT_V2, font_headings=True),
        "pdf-text-v2, and where the outline gives no heading, headings found by their type "
        "(short lines set larger than the text, or bold)",
    ),
    ParserVersion(
        "html-v1",
        ((_HTML, "kebab_chunk.parsers._html:HtmlEngine"),),
        _HTML_V1,
        "rendered text with exact markup spans, scripts, styles, <nav> and page-level "
        "header and footer dropped",
    ),
    ParserVersion(
        "html-v2",
        ((_HTML, "kebab_chunk.parsers._html:HtmlEngine"),),
        _HTML_V2,
        "html-v1's blocks and spans, navigation bars, link-only blocks and permalink marks "
        "left out",
    ),
    ParserVersion(
        "html-v3",
        ((_HTML, "kebab_chunk.parsers._html:HtmlEngine"),),
        replace(
            _HTML_V2,
            page_footer_names=True,
            terms_with_definitions=True,
            lone_section_links=True,
            unix_line_endings=True,
            code_in_lists=True,
        ),
        "html-v2's blocks, and footers named footer left out, definition terms kept with "
        "their definitions, a section's lone link list kept, code in list items kept line by "
        "line, one line ending (LF)",
    ),
    ParserVersion(
        "csv-v1",
        (
            ("text/csv", "kebab_chunk.parsers.csv_v1:CsvParser"),
            ("text/tab-separated-values", "kebab_chunk.parsers.csv_v1:TsvParser"),
        ),
        None,
        "the whole file as one table block, header the first row, one exact span per row",
    ),
    ParserVersion(
        "docx-v1",
        ((_DOCX, "kebab_chunk.parsers.docx_v1:DocxParser"),),
        None,
        "python-docx body in document order, element spans, zip-bomb guard",
    ),
    ParserVersion(
        "docling-json-v1",
        ((_DOCLING, "kebab_chunk.parsers._docling_json:DoclingJsonEngine"),),
        _DOCLING_JSON_V1,
        "docling's body tree as blocks with element spans, text inside pictures included",
    ),
    ParserVersion(
        "docling-json-v2",
        ((_DOCLING, "kebab_chunk.parsers._docling_json:DoclingJsonEngine"),),
        DoclingRules(skip_picture_text=True, captions_in_tables=True),
        "docling-json-v1's blocks without the text inside pictures, a table's captions in "
        "its block",
    ),
)
_BY_NAME: dict[str, ParserVersion] = {row.name: row for row in PARSER_VERSIONS}

#: The parser version used for each media type unless a run names another one.
#: ``md-pyromark-v1`` replaced ``md-mistune-v1`` for Markdown (docs/internals/decisions.md):
#: same blocks on the whole benchmark corpus, so the same chunk ids, at 2.4x the parse speed.
#: pdf-text-v2, html-v2 and docling-json-v2 replaced their v1 (outline headings, no
#: navigation, no picture text), html-v3 replaced html-v2 (manual pages' footers, terms
#: and "SEE ALSO" lists), text-plain-v2 replaced text-plain-v1 (section titles) and
#: pdf-text-v3 replaced pdf-text-v2 (headings found by their type); every earlier version
#: stays registered (docs/internals/decisions.md).
DEFAULT_PARSER_VERSIONS: dict[str, str] = {
    "text/markdown": "md-pyromark-v1",
    "text/plain": "text-plain-v2",
    "application/pdf": "pdf-text-v3",
    "text/html": "html-v3",
    "text/csv": "csv-v1",
    "text/tab-separated-values": "csv-v1",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx-v1",
    "application/vnd.docling+json": "docling-json-v2",
}
#: What help texts and docs call each supported media type, in the order they list them.
MEDIA_TYPE_NAMES: dict[str, str] = {
    "text/markdown": "Markdown",
    "text/plain": "plain text",
    "application/pdf": "PDF",
    "text/html": "HTML",
    "text/csv": "CSV",
    "text/tab-separated-values": "TSV",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.docling+json": "docling JSON",
}


def media_type_names(media_types: Iterable[str]) -> str:
    """``Markdown, PDF and HTML``: the names of ``media_types`` (a type without a name as
    itself), in the given order, as a list in a sentence."""
    names = [MEDIA_TYPE_NAMES.get(m, m) for m in media_types]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


_REGISTRY: dict[str, ParserVersion] = {
    media_type: _BY_NAME[version] for media_type, version in DEFAULT_PARSER_VERSIONS.items()
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


def supported_media_types() -> list[str]:
    return sorted(_REGISTRY)


def is_supported(media_type: str | None) -> bool:
    """Whether a parser reads ``media_type`` (None, an unknown type, is not supported)."""
    return media_type is not None and media_type in _REGISTRY


#: The suffixes of more than one dot (".docling.json"), checked before the last extension.
_MULTI_DOT = tuple((s, m) for s, m in _EXTENSIONS.items() if s.count(".") > 1)


def detect_media_type(
    path: str, head: bytes = b"", extensions: Iterable[tuple[str, str]] = ()
) -> str | None:
    """Media type from the extension, corrected by the first bytes when they disagree.

    A ``%PDF-`` header wins over any extension (a PDF named ``.txt`` is still a PDF); a
    ``.pdf`` name without that header stays ``application/pdf`` so the PDF parser reports
    the corruption. ``extensions``: ``(suffix, media type)`` pairs the user gave
    (:class:`MediaTypeMap`), checked before the built-in ones, longest suffix first.
    Unknown extensions give ``None``.
    """
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    lowered = path.lower()
    if extensions:
        for suffix, media_type in sorted(extensions, key=lambda e: -len(e[0])):
            if lowered.endswith(suffix):
                return media_type
    for suffix, media_type in _MULTI_DOT:
        if lowered.endswith(suffix):
            return media_type
    ext = posixpath.splitext(lowered)[1]
    return _EXTENSIONS.get(ext)


def parser_versions() -> dict[str, tuple[str, ...]]:
    """Registered parser versions -> the media types each reads, sorted by version."""
    return {name: _BY_NAME[name].media_types for name in sorted(_BY_NAME)}


def version_row(version: str) -> ParserVersion:
    """The registry row of ``version``; an unknown version gets a one-sentence error."""
    row = _BY_NAME.get(version)
    if row is None:
        raise UnknownParserVersionError(
            f"no parser is registered as {version!r}; "
            f"registered parser versions are: {', '.join(parser_versions())}."
        )
    return row


def _build(row: ParserVersion, media_type: str) -> Parser:
    """A fresh parser of version ``row`` for ``media_type``: its engine built from the row."""
    target = row.engine(media_type)
    if target is None:
        raise UnsupportedMediaTypeError(
            f"parser {row.name} reads {', '.join(row.media_types)}, not {media_type}; choose "
            f"a parser version for {media_type} or leave the parser version unset."
        )
    module_name, _, attr = target.partition(":")
    parser: Parser = getattr(importlib.import_module(module_name), attr)(row)
    return parser


def get_parser(media_type: str) -> Parser:
    """The default parser for ``media_type``."""
    row = _REGISTRY.get(media_type)
    if row is None:
        raise UnsupportedMediaTypeError(
            f"no parser is registered for media type {media_type!r}; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    return _build(row, media_type)


def get_parser_by_version(version: str, media_type: str | None = None) -> Parser:
    """The parser registered as ``version`` (e.g. ``md-pyromark-v1``), default or not.

    ``media_type`` picks among the media types one version reads (``csv-v1``: CSV or
    TSV); without it the version's first media type is used.
    """
    row = version_row(version)  # UnknownParserVersionError: one sentence
    return _build(row, row.media_types[0] if media_type is None else media_type)


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
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise NotBytesError(
            f"parse_document takes the file's bytes, got {type(raw).__name__}; pass "
            "text.encode('utf-8') or read the file with open(path, 'rb')."
        )
    media_type = media_type or detect_media_type(source_uri, raw[:8])
    if media_type is None:
        raise UnsupportedMediaTypeError(
            f"cannot tell the media type of {source_uri!r} from its extension; "
            f"supported media types are: {', '.join(supported_media_types())}."
        )
    if parser_version is None:
        return get_parser(media_type).parse(raw, source_uri, limits)
    return get_parser_by_version(parser_version, media_type).parse(raw, source_uri, limits)


@dataclass(frozen=True)
class ParserChoice:
    """Which parser version reads each media type in a run: the defaults, or named versions.

    Built on the launching machine by :meth:`from_versions` (which fails with one sentence on
    an unknown version or two versions for one media type); it is picklable and callable as
    a Beam parse function, so workers parse with exactly the launcher's choice.
    """

    overrides: tuple[tuple[str, str], ...] = ()  # (media type, version), sorted

    @classmethod
    def from_versions(cls, versions: Sequence[str]) -> ParserChoice:
        """``["md-mistune-v1"]`` -> that version for every media type it reads."""
        chosen: dict[str, str] = {}
        for version in dict.fromkeys(versions):
            for media_type in parser_versions_for(version):
                if media_type in chosen:
                    raise UnknownParserVersionError(
                        f"parser versions {chosen[media_type]} and {version} both read "
                        f"{media_type}; name only one of them."
                    )
                chosen[media_type] = version
        return cls(tuple(sorted(chosen.items())))

    @classmethod
    def from_option(cls, value: str | None) -> ParserChoice:
        """The choice for a ``--parsers`` value: comma-separated versions (None: defaults)."""
        if value is None:
            return cls()
        versions = [v.strip() for v in value.split(",") if v.strip()]
        if not versions:
            raise UnknownParserVersionError(
                "--parsers is empty; name at least one parser version or leave it out."
            )
        return cls.from_versions(versions)

    def version_for(self, media_type: str) -> str | None:
        """The version that reads ``media_type`` in this run; None if no parser does."""
        return dict(self.overrides).get(media_type, DEFAULT_PARSER_VERSIONS.get(media_type))

    def effective(self) -> dict[str, str]:
        """Media type -> version for every supported media type (for the manifest)."""
        return {m: v for m in supported_media_types() if (v := self.version_for(m)) is not None}

    def __call__(
        self,
        raw: bytes,
        source_uri: str,
        media_type: str | None = None,
        limits: ParseLimits = DEFAULT_LIMITS,
    ) -> CanonicalDocument:
        media_type = media_type or detect_media_type(source_uri, raw[:8])
        version = dict(self.overrides).get(media_type) if media_type else None
        return parse_document(raw, source_uri, media_type, limits, parser_version=version)


def parser_versions_for(version: str) -> tuple[str, ...]:
    """The media types ``version`` reads (UnknownParserVersionError: one sentence)."""
    return version_row(version).media_types


@dataclass(frozen=True)
class MediaTypeMap:
    """Extensions the user maps to a supported media type (``--media-type .rst=text/plain``).

    ``extensions`` holds ``(suffix, media type)`` pairs, each suffix lower-case with its
    leading dot, sorted; they win over the built-in extensions (never over a ``%PDF-``
    header). Only media types a parser reads are accepted, so a mapping can never turn a
    file into an ``unsupported_media_type`` error. Picklable; equal maps detect alike.
    """

    extensions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str], option: str = "media_types") -> MediaTypeMap:
        """``{".rst": "text/plain"}`` -> a map; UsageError (one sentence) for a bad entry."""
        chosen: dict[str, str] = {}
        for given, media_type in mapping.items():
            shown = f"{option} {given}={media_type}"
            suffix = given.strip().lower()
            suffix = suffix if suffix.startswith(".") else "." + suffix
            if suffix == "." or "/" in suffix or any(c.isspace() for c in suffix):
                raise UsageError(
                    f"{shown} does not name a file extension; write EXT=MEDIA_TYPE, "
                    "e.g. .rst=text/plain."
                )
            if not is_supported(media_type):
                raise UsageError(
                    f"{shown} names {media_type!r}, which no parser reads; supported media "
                    f"types are: {', '.join(supported_media_types())}."
                )
            if chosen.get(suffix, media_type) != media_type:
                raise UsageError(
                    f"{option} maps {suffix} to both {chosen[suffix]} and {media_type}; "
                    "give each extension once."
                )
            chosen[suffix] = media_type
        return cls(tuple(sorted(chosen.items())))

    @classmethod
    def from_option(cls, values: Iterable[str] | None) -> MediaTypeMap:
        """The map of repeated ``--media-type EXT=MEDIA_TYPE`` values (None: empty)."""
        pairs: list[tuple[str, str]] = []
        for value in values or ():
            ext, sep, media_type = value.partition("=")
            if not sep or not ext.strip() or not media_type.strip():
                raise UsageError(
                    f"--media-type {value!r} is not EXT=MEDIA_TYPE; write e.g. "
                    "--media-type .rst=text/plain."
                )
            pairs.append((ext.strip(), media_type.strip()))
        chosen: dict[str, str] = {}
        for ext, media_type in pairs:
            one = cls.from_mapping({ext: media_type}, "--media-type").extensions[0]
            if chosen.get(one[0], one[1]) != one[1]:
                raise UsageError(
                    f"--media-type maps {one[0]} to both {chosen[one[0]]} and {one[1]}; "
                    "give each extension once."
                )
            chosen[one[0]] = one[1]
        return cls(tuple(sorted(chosen.items())))

    def detect(self, path: str, head: bytes = b"") -> str | None:
        """:func:`detect_media_type` with this map's extensions first."""
        return detect_media_type(path, head, self.extensions)

    def to_manifest(self) -> dict[str, str]:
        """The map as the manifest's ``options`` record it."""
        return dict(self.extensions)
