"""Memoising counters (``token_counter``): always exactly ``count_tokens``.

The fast path counts whitespace-separated pieces once and adds them up; it is only
correct because of how BERT-style tokenizers work (see the ``hf`` docstring). These
tests compare it with the plain count on adversarial text: every kind of Unicode
whitespace, control characters the normaliser deletes, combining marks, CJK,
special-token spellings, digits, long words.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kebab_chunk.tokenizers import get_tokenizer
from kebab_chunk.tokenizers import hf as hf_module
from kebab_chunk.tokenizers.base import SegmentCounter, token_counter

MINILM = "hf:all-MiniLM-L6-v2"
MEMOISING = [MINILM]
PY_SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]

# fmt: off
_FRAGMENTS = [
    "the", "re", "there", "un", "believ", "ably", "naïve", "Ünïcödé", "e\u0301", "\u0301",
    "\u0345", "東京", "データ", "문서", "🙂", "3.14", "12345", "'s", "'ll", "don't", "[MASK]",
    "[SEP]", "[CLS]", "<|endoftext|>", "\x00", "\ufffd", "\x07", "\u200b", "\u00ad", "...",
    "--", "|", "x" * 120, "a/b", "http://x.io/a?b=c",
]
# fmt: on
fragment = st.one_of(
    st.sampled_from(_FRAGMENTS),
    st.sampled_from(PY_SPACES),
    st.text(min_size=1, max_size=6),
)
texts = st.lists(fragment, max_size=40).map("".join)
_warm_counters = {name: token_counter(get_tokenizer(name)) for name in MEMOISING}


@pytest.mark.parametrize("name", MEMOISING)
@given(batch=st.lists(texts, min_size=1, max_size=6))
def test_counter_equals_count_tokens(name: str, batch: list[str]) -> None:
    tok = get_tokenizer(name)
    fresh, warm = token_counter(tok), _warm_counters[name]
    for text in batch:
        expected = tok.count_tokens(text)
        assert fresh(text) == expected
        assert warm(text) == expected  # a memo shared across many examples
        assert fresh(text) == expected  # second time: all from the memo


@pytest.mark.parametrize("name", MEMOISING)
@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=12))
def test_counter_on_slices_of_one_text(name: str, text: str, cuts: list[int]) -> None:
    """The chunkers' pattern: many overlapping slices of one text, counted in any order."""
    tok = get_tokenizer(name)
    count = token_counter(tok)
    for a, b in itertools.pairwise(cuts):
        piece = text[min(a, b) : max(a, b)]
        assert count(piece) == tok.count_tokens(piece)


def test_minilm_memoises_and_other_tokenizers_need_not() -> None:
    assert get_tokenizer(MINILM).word_additive  # type: ignore[attr-defined]
    for name in MEMOISING:
        assert isinstance(token_counter(get_tokenizer(name)), SegmentCounter)
    # Already cheap (proxy, chars) or cheaper cold than splitting (tiktoken): plain count.
    for name in ["bytes-3", "chars", "tiktoken:cl100k_base"]:
        tok = get_tokenizer(name)
        assert token_counter(tok) == tok.count_tokens


@pytest.mark.parametrize("space", PY_SPACES)
def test_every_python_space_either_separates_minilm_words_or_is_counted_whole(space: str) -> None:
    """``str.split`` cuts at each of these; the tokenizer must agree, or the text goes whole."""
    tok = get_tokenizer(MINILM)
    joined = tok.count_tokens(f"the{space}re")
    separates = joined == tok.count_tokens("the re")
    assert separates != (joined == tok.count_tokens("there"))  # the probe tells them apart
    assert separates == (space not in hf_module.JOINING_SPACES)
    assert token_counter(tok)(f"a the{space}re b") == tok.count_tokens(f"a the{space}re b")


def _variant(tmp_path: Path, name: str, edit: dict[str, object]) -> str:
    packaged = hf_module._packaged_file(MINILM, "all-MiniLM-L6-v2")
    data = json.loads(packaged.read_text(encoding="utf-8"))
    data.update(edit)
    path = tmp_path / name / "tokenizer.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    return f"hf:{path}"


def test_non_bert_tokenizer_files_keep_the_plain_count(tmp_path: Path) -> None:
    whitespace = _variant(tmp_path, "ws", {"pre_tokenizer": {"type": "Whitespace"}})
    metaspace = _variant(
        tmp_path,
        "meta",
        {"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}},
    )
    for name in (whitespace, metaspace):
        tok = hf_module.load_hf_tokenizer(name)
        assert not tok.word_additive
        assert token_counter(tok) == tok.count_tokens


def test_an_added_token_with_a_space_disables_memoising(tmp_path: Path) -> None:
    packaged = hf_module._packaged_file(MINILM, "all-MiniLM-L6-v2")
    data = json.loads(packaged.read_text(encoding="utf-8"))
    extra = dict(data["added_tokens"][-1], id=30522, content="new york", special=False)
    name = _variant(tmp_path, "added", {"added_tokens": [*data["added_tokens"], extra]})
    tok = hf_module.load_hf_tokenizer(name)
    assert not tok.word_additive
    assert token_counter(tok)("in new york") == tok.count_tokens("in new york")


def test_a_copy_of_minilm_elsewhere_memoises_too(tmp_path: Path) -> None:
    copy = tmp_path / "tokenizer.json"
    shutil.copy(hf_module._packaged_file(MINILM, "all-MiniLM-L6-v2"), copy)
    assert hf_module.load_hf_tokenizer(f"hf:{copy}").word_additive


def test_segment_counter_memory_stays_bounded() -> None:
    seen: list[str] = []

    def segment(piece: str) -> int:
        seen.append(piece)
        return len(piece)

    count = SegmentCounter(
        split=str.split, segment=segment, whole=len, base=1, max_entries=4, max_chars=5
    )
    words = [f"w{i}" for i in range(50)]
    assert count(" ".join(words)) == 1 + sum(map(len, words))
    assert len(count._memo) <= 50 and count("w1 w1") == 1 + 4
    for i in range(50):
        count(f"x{i} y{i}")
        assert len(count._memo) <= 4 + 2  # emptied when full; one text may add its pieces
    long = "z" * 6
    seen.clear()
    assert count(f"{long} {long}") == 1 + 12 and count(long) == 7
    assert seen == [long, long]  # too long to remember: counted again each time


_PRINTABLE = [chr(c) for c in range(0x21, 0x7F)]


def test_every_printable_ascii_pair_counts_like_the_library() -> None:
    """The ASCII shortcut re-states normalisation and pre-tokenisation: check all of it."""
    tok = get_tokenizer(MINILM)
    count = token_counter(tok)
    for a in _PRINTABLE:
        for b in ["", *_PRINTABLE]:
            assert count(f"x{a}{b}") == tok.count_tokens(f"x{a}{b}"), (a, b)


ascii_texts = st.lists(
    st.one_of(
        st.text(st.sampled_from(_PRINTABLE), min_size=1, max_size=12),
        st.sampled_from(["[MASK]", "[mask]", "[SEP]x", "a[CLS]", "[UNK", "Don't", "x" * 101, " "]),
    ),
    max_size=20,
).map("".join)


@given(text=ascii_texts)
def test_ascii_shortcut_equals_the_library(text: str) -> None:
    tok = get_tokenizer(MINILM)
    assert token_counter(tok)(text) == tok.count_tokens(text)
    assert _warm_counters[MINILM](text) == tok.count_tokens(text)


def test_a_cased_bert_file_is_not_lower_cased(tmp_path: Path) -> None:
    packaged = hf_module._packaged_file(MINILM, "all-MiniLM-L6-v2")
    data = json.loads(packaged.read_text(encoding="utf-8"))
    normalizer = dict(data["normalizer"], lowercase=False, strip_accents=False)
    tok = hf_module.load_hf_tokenizer(_variant(tmp_path, "cased", {"normalizer": normalizer}))
    assert tok.word_additive
    count = token_counter(tok)
    texts = ["Unbelievably Tokenization", "HELLO world", "Naïve Ünïcödé", "[MASK] ok", "x" * 120]
    for text in texts:
        assert count(text) == tok.count_tokens(text)
    uncased = get_tokenizer(MINILM)  # lower-casing would change this count: the probe bites
    assert tok.count_tokens(texts[0]) != uncased.count_tokens(texts[0])
