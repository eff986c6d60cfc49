"""HTML → CanonicalDocument (parser version ``html-v1``).

Exact-slice rule for HTML: a block's ``LineSpan`` covers the element's *source markup*
(from the ``<`` of its start tag to the ``>`` of its end tag, or to the end of its last
content when the end tag is implied), while its ``text`` is the *rendered* text (tags
removed, entities decoded, ASCII whitespace collapsed; ``<pre>`` kept as written). So
``decoded[span.char_start:span.char_end]`` is the markup a reader can look up, and
``text`` is what a browser shows for it.

Tokens come from :mod:`kebab_chunk.parsers.html_tokenizer`, which reproduces exactly the
token stream of the standard library's ``html.parser`` as of CPython 3.11.7 (what html-v1
was built on) in linear time and independently of the running interpreter. That tokenizer
was chosen because it reports where each token starts, which makes every span exact (lxml
gives only a line number and selectolax none); it is lenient (malformed markup becomes
text, not an error) and iterative, so 100,000 nested ``<div>`` cost no recursion. On top
of it, the builder (:mod:`._html_build`) keeps a small stack of the *structural* elements
only (blocks, lists, tables, dropped subtrees) and applies the HTML5 implied-end-tag rules
that matter for block boundaries (``<p>`` closed by a block, ``<li>`` by the next ``<li>``, table
cells and rows); inline elements are transparent, so mis-nested inline markup cannot
disturb the block structure. One deliberate departure: an unclosed heading ends at the
next paragraph, list, table or sectioning element (a browser would make the rest of the
page part of the heading).

Blocks: ``h1``–``h6`` → heading; ``p`` → paragraph; outermost ``ul``/``ol`` → one list
(nested lists indented in ``text``, every item in ``items``); ``pre`` → code (language
from a ``language-*``/``lang-*`` class); outermost ``table`` → table (header = first row
when it is in ``<thead>`` or made of ``<th>``); ``img`` → image reference, captioned by
its ``<figure>``'s ``<figcaption>``. Text outside those (``div``, ``blockquote``, ``td``
of layout markup...) becomes implicit paragraphs split at block boundaries, so no visible
text is lost. Dropped with their content: ``script``, ``style``, ``noscript``,
``template``, ``nav``, form controls, embedded objects, page-level ``header``/``footer``
(not those inside ``article``/``section``/``main``/``aside``), and elements marked
``hidden``, ``aria-hidden="true"``, ``display:none`` or with a navigation/banner/
contentinfo role. Images with neither alt text nor caption are decorative by HTML's own
rule and are skipped, counted in a warning.

The parser is split by job: :mod:`._html_charset` decodes the bytes, :mod:`.html_tokenizer`
turns the text into tokens with offsets, :mod:`._html_build` turns tokens into drafts with
the help of the collectors in :mod:`._html_collect`, and this module assembles the drafts
into the document (:mod:`._assemble`).
"""

from __future__ import annotations

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers._html_build import HtmlBuilder
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits
from kebab_chunk.parsers.html_tokenizer import HtmlTokenizer, MarkupError

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "HtmlParser"]

PARSER_VERSION = "html-v1"
MEDIA_TYPE = "text/html"

#: The decoder, under the name other modules import it by.
_decode = decode_html


class HtmlParser:
    """Parser ``html-v1``: exact markup spans, rendered text, boilerplate dropped."""

    version = PARSER_VERSION
    media_types = (MEDIA_TYPE,)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_html(raw, source_uri)
        builder = HtmlBuilder(text, source_uri, limits)
        try:
            HtmlTokenizer(text, builder).run()
        except (LimitExceededError, ParseError):
            raise
        except Exception as exc:  # a malformed <![ section (the only refusal), or a bug
            # html-v1's message names the exception of its original tokenizer, html.parser
            kind = "AssertionError" if isinstance(exc, MarkupError) else type(exc).__name__
            raise ParseError(
                f"{source_uri} could not be tokenized as HTML ({kind}: {exc}); "
                "check that the file is HTML or remove it from the corpus."
            ) from exc
        return assemble(raw, source_uri, text, warnings, builder, limits)


def assemble(
    raw: bytes,
    source_uri: str,
    text: str,
    warnings: list[str],
    builder: HtmlBuilder,
    limits: ParseLimits = DEFAULT_LIMITS,
) -> CanonicalDocument:
    """The document of a builder that has seen every token of ``text``.

    Each draft's span covers its markup, ``text[start:end]``; its lines are counted on the
    newline view, so ``\r\n``, ``\r`` and ``\n`` each end one line.
    """
    builder.finish()
    assembler = Assembler(raw, source_uri, MEDIA_TYPE, PARSER_VERSION, limits)
    lines = LineCounter(newline_view(text))
    for d in builder.drafts:
        span = LineSpan(
            line_start=lines.line_of(d.start),
            line_end=lines.line_of(max(d.end - 1, d.start)),
            char_start=d.start,
            char_end=d.end,
        )
        assembler.add_draft(d, d.text or d.caption or "", (span,))
    return assembler.finish([*warnings, *builder.warnings], title=builder.title)
