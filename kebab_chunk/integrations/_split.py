"""Text → chunk records, for the LangChain splitter and the LlamaIndex node parser.

A framework hands us a document's *text* and its metadata; this module decides which
file name and media type the text stands for, parses it with the registered parser and
chunks it with a registered label under a :class:`~kebab_chunk.model.ChunkPolicy`, so a
splitter gives exactly the records the pipeline writes for the same file, name and policy.

* **Name** (``source_uri``, hence ``doc_id`` and every id): the first non-empty string
  among the metadata keys :data:`SOURCE_KEYS` (``source_uri``, then LangChain loaders'
  ``source``, then LlamaIndex readers' ``file_path`` and ``file_name``). Text without one
  is named ``inline-<first 16 hex digits of the blake3 of its UTF-8 bytes>``: ids stay
  deterministic, and two different texts never share a ``doc_id``.
* **Media type**: the splitter's ``media_type`` when given (every text is read as it);
  else the metadata's ``media_type`` (or ``mime_type``, ``mimetype``, LlamaIndex's
  ``file_type``); else the name's extension; else Markdown. A type whose parser reads
  text (Markdown, plain text, HTML, CSV, TSV, docling JSON) is used as is; any other type
  the metadata or name names (a PDF, a DOCX, a JSON or source file) means the text was
  already extracted by a loader, so it is read as plain text.
* **Label**: the splitter's ``chunker`` when given, else the pipeline's default for the
  media type (``DEFAULT_LABELS_BY_MEDIA_TYPE`` in ``kebab_chunk.chunkers.registry``).

Character offsets in the records' spans index the text as given (the decoded source),
except that a leading byte-order mark is not counted, as for files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kebab_chunk.chunkers import get_chunker
from kebab_chunk.chunkers.base import Chunker
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.errors import ConfigurationError, RecordError, WrongTypeError
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.registry import ParserChoice, detect_media_type

__all__ = [
    "DEFAULT_MEDIA_TYPE",
    "MEDIA_TYPE_KEYS",
    "SOURCE_KEYS",
    "TEXT_MEDIA_TYPES",
    "TextChunking",
]

DEFAULT_MEDIA_TYPE = "text/markdown"
#: Media types whose parser reads text, so a framework's text can be parsed as them.
TEXT_MEDIA_TYPES = (
    "text/markdown",
    "text/plain",
    "text/html",
    "text/csv",
    "text/tab-separated-values",
    "application/vnd.docling+json",
)
#: Metadata keys that name the document, first match wins.
SOURCE_KEYS = ("source_uri", "source", "file_path", "file_name")
#: Metadata keys that state the media type, first match wins.
MEDIA_TYPE_KEYS = ("media_type", "mime_type", "mimetype", "file_type")


def _first_string(metadata: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@dataclass(frozen=True)
class TextChunking:
    """A label, a policy and a media-type rule: what a splitter does to one text.

    Built once per splitter; an unknown label, parser version or media type fails here,
    with one sentence, before any text is split.
    """

    chunker: str | None = None
    policy: ChunkPolicy = field(default_factory=ChunkPolicy)
    media_type: str | None = None
    parser_version: str | None = None
    _chunkers: dict[str, Chunker] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.chunker is not None:
            self.chunker_for(self.chunker)  # UnknownChunkerError names the registered labels
        if not isinstance(self.policy, ChunkPolicy):
            raise WrongTypeError(
                f"policy must be a ChunkPolicy, got {type(self.policy).__name__}; "
                "build one with kebab_chunk.make_policy(target_tokens=..., ...)."
            )
        if self.media_type is not None and self.media_type not in TEXT_MEDIA_TYPES:
            raise ConfigurationError(
                f"media_type {self.media_type!r} cannot be read from text; use one of "
                f"{', '.join(TEXT_MEDIA_TYPES)}, or parse the file's bytes with "
                "kebab_chunk.parse_document and convert the chunks with the adapters."
            )
        self.parsers()  # UnknownParserVersionError: one sentence

    def parsers(self) -> ParserChoice:
        """Which parser version reads each media type (the defaults unless one is named)."""
        if self.parser_version is None:
            return ParserChoice()
        return ParserChoice.from_versions([self.parser_version])

    def chunker_for(self, label: str) -> Chunker:
        """The chunker of ``label``, made once per splitter (tokenizers load once)."""
        chunker = self._chunkers.get(label)
        if chunker is None:
            chunker = self._chunkers[label] = get_chunker(label)
        return chunker

    def source_uri(self, text: str, metadata: Mapping[str, Any]) -> str:
        """The name the text is chunked under (module doc, "Name")."""
        named = _first_string(metadata, SOURCE_KEYS)
        if named is not None:
            return named
        return "inline-" + content_hash(_utf8(text))[:16]

    def media_type_for(self, source_uri: str, metadata: Mapping[str, Any]) -> str:
        """The media type the text is parsed as (module doc, "Media type")."""
        if self.media_type is not None:
            return self.media_type
        stated = _first_string(metadata, MEDIA_TYPE_KEYS)
        if stated is not None:
            candidate: str | None = stated.partition(";")[0].strip().lower()
        else:
            candidate = detect_media_type(source_uri)
        if candidate is None:
            return DEFAULT_MEDIA_TYPE
        return candidate if candidate in TEXT_MEDIA_TYPES else "text/plain"

    def chunks(self, text: str, metadata: Mapping[str, Any] | None = None) -> list[Chunk]:
        """Parse ``text`` as the document ``metadata`` describes and chunk it."""
        if not isinstance(text, str):
            raise WrongTypeError(
                f"expected the document's text as a str, got {type(text).__name__}; "
                "decode it first, or parse a file's bytes with kebab_chunk.parse_document."
            )
        metadata = {} if metadata is None else metadata
        source_uri = self.source_uri(text, metadata)
        media_type = self.media_type_for(source_uri, metadata)
        label = self.chunker or DEFAULT_LABELS_BY_MEDIA_TYPE[media_type][0]
        document = self.parsers()(_utf8(text), source_uri, media_type)
        chunker = self.chunker_for(label)
        return with_embedding(chunker.chunk(document, self.policy), chunker, self.policy)


def _utf8(text: str) -> bytes:
    """The text's UTF-8 bytes (what a file holding it would contain)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordError(
            f"the text holds an unpaired surrogate at index {exc.start}, which UTF-8 cannot "
            "encode; decode the source with errors='replace' (or 'strict') instead of "
            "'surrogateescape'."
        ) from None
