"""Plain text → CanonicalDocument (parser version ``text-plain-v1``).

A paragraph is a maximal run of lines that contain a non-whitespace character; lines that
are empty or whitespace only separate paragraphs. Each paragraph is one ParagraphBlock
whose ``text`` is exactly its source slice (whole lines, trailing whitespace dropped).
"""

from __future__ import annotations

import re

from kebab_chunk.errors import LimitExceededError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import ParagraphBlock
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import BlockIds, ParseLimits
from kebab_chunk.parsers.decode import decode_text

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "PlainTextParser"]

PARSER_VERSION = "text-plain-v1"
_DEFAULT_LIMITS = ParseLimits()
MEDIA_TYPE = "text/plain"

# One or more consecutive lines that each hold a non-whitespace character (newline view).
_PARAGRAPH = re.compile(r"(?:^[^\S\n]*\S[^\n]*(?:\n|\Z))+", re.MULTILINE)


class PlainTextParser:
    """Parser ``text-plain-v1``: blank-line separated paragraphs with exact spans."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = _DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_text(raw, source_uri)
        view = newline_view(text)
        the_doc_id = doc_id(source_uri)
        ids = BlockIds(the_doc_id)
        lines = LineCounter(view)
        blocks: list[ParagraphBlock] = []
        for match in _PARAGRAPH.finditer(view):
            start = match.start()
            body = text[start : match.end()].rstrip()
            end = start + len(body)
            if len(blocks) >= limits.max_blocks:
                raise LimitExceededError(
                    f"{source_uri} has more than {limits.max_blocks} paragraphs; split the "
                    "file or raise ParseLimits.max_blocks."
                )
            span = LineSpan(
                line_start=lines.line_of(start),
                line_end=lines.line_of(end - 1),
                char_start=start,
                char_end=end,
            )
            blocks.append(
                ParagraphBlock(block_id=ids.next("paragraph", body), text=body, spans=(span,))
            )
        return CanonicalDocument(
            doc_id=the_doc_id,
            source_uri=source_uri,
            media_type=MEDIA_TYPE,
            content_hash=content_hash(raw),
            parser_version=PARSER_VERSION,
            title=None,
            blocks=tuple(blocks),
            warnings=tuple(warnings),
        )
