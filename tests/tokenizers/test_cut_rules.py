"""Cut rules (``adds_up``): where a tokenizer's counts provably add up over a cut.

``hybrid-v1`` trusts them to count a heading prefix once and to derive a merged chunk's
count from its parts, so a wrong rule would silently give wrong ``token_estimate`` values
(and could let a chunk over budget). Each rule is checked against the library's own count
on every pair of characters it accepts from an alphabet of printable ASCII, whitespace,
controls and non-ASCII letters, marks and symbols, inside contexts chosen to provoke the
patterns (contractions, digit runs, symbol runs with line breaks, "/" after a break), and
on arbitrary text with hypothesis.
"""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers.base import cut_rule

RULED = ["hf:all-MiniLM-L6-v2", "tiktoken:cl100k_base", "tiktoken:o200k_base", "chars"]

# fmt: off
_ALPHABET = [
    *map(chr, range(0x20, 0x7F)), "\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\x85",
    "\x00", "\u00a0", "\u2028", "\u3000", "é", "É", "ß", "東", "한", "🙂", "\u0301", "\u200b",
    "\ufffd", "٣",
]
_LEFTS = ["", "a", "it", "it'", "12", "x.", "..", " ", "\n", "é", "Ab"]
_RIGHTS = ["", "a", "s", "re", "ll", "1", "234", ".", "/", "\n", " ", "  x", "'s", "é"]
# fmt: on


@pytest.mark.parametrize("name", RULED)
def test_every_accepted_pair_adds_up_in_provoking_contexts(name: str) -> None:
    tok = get_tokenizer(name)
    rule = cut_rule(tok)
    assert rule is not None
    count = functools.cache(tok.count_tokens)  # sides recur across pairs
    empty = count("")
    contexts = list(itertools.product(_LEFTS, _RIGHTS))
    if name == "chars":
        contexts = contexts[:3]  # lengths add up trivially; one sanity pass is enough
    elif name.startswith("hf:"):  # the BERT rule has no pattern to provoke; keep it quick
        contexts = list(itertools.product(_LEFTS[:5], _RIGHTS[:5]))
    accepted = 0
    for a, b in itertools.product(_ALPHABET, repeat=2):
        if not rule(a, b):
            continue
        accepted += 1
        for head, tail in contexts:
            left, right = head + a, b + tail
            assert count(left + right) == count(left) + count(right) - empty, (left, right)
    assert accepted > 200  # the rule is not vacuous


@pytest.mark.parametrize("name", RULED)
@given(left=st.text(min_size=1, max_size=30), right=st.text(min_size=1, max_size=30))
def test_accepted_cuts_add_up_on_any_text(name: str, left: str, right: str) -> None:
    tok = get_tokenizer(name)
    rule = cut_rule(tok)
    assert rule is not None
    if rule(left[-1], right[0]):
        count = tok.count_tokens
        assert count(left + right) == count(left) + count(right) - count("")


@pytest.mark.parametrize(
    ("name", "left", "right"),
    [
        ("tiktoken:cl100k_base", "end.", "\n\nNext"),  # "." takes the line breaks after it
        ("tiktoken:cl100k_base", "x(", "word"),  # a symbol may lead a word
        ("tiktoken:cl100k_base", "12", "3"),  # digits group by three
        ("tiktoken:o200k_base", "a.\n", "/"),  # o200k's symbol run takes "/" after breaks
        ("tiktoken:o200k_base", "it", "'s"),  # o200k attaches contractions
        ("tiktoken:cl100k_base", "it", "s"),  # letters run on
        ("hf:all-MiniLM-L6-v2", "un", "believable"),  # one word, one WordPiece run
    ],
)
def test_cuts_that_do_not_add_up_are_refused(name: str, left: str, right: str) -> None:
    tok = get_tokenizer(name)
    count = tok.count_tokens
    assert count(left + right) != count(left) + count(right) - count("")  # the case is real
    rule = cut_rule(tok)
    assert rule is not None and not rule(left[-1], right[0])


def test_tokenizers_without_a_proof_have_no_rule() -> None:
    assert cut_rule(get_tokenizer("bytes-3")) is None  # ceil(bytes / 3) does not add up
