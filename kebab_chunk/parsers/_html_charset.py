"""html-v1's decoding: UTF-8 (see :func:`~kebab_chunk.parsers.decode.decode_text`), else
the ``<meta charset>`` the bytes declare.

Bytes that are not valid UTF-8 are decoded again with the encoding a ``<meta charset>`` in
the first 4 KiB names (the legacy Latin-1 and ASCII labels meaning windows-1252, as
browsers read them); without a usable declaration the UTF-8 decoding with U+FFFD
replacement stands.
"""

from __future__ import annotations

import codecs
import re

from kebab_chunk.parsers.decode import decode_text

__all__ = ["decode_html"]

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_LEGACY_CHARSETS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252"}
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode_html(raw: bytes, source_uri: str) -> tuple[str, list[str]]:
    """decode_text, but bytes that are not UTF-8 use the ``<meta charset>`` they declare."""
    text, warnings = decode_text(raw, source_uri)
    if "\ufffd" not in text or raw.startswith(_BOMS):
        return text, warnings
    try:
        raw.decode("utf-8")
        return text, warnings  # genuine U+FFFD characters, nothing to repair
    except UnicodeDecodeError:
        pass
    match = _META_CHARSET.search(raw[:4096])
    if match is None:
        return text, warnings
    declared = match.group(1).decode("ascii").lower()
    encoding = _LEGACY_CHARSETS.get(declared, declared)
    try:
        redecoded = raw.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        return text, [*warnings, f"declared charset {declared!r} did not decode the bytes"]
    return redecoded, [f"not valid UTF-8; decoded as {encoding} as declared by <meta charset>"]
