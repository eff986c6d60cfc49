"""Plain text → CanonicalDocument (parser version ``text-plain-v1``).

A paragraph is a maximal run of lines that contain a non-whitespace character; lines that
are empty or whitespace only separate paragraphs. Each paragraph is one ParagraphBlock
whose ``text`` is exactly its source slice (whole lines, trailing whitespace dropped).
"""

from __future__ import annotations

import re

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import ParagraphBlock
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler, check_block_count
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, VersionedParser
from kebab_chunk.parsers.decode import decode_text

__all__ = ["MEDIA_TYPE", "PlainTextParser"]

MEDIA_TYPE = "text/plain"

# One or more consecutive lines that each hold a non-whitespace character (newline view).
_PARAGRAPH = re.compile(r"(?:^[^\S\n]*\S[^\n]*(?:\n|\Z))+", re.MULTILINE)


class PlainTextParser(VersionedParser):
    """Parser ``text-plain-v1``: blank-line separated paragraphs with exact spans (built
    from its version row)."""

    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_text(raw, source_uri)
        view = newline_view(text)
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, self.version, limits)
        lines = LineCounter(view)
        for count, match in enumerate(_PARAGRAPH.finditer(view), start=1):
            check_block_count(count, limits, source_uri, noun="paragraphs")
            start = match.start()
            body = text[start : match.end()].rstrip()
            end = start + len(body)
            span = LineSpan(
                line_start=lines.line_of(start),
                line_end=lines.line_of(end - 1),
                char_start=start,
                char_end=end,
            )
            assembler.add(ParagraphBlock, body, (span,))
        return assembler.finish(warnings)
