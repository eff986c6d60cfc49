"""The engine of the HTML parser versions (``html-v1``, ``html-v2``, ``html-v3``).

Every version it serves is a row of the registry with one
:class:`~kebab_chunk.parsers.rules.HtmlRules` value (every rule in which it differs from the
others); the rest is this module's, the same for every version. A new version is a new row,
never a copied module or an overridden step. What each version changed, and why:
docs/internals/parser-changes.md.

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
the help of the collectors in :mod:`._html_collect` (under ``drop_navigation``, the builder
of :mod:`._html_nav`, which also leaves navigation out), and this module assembles the
drafts into the document (:mod:`._assemble`).
"""

from __future__ import annotations

from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers._assemble import Assembler
from kebab_chunk.parsers._html_build import HtmlBuilder
from kebab_chunk.parsers._html_charset import decode_html
from kebab_chunk.parsers._html_nav import NavBuilder
from kebab_chunk.parsers._source import LineCounter, newline_view
from kebab_chunk.parsers.base import DEFAULT_LIMITS, ParseLimits, ParserVersion, VersionedParser
from kebab_chunk.parsers.html_tokenizer import HtmlTokenizer, MarkupError
from kebab_chunk.parsers.rules import HtmlRules

__all__ = ["MEDIA_TYPE", "HtmlEngine", "assemble"]

MEDIA_TYPE = "text/html"


class HtmlEngine(VersionedParser):
    """An HTML parser built from one version row (its
    :class:`~kebab_chunk.parsers.rules.HtmlRules`; see the module docstring); nothing else
    is meant to be overridden."""

    media_types = (MEDIA_TYPE,)

    def __init__(self, row: ParserVersion) -> None:
        super().__init__(row)
        self.rules = row.rules_as(HtmlRules)

    def parse(
        self, raw: bytes, source_uri: str, limits: ParseLimits = DEFAULT_LIMITS
    ) -> CanonicalDocument:
        text, warnings = decode_html(raw, source_uri)
        builder = (
            NavBuilder(text, source_uri, limits, self.rules)
            if self.rules.drop_navigation
            else HtmlBuilder(text, source_uri, limits)
        )
        try:
            HtmlTokenizer(text, builder).run()
        except (LimitExceededError, ParseError):
            raise
        except Exception as exc:  # a malformed <![ section (the only refusal), or a bug
            if not isinstance(exc, MarkupError):
                reason = f"{type(exc).__name__}: {exc}"
            elif self.rules.refusal_names_assertion_error:
                reason = f"AssertionError: {exc}"
            else:
                reason = str(exc)
            raise ParseError(
                f"{source_uri} could not be tokenized as HTML ({reason}); "
                "check that the file is HTML or remove it from the corpus."
            ) from exc
        return assemble(raw, source_uri, text, warnings, builder, limits, version=self.version)


def assemble(
    raw: bytes,
    source_uri: str,
    text: str,
    warnings: list[str],
    builder: HtmlBuilder,
    limits: ParseLimits = DEFAULT_LIMITS,
    *,
    version: str,
) -> CanonicalDocument:
    """The document (parser ``version``) of a builder that has seen every token of ``text``.

    Each draft's span covers its markup, ``text[start:end]``; its lines are counted on the
    newline view, so ``\r\n``, ``\r`` and ``\n`` each end one line. A
    :class:`~._html_nav.NavBuilder`'s counts of what it left out are the metadata.
    """
    builder.finish()
    assembler = Assembler(raw, source_uri, MEDIA_TYPE, version, limits)
    lines = LineCounter(newline_view(text))
    for d in builder.drafts:
        span = LineSpan(
            line_start=lines.line_of(d.start),
            line_end=lines.line_of(max(d.end - 1, d.start)),
            char_start=d.start,
            char_end=d.end,
        )
        assembler.add_draft(d, d.text or d.caption or "", (span,))
    metadata = builder.metadata if isinstance(builder, NavBuilder) else None
    return assembler.finish([*warnings, *builder.warnings], title=builder.title, metadata=metadata)
