"""Bytes → text for the text formats, degrading with a warning instead of dropping text.

Offsets in ``lines`` spans index the string returned here, with no newline translation:
UTF-8 (BOM stripped) when the bytes are valid UTF-8; UTF-16/32 when a BOM says so; else
UTF-8 with U+FFFD replacement characters and a warning. Bytes that look binary (NUL bytes
without a UTF-16/32 BOM) raise :class:`BinaryContentError`.
"""

from __future__ import annotations

import codecs

from kebab_chunk.errors import BinaryContentError

__all__ = ["decode_text"]

_SNIFF_BYTES = 8192
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(raw: bytes, source_uri: str) -> tuple[str, list[str]]:
    """Decode ``raw``; returns the text and the warnings to record on the document."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            text = raw.decode(encoding, errors="replace")
            warnings = [f"decoded as {encoding} (byte order mark found)"]
            if "\ufffd" in text:
                warnings.append(f"invalid {encoding} sequences replaced with U+FFFD")
            return text, warnings
    if b"\x00" in raw[:_SNIFF_BYTES]:
        raise BinaryContentError(
            f"{source_uri} contains NUL bytes and looks binary, not text; "
            "remove it from the corpus or give it the right extension."
        )
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8-sig", errors="replace")
        return text, [f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced with U+FFFD"]
