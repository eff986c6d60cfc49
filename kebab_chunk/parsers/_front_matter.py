"""YAML front matter of Markdown files → JSON-safe document metadata.

Front matter is a ``---`` first line, not followed by a blank line (Pandoc's rule, so a
document that merely opens with a thematic break is not swallowed), then YAML up to a
``---`` or ``...`` line. Only a YAML mapping (or nothing) counts as front matter; YAML
that parses to a scalar or a list is ordinary Markdown. YAML that does not parse is still
taken out of the text, kept verbatim as ``{"front_matter_raw": ...}`` with a warning.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field

import yaml
from pydantic import JsonValue

__all__ = ["FrontMatter", "front_matter_end", "read_front_matter"]

_OPEN = re.compile(r"---[ \t]*\n(?![ \t]*\n)")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
#: A first YAML line that opens a block mapping: a plain key, a colon, then a blank or the
#: line's end. YAML that starts so is a mapping or does not parse, front matter either way.
_MAPPING_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*:(?:[ \t]|\n|$)")
#: Most YAML nodes converted before the front matter is kept raw instead (alias bombs).
_MAX_NODES = 100_000


@dataclass(frozen=True)
class FrontMatter:
    """Where the front matter ends in the source, and what it says."""

    end: int  # offset just after the closing line (and its line break)
    metadata: dict[str, JsonValue]
    warnings: list[str] = field(default_factory=list)


class _TooLarge(Exception):
    """The YAML expands to more nodes than we are willing to copy."""


def read_front_matter(text: str, view: str) -> FrontMatter | None:
    """Front matter at the start of ``text`` (``view`` is its newline view), or ``None``."""
    opening = _OPEN.match(view)
    if opening is None:
        return None
    closing = _CLOSE.search(view, opening.end())
    if closing is None:
        return None
    end = min(closing.end() + 1, len(text))
    source = text[opening.end() : closing.start()]
    try:
        loaded = yaml.safe_load(source)
    except (yaml.YAMLError, RecursionError) as exc:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return FrontMatter(
            end,
            {"front_matter_raw": source},
            [f"front matter is not valid YAML ({problem}); kept raw as front_matter_raw"],
        )
    if loaded is None:
        return FrontMatter(end, {})
    if not isinstance(loaded, dict):
        return None
    try:
        budget = [_MAX_NODES]
        metadata = {_key(k, budget): _json_value(v, budget) for k, v in loaded.items()}
    except (_TooLarge, RecursionError):
        return FrontMatter(
            end,
            {"front_matter_raw": source},
            ["front matter YAML is too large or too deeply nested; kept raw as front_matter_raw"],
        )
    return FrontMatter(end, metadata)


def front_matter_end(text: str, view: str) -> int:
    """Where the Markdown body starts: the ``end`` of :func:`read_front_matter`, else 0.

    For callers that need the body but not the metadata (the compiled core's chunk rows):
    the YAML is parsed only when its first line leaves open whether it is front matter at
    all (a scalar or a list is not); front matter whose first line opens a mapping is
    taken out whatever the rest holds, as :func:`read_front_matter` takes it out.
    """
    opening = _OPEN.match(view)
    if opening is None:
        return 0
    closing = _CLOSE.search(view, opening.end())
    if closing is None:
        return 0
    if _MAPPING_KEY.match(view, opening.end(), closing.start()):
        return min(closing.end() + 1, len(text))
    front = read_front_matter(text, view)
    return 0 if front is None else front.end


def _key(key: object, budget: list[int]) -> str:
    value = _json_value(key, budget)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _json_value(value: object, budget: list[int]) -> JsonValue:
    """A JSON-safe copy of a YAML value: dates as ISO strings, bytes as base64."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_key(k, budget): _json_value(v, budget) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_json_value(v, budget) for v in value), key=_sort_key)
    if isinstance(value, (list, tuple)):
        return [_json_value(v, budget) for v in value]
    return str(value)


def _sort_key(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True)
