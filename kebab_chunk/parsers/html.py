"""HTML → CanonicalDocument (parser version ``html-v1``).

The first HTML version: exact markup spans, rendered text, boilerplate dropped (scripts,
styles, ``<nav>``, navigation roles, page-level header and footer, hidden elements), and
nothing else left out. Its refusal of a malformed ``<![`` section names ``AssertionError``,
as the standard library's ``html.parser`` it was first built on did.

The decoding, tokenizing, block rules, spans and assembly every HTML version shares are in
:mod:`kebab_chunk.parsers._html` (whose docstring has the details); this version is that
engine with :data:`RULES`.
"""

from __future__ import annotations

from kebab_chunk.parsers._html import MEDIA_TYPE, HtmlEngine, HtmlRules

__all__ = ["MEDIA_TYPE", "PARSER_VERSION", "RULES", "HtmlParser"]

PARSER_VERSION = "html-v1"

#: html-v1's row: navigation beyond ``<nav>`` kept, html.parser's refusal wording.
RULES = HtmlRules(version=PARSER_VERSION, drop_navigation=False, refusal_names_assertion_error=True)


class HtmlParser(HtmlEngine):
    """Parser ``html-v1``: exact markup spans, rendered text, boilerplate dropped."""

    version = PARSER_VERSION

    def __init__(self) -> None:
        super().__init__(RULES)
