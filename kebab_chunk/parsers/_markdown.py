"""What both Markdown parser versions share (``md-mistune-v1``, ``md-pyromark-v1``).

The two versions find top-level blocks with different libraries but promise the same
document: the same decoding and front matter (:mod:`._front_matter`), the same title rule
(the front matter's ``title`` when it is a string, else the first level-1 heading's) and
the same image-only rule (a paragraph that is exactly one image becomes an image
reference, or an audio reference when its target is an audio file). Each version
subclasses :class:`MarkdownParserBase` and adds only its blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mistune.helpers import unescape_char

from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.blocks import AudioRefBlock, ImageRefBlock
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers._front_matter import read_front_matter
from kebab_chunk.parsers._source import newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, VersionedParser
from kebab_chunk.parsers.decode import decode_text

__all__ = ["MEDIA_TYPE", "MarkdownParserBase", "MarkdownSource", "media_ref"]

MEDIA_TYPE = "text/markdown"

_AUDIO_EXTENSIONS = (".mp3", ".wav", ".ogg", ".m4a", ".flac")
_IMAGE_ONLY = re.compile(
    r"!\[(?P<alt>(?:[^\[\]\\]|\\.)*)\]"
    r"\(\s*(?P<src><[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))+)"
    r"(?:\s+(?P<title>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?"
    r"\s*\)",
    re.DOTALL,
)


@dataclass
class MarkdownSource:
    """A decoded Markdown file: its text, newline view, front matter and warnings so far."""

    text: str
    view: str  # same length as ``text``, every line break a "\n" (see _source.newline_view)
    body_start: int  # where the Markdown starts: after the front matter, else 0
    metadata: dict[str, Any]
    warnings: list[str]


class MarkdownParserBase(VersionedParser):
    """A Markdown parser version: decode, read the front matter, let the version add the
    blocks (:meth:`add_blocks`), title the document. Built from its version row.

    The time budget runs from the start of :meth:`parse` and is checked once more after
    the blocks are added.
    """

    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        assembler = Assembler(raw, source_uri, MEDIA_TYPE, self.version, limits)
        text, warnings = decode_text(raw, source_uri)
        view = newline_view(text)
        front = read_front_matter(text, view)
        if front is None:
            source = MarkdownSource(text, view, 0, {}, warnings)
        else:
            warnings.extend(front.warnings)
            source = MarkdownSource(text, view, front.end, front.metadata, warnings)
        self.add_blocks(source, assembler)
        assembler.check_time()
        title = source.metadata.get("title")
        if not isinstance(title, str):
            title = assembler.first_h1
        return assembler.finish(source.warnings, title=title, metadata=source.metadata)

    def add_blocks(self, source: MarkdownSource, assembler: Assembler) -> None:
        """Add the blocks of ``source`` (from ``source.body_start`` on) to ``assembler``;
        warnings go to ``source.warnings``."""
        raise NotImplementedError


def media_ref(
    text: str, assembler: Assembler, span: LineSpan
) -> ImageRefBlock | AudioRefBlock | None:
    """Add an image-only paragraph as an image (or, for an audio file, an audio) reference.

    Returns the block added, or None (and adds nothing) when ``text`` is not one image.
    """
    if not text.lstrip().startswith("!["):
        return None
    match = _IMAGE_ONLY.fullmatch(text.strip())
    if match is None:
        return None
    alt = unescape_char(match["alt"])
    src = match["src"]
    src = unescape_char(src[1:-1] if src.startswith("<") else src)
    title = unescape_char(match["title"][1:-1]) if match["title"] else None
    bare = src.split("#", 1)[0].split("?", 1)[0].lower()
    if bare.endswith(_AUDIO_EXTENSIONS):
        return assembler.add(AudioRefBlock, text, (span,), src=src, caption=alt or title or None)
    return assembler.add(ImageRefBlock, text, (span,), alt=alt, src=src, caption=title or None)
