"""The one text to embed per chunk, for every label: ``embed_text`` and ``embed_tokens``.

Labels differ in what ``text`` holds: md-heading chunks that open a section start with the
heading line, hybrid-v1 and hierarchical-v1 keep headings out of ``text`` and count tokens
of a contextualised string, PDF pages have no headings at all. A user who embeds ``text``
therefore embeds different things per file type. ``embed_text`` is the same recipe for
every label (docs/internals/contract.md, "The text to embed"): the heading path, outermost
first, then the captions, then the text, one per line; a heading the text already opens with is not
repeated. Which headings count as "already in the text" is the chunker's ``embed_headings``
rule (:data:`HeadingRule`; ``"first-line"`` when it has none): up to md-heading-v2 only the
innermost heading, when the text's first line is it, so a chunk that opens with two
headings (``## A`` then ``### B``) repeated the outer one; md-heading-v3's ``"leading"``
leaves out every heading the text opens with (docs/internals/versioning.md). Every
chunker's ``embed_text(chunk, policy)`` (part of the chunker protocol) is this recipe under
its rule unless its engine says otherwise (hybrid-v2 to hybrid-v4 shorten context lines
that would not fit the budget).

``embed_tokens`` is that text's token count under the run's tokenizer (the policy's), so
it can be checked against a model's input limit without re-tokenising.

These are computed after chunking, outside the chunker, so no label's chunks (and no golden
snapshot) change; the pipeline, the ``chunk`` command and the integrations all use
:func:`with_embedding`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.tokenizers import get_tokenizer

if TYPE_CHECKING:
    from kebab_chunk.chunkers.base import Chunker

__all__ = ["HeadingRule", "embed_text", "open_headings", "with_embedding"]

#: Which heading path lines ``embed_text`` leaves out because the text already holds them.
#: ``"first-line"``: the innermost heading, when the text's first line is it (ATX, setext
#: or plain). ``"leading"``: the headings the text opens with that are still open after
#: the last of them (:func:`open_headings`), as far as the heading path ends with their
#: titles (whitespace runs collapsed), or with a prefix of a title (md-heading-v3 records a
#: heading line over its bound cut to a prefix, ``_context.bound_line``); a text that opens
#: with no heading line is treated as under ``"first-line"``.
HeadingRule = Literal["first-line", "leading"]

#: An ATX heading line (``## Title``, optional closing ``#``s) or the first line of a setext
#: heading, whose title is compared with the chunk's innermost heading.
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
#: The underline of a setext heading: ``===`` (level 1) or ``---`` (level 2).
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _first_title(text: str) -> str:
    """The title of ``text``'s first line: an ATX heading's, else the line (setext, plain)."""
    first = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    match = _ATX.match(first)
    return (match.group(2) if match else first).strip()


def _norm(title: str) -> str:
    """A title with its whitespace runs collapsed, as the parsers write ``heading_path``."""
    return " ".join(title.split())


def _leading_headings(text: str) -> list[tuple[int, str]]:
    """``(level, title)`` of each heading line ``text`` opens with, in order.

    From the first line on, blank lines skipped: an ATX heading line gives its level and
    title (without the ``#`` marks), lines followed by a setext underline give level 1
    (``=``) or 2 (``-``) and those lines joined by a space; the first other line ends them.
    """
    lines = text.lstrip("\ufeff").splitlines()
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        match = _ATX.match(lines[i])
        if not lines[i].strip():
            i += 1
            continue
        if match:
            found.append((len(match.group(1)), _norm(match.group(2))))
            i += 1
            continue
        end = i
        while end < len(lines) and lines[end].strip() and not _SETEXT.match(lines[end]):
            end += 1
        underline = _SETEXT.match(lines[end]) if i < end < len(lines) else None
        if underline is None:
            break  # a paragraph (or a lone underline): the headings end here
        level = 1 if underline.group(1).startswith("=") else 2
        found.append((level, _norm(" ".join(lines[i:end]))))
        i = end + 1
    return found


def open_headings(text: str) -> list[str]:
    """The titles of the headings ``text`` opens with that are still open after the last of
    them, outermost first (a heading closes the ones before it of its level or deeper)."""
    stack: list[tuple[int, str]] = []
    for level, title in _leading_headings(text):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    return [title for _, title in stack]


def _unrepeated(headings: Sequence[str], text: str, rule: HeadingRule) -> Sequence[str]:
    """``headings`` less the innermost ones ``text`` already holds, under ``rule``."""
    opened = open_headings(text) if rule == "leading" else []
    if not opened:
        if headings and _first_title(text) == headings[-1].strip():
            return headings[:-1]
        return headings
    keep = len(headings)
    while keep and opened and _names(opened[-1], _norm(headings[keep - 1])):
        keep -= 1
        opened.pop()
    return headings[:keep]


def _names(title: str, line: str) -> bool:
    """Whether the text's opening heading ``title`` is the heading path ``line``: the same
    title, or the title cut to ``line`` (a heading line over md-heading-v3's bound)."""
    return title == line or (bool(line) and title.startswith(line))


def embed_text(chunk: Chunk, rule: HeadingRule = "first-line") -> str:
    """The default text to embed: context lines the text lacks (``rule``), then the text."""
    headings = _unrepeated(chunk.heading_path, chunk.text, rule)
    return contextualize_parts(headings, chunk.captions, chunk.text)


def with_embedding(
    chunks: Sequence[Chunk], chunker: Chunker, policy: ChunkPolicy
) -> list[Chunk]:
    """``chunks`` with ``embed_text`` and ``embed_tokens`` filled in.

    ``chunker`` is the chunker that made them (its ``embed_text``, under ``policy``); tokens
    are counted with ``policy.tokenizer``.
    """
    if not chunks:
        return []
    count = get_tokenizer(policy.tokenizer).count_tokens
    done = []
    for chunk in chunks:
        text = chunker.embed_text(chunk, policy)
        done.append(chunk.model_copy(update={"embed_text": text, "embed_tokens": count(text)}))
    return done
