"""Bounded quotes of document text in warnings, error messages and log lines.

A message that quotes a heading, a header cell, a YAML tag or a declared charset must not
carry all of it: one 17 MB CSV whose header row was quoted in a chunker warning once made a
17 MB log line. Every message that quotes document text goes through :func:`quote` (one
text), :func:`quote_all` (a list of texts) or, as a last resort for a whole message,
:func:`cap`. Each leaves short text exactly as it was, so a message that fits today is not
changed by the bound: stored document warnings of ordinary documents stay byte-identical.
Text printed to a terminal (file names and messages in ``inspect`` and ``diff`` reports)
goes through :func:`safe_text`.

This module imports nothing from the package, so every layer (parsers, model, chunkers,
pipeline) may use it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_QUOTE_CHARS",
    "cap",
    "quote",
    "quote_all",
    "safe_text",
    "terminal_json",
]

#: Characters of one quoted text kept in a message (a heading, a cell, a name).
MAX_QUOTE_CHARS = 200
#: Characters of a whole warning or log message kept by :func:`cap`.
MAX_MESSAGE_CHARS = 1000
#: Texts of a list kept by :func:`quote_all`.
MAX_QUOTED_ITEMS = 3


def _more(count: int, what: str) -> str:
    return f"… ({count:,} more {what})"


def cap(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` itself when it has at most ``limit`` characters; else a prefix of it
    followed by ``… (N more characters)``, the whole at most ``limit`` characters.

    Idempotent (a capped message is returned unchanged), so a stored warning survives a
    round trip through a model that caps on construction.
    """
    if len(message) <= limit:
        return message
    # The marker's digit count depends on N, which depends on the marker's length: a bound
    # on the digits (the message's own length) keeps the whole within the limit.
    marker_room = len(_more(len(message), "characters"))
    kept = max(limit - marker_room, 0)
    return message[:kept] + _more(len(message) - kept, "characters")


def quote(text: str, limit: int = MAX_QUOTE_CHARS) -> str:
    """``repr(text)`` when ``text`` has at most ``limit`` characters; else the ``repr`` of its
    first ``limit`` characters followed by ``… (N more characters)``.

    Only the kept prefix is ever passed to ``repr``, so quoting a 17 MB text costs no more
    than quoting a short one.
    """
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + _more(len(text) - limit, "characters")


def quote_all(
    texts: Sequence[str], limit: int = MAX_QUOTE_CHARS, items: int = MAX_QUOTED_ITEMS
) -> str:
    """A list of texts as ``repr`` would show it (``['a', 'b']``) when there are at most
    ``items`` of them and each has at most ``limit`` characters; longer texts are cut as by
    :func:`quote`, and texts past the first ``items`` are counted, not shown."""
    shown = [quote(text, limit) for text in texts[:items]]
    if len(texts) > items:
        shown.append(_more(len(texts) - items, "texts"))
    return f"[{', '.join(shown)}]"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe_text(value: object) -> str:
    """``value`` as text with control characters escaped (file names and messages are
    untrusted: an escape sequence in one must not drive the user's terminal)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value)).replace("\n", " ")


#: What ``json.dumps(..., ensure_ascii=False)`` leaves raw that a terminal may act on: DEL
#: and the C1 controls (``\x9b`` starts an escape sequence on many terminals).
_RAW_IN_JSON = re.compile(r"[\x7f-\x9f]")


def terminal_json(value: object, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` with DEL and the C1 controls
    written as ``\\u00XX`` escapes: the same JSON value, safe to print (JSON already
    escapes the C0 controls)."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

