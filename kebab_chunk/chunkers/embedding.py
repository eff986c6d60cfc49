"""The one text to embed per chunk, for every label: ``embed_text`` and ``embed_tokens``.

Labels differ in what ``text`` holds: md-heading chunks that open a section start with the
heading line, hybrid-v1 and hierarchical-v1 keep headings out of ``text`` and count tokens
of a contextualised string, PDF pages have no headings at all. A user who embeds ``text``
therefore embeds different things per file type. ``embed_text`` is the same recipe for
every label (docs/contract.md, "The text to embed"): the heading path, outermost first, then
the captions, then the text, one per line; a heading the text already opens with is not
repeated. A chunker may define ``embed_text(chunk, policy) -> str`` to say otherwise
(hybrid-v2 to hybrid-v4 shorten context lines that would not fit the budget).

``embed_tokens`` is that text's token count under the run's tokenizer (the policy's), so
it can be checked against a model's input limit without re-tokenising.

These are computed after chunking, outside the chunker, so no label's chunks (and no golden
snapshot) change; the pipeline, the ``chunk`` command and the integrations all use
:func:`with_embedding`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kebab_chunk.chunkers.contextualize import contextualize_parts
from kebab_chunk.model import Chunk, ChunkPolicy
from kebab_chunk.tokenizers import get_tokenizer

__all__ = ["embed_text", "with_embedding"]

#: An ATX heading line (``## Title``, optional closing ``#``s) or the first line of a setext
#: heading, whose title is compared with the chunk's innermost heading.
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def _opens_with(text: str, heading: str) -> bool:
    """Whether ``text``'s first line is the heading ``heading`` (ATX, setext or plain)."""
    first = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    match = _ATX.match(first)
    title = match.group(1) if match else first
    return title.strip() == heading.strip()


def embed_text(chunk: Chunk) -> str:
    """The default text to embed: context lines the text lacks, then the text."""
    headings: Sequence[str] = chunk.heading_path
    if headings and _opens_with(chunk.text, headings[-1]):
        headings = headings[:-1]
    return contextualize_parts(headings, chunk.captions, chunk.text)


def with_embedding(chunks: Sequence[Chunk], chunker: object, policy: ChunkPolicy) -> list[Chunk]:
    """``chunks`` with ``embed_text`` and ``embed_tokens`` filled in.

    ``chunker`` is the chunker that made them (its own ``embed_text`` method wins over the
    default recipe); tokens are counted with ``policy.tokenizer``.
    """
    if not chunks:
        return []
    own = getattr(chunker, "embed_text", None)
    count = get_tokenizer(policy.tokenizer).count_tokens
    done = []
    for chunk in chunks:
        text = own(chunk, policy) if callable(own) else embed_text(chunk)
        done.append(chunk.model_copy(update={"embed_text": text, "embed_tokens": count(text)}))
    return done
