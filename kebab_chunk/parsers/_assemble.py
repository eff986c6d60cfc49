"""The document assembler every parser version shares: ids, heading paths, limits, record.

A parser finds its blocks in its own way (token regions, an event stream, a walked tree);
what it does with them is the same for every format and lives here, once:

* **block ids** are content-addressed, with a per-(kind, text) occurrence counter
  (:class:`~kebab_chunk.parsers.base.BlockIds`);
* **heading paths**: a heading closes every open section of its level or deeper and opens
  its own, and a block's ``heading_path`` is the titles of the open sections, outermost
  first (so a heading's own path ends with its title);
* **title fallback**: the title of the first level-1 heading is kept, for formats whose
  document title may come from the text (Markdown without a front-matter title);
* **limits**: the time budget (``ParseLimits.time_budget_s``) runs from the moment the
  assembler is made and is checked cooperatively (the Markdown parsers; PDF checks its
  budget between pages with a clock of its own, see :mod:`._pdf`); ``max_blocks`` is
  checked, and both are worded, here. Parsers default to ``base.DEFAULT_LIMITS``;
* **the record**: the :class:`CanonicalDocument` with the document id and content hash.

Blocks are made with :func:`~kebab_chunk.model.blocks.make_block`: every parser passes
values of exactly the schema's types (tuples of ``str``, a heading level 1-6, non-empty
span tuples), so re-validating them would only cost time. Parsers that collect blocks
before they know their heading path (HTML, DOCX, docling JSON) describe them as
:class:`Draft` records and hand them over with :meth:`Assembler.add_draft`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import (
    AudioRefBlock,
    CodeBlock,
    HeadingBlock,
    ImageRefBlock,
    ListBlock,
    ParagraphBlock,
    TableBlock,
    make_block,
)
from kebab_chunk.model.document import make_document
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import SourceSpan
from kebab_chunk.parsers.base import DEFAULT_LIMITS, BlockIds, ParseLimits

__all__ = ["AnyBlock", "Assembler", "Draft", "check_block_count", "clock"]

AnyBlock = (
    HeadingBlock
    | ParagraphBlock
    | ListBlock
    | CodeBlock
    | TableBlock
    | ImageRefBlock
    | AudioRefBlock
)

_B = TypeVar("_B", bound=AnyBlock)

_KINDS: dict[type[Any], str] = {
    cls: cls.model_fields["kind"].default
    for cls in (
        HeadingBlock,
        ParagraphBlock,
        ListBlock,
        CodeBlock,
        TableBlock,
        ImageRefBlock,
        AudioRefBlock,
    )
}


def clock() -> float:
    """Seconds on a monotonic clock: what the time budget is measured with."""
    return time.monotonic()


def check_block_count(
    count: int,
    limits: ParseLimits,
    source_uri: str,
    *,
    noun: str = "blocks",
    whole: str = "file",
) -> None:
    """Raise :class:`LimitExceededError` once ``count`` is over ``limits.max_blocks``.

    ``noun`` names what a format counts (blocks, paragraphs, CSV rows) and ``whole`` what
    the reader should split (a file, a document).
    """
    if count > limits.max_blocks:
        raise LimitExceededError(
            f"{source_uri} has more than {limits.max_blocks} {noun}; split the {whole} "
            "or raise ParseLimits.max_blocks."
        )


@dataclass
class Draft:
    """A block before its id and heading path are known; only its kind's fields matter.

    Parsers subclass it with where the block came from (offsets, element references) and
    with what they need while collecting it.
    """

    kind: str
    text: str
    level: int = 0
    ordered: bool = False
    items: Sequence[str] = ()
    language: str | None = None
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    alt: str = ""
    src: str = ""
    caption: str | None = None


class Assembler:
    """One document being assembled: its blocks in order, their ids and heading paths.

    Hot loops may read ``path`` and call ``ids.next`` directly; everything else goes
    through :meth:`add`, :meth:`add_heading` and :meth:`add_draft`.
    """

    def __init__(
        self,
        raw: bytes,
        source_uri: str,
        media_type: str,
        parser_version: str,
        limits: ParseLimits = DEFAULT_LIMITS,
    ) -> None:
        self.started = clock()
        self.raw = raw
        self.source_uri = source_uri
        self.media_type = media_type
        self.parser_version = parser_version
        self.limits = limits
        self.doc_id = doc_id(source_uri)
        self.ids = BlockIds(self.doc_id)
        self.blocks: list[AnyBlock] = []
        #: Titles of the open sections, outermost first: the next block's heading path.
        self.path: tuple[str, ...] = ()
        #: The title of the first level-1 heading, if any (a title fallback).
        self.first_h1: str | None = None
        self._sections: list[tuple[int, str]] = []  # open sections: (level, title)

    def check_time(self) -> None:
        """Stop cooperatively once the document has used up ``limits.time_budget_s``."""
        elapsed = clock() - self.started
        if elapsed > self.limits.time_budget_s:
            raise LimitExceededError(
                f"{self.source_uri} took {elapsed:.1f}s to parse, over time_budget_s="
                f"{self.limits.time_budget_s}; split the file or raise the budget."
            )

    def open_section(self, level: int, title: str) -> None:
        """A heading of ``level``: close the sections it ends, open its own."""
        sections = self._sections
        while sections and sections[-1][0] >= level:
            sections.pop()
        sections.append((level, title))
        self.path = tuple(title for _, title in sections)
        if level == 1 and self.first_h1 is None:
            self.first_h1 = title

    def add(self, cls: type[_B], text: str, spans: tuple[SourceSpan, ...], **details: Any) -> _B:
        """Append a block of ``cls`` under the current heading path; ``details`` are every
        field of ``cls`` beyond the common ones."""
        block = make_block(cls, self.ids.next(_KINDS[cls], text), text, self.path, spans, **details)
        self.blocks.append(block)
        return block

    def add_heading(self, level: int, title: str, text: str, spans: tuple[SourceSpan, ...]) -> None:
        """Open the heading's section, then append the heading (its path ends with it)."""
        self.open_section(level, title)
        self.add(HeadingBlock, text, spans, level=level, title=title)

    def add_draft(self, draft: Draft, text: str, spans: tuple[SourceSpan, ...]) -> None:
        """Append the block ``draft`` describes, with ``text`` (a heading's title is
        ``draft.text``) and its final ``spans``."""
        kind = draft.kind
        if kind == "heading":
            self.add_heading(draft.level, draft.text, text, spans)
        elif kind == "list":
            self.add(ListBlock, text, spans, ordered=draft.ordered, items=tuple(draft.items))
        elif kind == "code":
            self.add(CodeBlock, text, spans, language=draft.language)
        elif kind == "table":
            self.add(TableBlock, text, spans, header=draft.header, rows=draft.rows)
        elif kind == "image_ref":
            self.add(
                ImageRefBlock, text, spans, alt=draft.alt, src=draft.src, caption=draft.caption
            )
        else:
            self.add(ParagraphBlock, text, spans)

    def finish(
        self,
        warnings: Sequence[str],
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> CanonicalDocument:
        """The finished record: every block added so far, in order."""
        return make_document(
            doc_id=self.doc_id,
            source_uri=self.source_uri,
            media_type=self.media_type,
            content_hash=content_hash(self.raw),
            parser_version=self.parser_version,
            title=title,
            metadata={} if metadata is None else metadata,
            blocks=tuple(self.blocks),
            warnings=tuple(warnings),
        )
