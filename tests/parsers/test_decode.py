"""decode_text: the decoded text that every ``lines`` span indexes."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.errors import BinaryContentError
from kebab_chunk.parsers.decode import decode_text


def test_utf8_is_decoded_without_warnings_and_newlines_are_kept() -> None:
    assert decode_text("a\r\nb\rc\n東".encode(), "x.md") == ("a\r\nb\rc\n東", [])


def test_utf8_bom_is_stripped() -> None:
    assert decode_text(b"\xef\xbb\xbf# T", "x.md") == ("# T", [])


def test_invalid_utf8_is_replaced_and_warned() -> None:
    text, warnings = decode_text(b"ok \xff\xfe then \xe9 end", "x.md")
    assert text == "ok \ufffd\ufffd then \ufffd end"
    assert len(warnings) == 1
    assert "invalid UTF-8" in warnings[0] and "byte 3" in warnings[0]


def test_invalid_utf8_after_a_bom() -> None:
    text, warnings = decode_text(b"\xef\xbb\xbfa\xffb", "x.md")
    assert text == "a\ufffdb"
    assert warnings


def test_truncated_multibyte_sequence_at_the_end() -> None:
    text, warnings = decode_text("東".encode()[:2], "x.md")
    assert text == "\ufffd" and warnings


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_a_bom(encoding: str) -> None:
    bom = {
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
        "utf-32-le": codecs.BOM_UTF32_LE,
        "utf-32-be": codecs.BOM_UTF32_BE,
    }[encoding]
    text, warnings = decode_text(bom + "Grüße\r\n東".encode(encoding), "x.txt")
    assert text == "Grüße\r\n東"
    assert warnings and encoding[:6] in warnings[0]


def test_nul_bytes_without_a_bom_are_binary() -> None:
    with pytest.raises(BinaryContentError, match=r"blob\.md") as info:
        decode_text(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "blob.md")
    assert info.value.error_type == "binary_content"


def test_empty_input() -> None:
    assert decode_text(b"", "e.txt") == ("", [])


@given(st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"])))
def test_valid_utf8_round_trips(text: str) -> None:
    decoded, warnings = decode_text(text.encode("utf-8"), "x.md")
    if text.startswith("\ufeff"):
        text = text[1:]
    assert (decoded, warnings) == (text, [])


@given(st.binary(max_size=200).filter(lambda b: b"\x00" not in b))
def test_any_bytes_decode_like_the_spec_says(raw: bytes) -> None:
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return  # decoded as UTF-16/32 instead (tested above)
    text, warnings = decode_text(raw, "x.md")
    assert text == raw.decode("utf-8-sig", errors="replace")
    try:
        raw.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert bool(warnings) == (not valid)
