"""The tokenizer protocol: the one question a token-aware chunker asks.

A tokenizer says how many tokens a text costs and what its model's limit is; nothing
else. Keeping the interface this small (text-splitter's ``ChunkSizer``, docling-core's
``BaseTokenizer``) lets the byte proxy, HuggingFace ``tokenizer.json`` files and tiktoken
encodings stand in for each other, and keeps sizing separate from where a chunker may cut.

Speed (optional): a tokenizer may also offer ``counter()``, a fresh function that returns
exactly ``count_tokens(text)`` but memoises what it learns (see :class:`SegmentCounter`).
Chunkers get their counting function through :func:`token_counter`, which falls back to
``count_tokens`` for tokenizers without one, and keep it for as long as the chunker object
lives, so a worker's chunker gets faster over a corpus while its output never changes.

Where counts add up (optional): a tokenizer may also offer ``adds_up(left, right)``, given
the last character of one text and the first of another: True only when, for *every* such
pair of texts, ``count(l + r) == count(l) + count(r) - count("")``, because the tokenizer
provably cuts there and treats each side as if it stood alone (whitespace for BERT word
pieces, a space after a non-space for tiktoken). Chunkers use it through :func:`cut_rule`
to count a heading prefix once per section and to know a merged chunk's count from its
parts, instead of counting the same text again. No rule means no cut is assumed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Counter",
    "CounterCache",
    "CutRule",
    "SegmentCounter",
    "Tokenizer",
    "cut_rule",
    "token_counter",
]

#: ``text -> tokens``, exactly ``Tokenizer.count_tokens``.
Counter = Callable[[str], int]
#: ``(last character of a left text, first character of a right text) -> counts add up``.
CutRule = Callable[[str, str], bool]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens for one model; ``name`` is the canonical policy value that loads it."""

    #: Canonical name, exactly as stored in ``ChunkPolicy.tokenizer`` (part of policy_hash).
    name: str
    #: The model's input limit in this tokenizer's tokens, or ``None`` when it has none.
    max_tokens: int | None

    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` costs when embedded as-is (0 or a constant for the empty text)."""
        ...


def token_counter(tokenizer: Tokenizer) -> Counter:
    """A fresh exact counting function: ``tokenizer.counter()``, else ``count_tokens``."""
    make = getattr(tokenizer, "counter", None)
    if callable(make):
        counter: Counter = make()
        return counter
    return tokenizer.count_tokens


def cut_rule(tokenizer: Tokenizer) -> CutRule | None:
    """The tokenizer's ``adds_up`` rule, or None when it proves no cut."""
    rule = getattr(tokenizer, "adds_up", None)
    return rule if callable(rule) else None


class CounterCache:
    """One :func:`token_counter` per tokenizer, for the life of the object that holds it.

    Chunkers hold one, so their memos warm up over a corpus. It pickles empty (Beam ships
    chunkers to workers): memos and tokenizers are rebuilt where they are used.
    """

    def __init__(self, make: Callable[[Tokenizer], Counter] | None = None) -> None:
        self._make = token_counter if make is None else make  # tests pass plain counting
        self._held: dict[str, tuple[Tokenizer, Counter]] = {}

    def get(self, tokenizer: Tokenizer) -> Counter:
        """The counting function for ``tokenizer`` (made on first use)."""
        held = self._held.get(tokenizer.name)
        if held is None or held[0] is not tokenizer:
            held = self._held[tokenizer.name] = (tokenizer, self._make(tokenizer))
        return held[1]

    def __getstate__(self) -> dict[str, Any]:
        return {"make": self._make}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._make = state["make"]
        self._held = {}


class SegmentCounter:
    """Exact counts from memoised segment counts, for tokenizers that are additive over a split.

    Some tokenizers provably cost the same for a text as for its pieces counted apart:
    ``count(text) == base + sum(segment(s) for s in split(text))``. For them the pieces
    (words, mostly) repeat so much that counting each distinct piece once and looking
    the rest up is many times cheaper than tokenising every text a chunker measures (a
    token-budget search measures overlapping candidates of the same text). Which split
    is safe is the tokenizer's business (see ``tokenizers.hf``); ``whole`` handles
    texts the split must not be trusted on (``unsafe(text)``). Pieces longer than
    ``max_chars`` are counted without being remembered, and the memo is emptied when it
    reaches ``max_entries``, so memory stays bounded on any corpus.
    """

    def __init__(
        self,
        *,
        split: Callable[[str], list[str]],
        segment: Counter,
        whole: Counter,
        base: int,
        unsafe: Callable[[str], bool] | None = None,
        max_entries: int = 1 << 16,
        max_chars: int = 256,
    ) -> None:
        self._split = split
        self._segment = segment
        self._whole = whole
        self._base = base
        self._unsafe = unsafe
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._memo: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if self._unsafe is not None and self._unsafe(text):
            return self._whole(text)
        pieces = self._split(text)
        memo = self._memo
        try:  # the common case: every piece seen before, summed at C speed
            return self._base + sum(map(memo.__getitem__, pieces))
        except KeyError:
            pass
        if len(memo) >= self._max_entries:
            memo.clear()
        total = self._base
        get = memo.get
        long: list[str] = []
        for piece in pieces:  # one pass: cheaper than collecting the missing pieces first
            tokens = get(piece)
            if tokens is None:
                tokens = memo[piece] = self._segment(piece)
                if len(piece) > self._max_chars:
                    long.append(piece)
            total += tokens
        for piece in long:
            memo.pop(piece, None)  # counted once for this text, not remembered
        return total
