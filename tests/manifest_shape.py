"""Checks a written manifest against the types of ``kebab_chunk.output.manifest``.

A key the writer adds or drops without the types following (or the reverse) fails: each
``TypedDict`` section's required keys must all be there, and no key may be there that the
section does not name.
"""

from __future__ import annotations

from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

from kebab_chunk.output.manifest import Manifest


def problems(value: Any, kind: Any = Manifest, where: str = "manifest") -> list[str]:
    """Every place where ``value`` leaves the shape ``kind`` describes (sections only; the
    scalars are JSON's and not checked here)."""
    found: list[str] = []
    if is_typeddict(kind):
        if not isinstance(value, dict):
            return [f"{where} is not an object"]
        hints = get_type_hints(kind)
        missing = set(kind.__required_keys__) - set(value)
        extra = set(value) - set(hints)
        found += [f"{where}.{key} is missing" for key in sorted(missing)]
        found += [f"{where}.{key} is not in {kind.__name__}" for key in sorted(extra)]
        for key in sorted(set(value) & set(hints)):
            found += problems(value[key], hints[key], f"{where}.{key}")
        return found
    origin, args = get_origin(kind), get_args(kind)
    if origin is list and args and isinstance(value, list):
        for i, item in enumerate(value):
            found += problems(item, args[0], f"{where}[{i}]")
    elif origin is dict and len(args) == 2 and isinstance(value, dict):
        for key, item in value.items():
            found += problems(item, args[1], f"{where}.{key}")
    elif args and origin not in (list, dict):  # a union such as ``SnapshotSection | None``
        sections = [arg for arg in args if is_typeddict(arg)]
        if sections and value is not None:
            found += problems(value, sections[0], where)
    return found
