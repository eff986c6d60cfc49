"""The chunker protocol, the label row every engine is built from, and the one place a
``Chunk`` record is assembled.

A chunker is a pure function of ``(CanonicalDocument, ChunkPolicy)``: no I/O, no Beam, no
parser imports. An engine is built from one :class:`Label` row of the registry and reads
everything that tells its labels apart from that row. Building records through
:func:`make_chunk` keeps the id recipe, the token estimate and the copied document fields
identical across chunkers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from kebab_chunk.chunkers.embedding import HeadingRule
from kebab_chunk.chunkers.embedding import embed_text as recipe_text
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, SourceSpan
from kebab_chunk.model._base import trusted
from kebab_chunk.model.ids import chunk_id, slice_id_policy
from kebab_chunk.model.spans import ElementSpan, LineSpan, PageSpan
from kebab_chunk.tokenizers import estimate_tokens

__all__ = ["Chunker", "Label", "LabelledChunker", "ParserNeeds", "make_chunk", "needs_of"]

_R = TypeVar("_R")


@runtime_checkable
class Chunker(Protocol):
    """What the registry hands out for a version label."""

    #: The immutable label, e.g. ``md-heading-v3`` (stored in every chunk as
    #: ``chunker_version``, the record's name for it).
    label: str
    #: One line saying which documents the chunker accepts (shown by ``kebab-chunk labels``).
    accepts_description: str
    #: The ``policy.tokenizer`` values that shape this chunker's output: ``None`` when it
    #: counts with whatever tokenizer the policy names, else the few it sizes chunks with.
    #: Any other tokenizer leaves its chunks as they are, yet still changes their ids (the
    #: tokenizer is part of ``policy_hash``), so the command line refuses or warns.
    uses_tokenizers: frozenset[str] | None

    def accepts(self, doc: CanonicalDocument) -> bool:
        """Whether ``chunk(doc, ...)`` is within this chunker's contract."""
        ...

    def chunk(self, doc: CanonicalDocument, policy: ChunkPolicy) -> list[Chunk]:
        """All chunks of ``doc`` in document order (``position`` 0, 1, ...)."""
        ...

    def embed_text(self, chunk: Chunk, policy: ChunkPolicy | None = None) -> str:
        """The one text to embed for ``chunk``, a chunk this label made (docs/internals/
        contract.md, "The text to embed"); ``policy`` is the one it was made with."""
        ...


@dataclass(frozen=True)
class Label:
    """One row of the registry: a version label and everything that makes its output.

    ``engine``: the chunker class that makes the label, as ``"module:Class"`` (imported only
    when the label is used). ``rules``: the engine's frozen rules value
    (:mod:`kebab_chunk.chunkers.rules`), ``None`` for an engine with one label.
    ``accepts``: which documents it takes. ``tokenizers``: the ``policy.tokenizer`` values
    that shape its output (``None``: any). ``summary``: what its chunks are, one line.
    """

    name: str
    engine: str
    rules: object | None
    accepts: str
    tokenizers: frozenset[str] | None
    summary: str

    @property
    def description(self) -> str:
        """``accepts: summary``, the line ``kebab-chunk labels`` shows."""
        return f"{self.accepts}: {self.summary}"

    def rules_as(self, kind: type[_R]) -> _R:
        """This row's rules, checked to be the ``kind`` an engine reads."""
        if not isinstance(self.rules, kind):
            raise TypeError(f"label {self.name} has rules {self.rules!r}, not {kind.__name__}")
        return self.rules


class LabelledChunker:
    """What every engine takes from its label row (the label, stored in every chunk, the
    line ``kebab-chunk labels`` shows and the tokenizers it uses), and the default text to
    embed: the shared recipe under the engine's ``embed_headings`` rule."""

    #: Which heading path lines the default ``embed_text`` leaves out (an engine's rules
    #: may say otherwise, as md-heading-v3's do).
    embed_headings: HeadingRule = "first-line"

    def __init__(self, row: Label) -> None:
        self.row = row
        self.label = row.name
        self.accepts_description = row.description
        self.uses_tokenizers = row.tokenizers

    def embed_text(self, chunk: Chunk, policy: ChunkPolicy | None = None) -> str:
        """The heading path lines the text lacks, the captions, then the text
        (:func:`kebab_chunk.chunkers.embedding.embed_text`); the policy changes nothing."""
        return recipe_text(chunk, self.embed_headings)


@dataclass(frozen=True)
class ParserNeeds:
    """The parser versions whose blocks a label chunks, for a label that takes documents of
    one media type from some of its parsers only (a chunker's ``needs`` attribute).

    It lets a refusal name the parser to pin instead of a bare "not accepted": pdf-page-v1
    takes only paragraphs, and the default PDF parser (pdf-text-v2) makes headings from
    a PDF's outline.
    """

    media_type: str
    parsers: tuple[str, ...]

    def refusal(self, label: str, doc: CanonicalDocument) -> str | None:
        """One sentence naming the parser to pin when ``doc`` is of this media type but was
        parsed by another parser; None when pinning a parser would not help."""
        if doc.media_type != self.media_type or doc.parser_version in self.parsers:
            return None
        pin = self.parsers[0]
        return (
            f"{label} needs blocks from parser {' or '.join(self.parsers)}, but "
            f"{doc.source_uri} was parsed by {doc.parser_version}; pass --parsers {pin} "
            f"(parser_version={pin!r} in the library)"
        )


def needs_of(chunker: object) -> ParserNeeds | None:
    """The chunker's :class:`ParserNeeds`, or None when any parser's documents will do."""
    needs = getattr(chunker, "needs", None)
    return needs if isinstance(needs, ParserNeeds) else None


def make_chunk(
    doc: CanonicalDocument,
    *,
    chunker_version: str,
    policy: ChunkPolicy,
    position: int,
    text: str,
    block_ids: Sequence[str],
    spans: Sequence[SourceSpan],
    heading_path: Sequence[str] = (),
    captions: Sequence[str] = (),
    is_slice: bool = False,
    slice_start: int | None = None,
    token_estimate: int | None = None,
) -> Chunk:
    """Assemble one record with its content-addressed id.

    ``is_slice`` marks a chunk that is one of several slices of the same block(s); its id
    then uses ``f"{policy_hash}#c{char_start}"`` of its first span (docs/internals/contract.md,
    "Identities") so sibling slices never collide. ``slice_start`` overrides that
    offset where the first span cannot tell siblings apart: pieces of rendered text all
    cite their block's whole span, and the item spans of a DOCX list each start at 0 of
    their own paragraph, so there the block's first ``char_start`` plus the offset inside
    the block's text names the slice (for exact source slices the two are equal; see
    docs/internals/decisions.md, "Slice ids use the offset in the block's text").
    ``token_estimate`` defaults to the byte proxy of ``text``.
    """
    plain = policy.policy_hash
    start = spans[0].char_start if slice_start is None else slice_start
    id_policy = slice_id_policy(plain, start) if is_slice else plain
    values: dict[str, Any] = {
        "chunk_id": chunk_id(doc.doc_id, chunker_version, block_ids, id_policy),
        "doc_id": doc.doc_id,
        "source_uri": doc.source_uri,
        "chunker_version": chunker_version,
        "policy_hash": plain,
        "parser_version": doc.parser_version,
        "position": position,
        "text": text,
        "heading_path": tuple(heading_path),
        "captions": tuple(captions),
        "block_ids": tuple(block_ids),
        "source_spans": tuple(spans),
        "token_estimate": estimate_tokens(text) if token_estimate is None else token_estimate,
        "content_hash": doc.content_hash,
        "embed_text": None,
        "embed_tokens": None,
    }
    if _already_valid(values):
        return trusted(Chunk, values, set(_CHUNK_FIELDS))
    return Chunk(**values)


_CHUNK_FIELDS = frozenset(Chunk.model_fields)
_STR_FIELDS = (
    "chunk_id",
    "doc_id",
    "source_uri",
    "chunker_version",
    "policy_hash",
    "parser_version",
    "text",
    "content_hash",
)
_SPAN_CLASSES = frozenset((LineSpan, PageSpan, ElementSpan))


def _already_valid(values: dict[str, Any]) -> bool:
    """Whether validating ``values`` as a ``Chunk`` would keep every value exactly as it is.

    True when every value already has the field's exact type (plain ``str``, ``int``,
    tuples of ``str``, span model instances) and meets its constraints; then the record
    is assembled without re-validating (about five times faster, see docs/internals/decisions.md).
    Anything else (a str subclass, a span given as a dict, a negative position) takes the
    validating constructor, which converts it or raises exactly as before.
    """
    for name in _STR_FIELDS:
        if values[name].__class__ is not str:
            return False
    position, tokens = values["position"], values["token_estimate"]
    if position.__class__ is not int or tokens.__class__ is not int or position < 0 or tokens < 0:
        return False
    spans = values["source_spans"]
    if not spans:
        return False
    for span in spans:
        if span.__class__ not in _SPAN_CLASSES:
            return False
    for item in values["block_ids"]:
        if item.__class__ is not str:
            return False
    for item in values["heading_path"]:
        if item.__class__ is not str:
            return False
    return all(item.__class__ is str for item in values["captions"])  # usually empty
