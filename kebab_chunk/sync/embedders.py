"""The embedders ``sync`` can use, each named by an id that says which vectors it makes.

An embedder is anything with ``id`` (a string naming the model *and its weights*: vectors
from two embedders with one id must be interchangeable, because the cache and the store
trust it), ``dimensions`` and ``embed(texts)`` returning one vector per text. Three kinds:

- :func:`model_embedder` (the default): a local sentence-transformers folder of a BERT
  encoder run in numpy (:mod:`kebab_chunk.eval.bert`), the packaged all-MiniLM-L6-v2 when
  no folder is given. Its id is the model name and a blake3 digest of the files the
  encoder reads, so a retrained or swapped model in the same folder gets a new id.
- :func:`callable_embedder`: any function ``texts -> vectors`` (an API client, a GPU
  model), named by the id the caller gives.
- any object with the three members (:class:`Embedder`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import blake3

from kebab_chunk.errors import UsageError

__all__ = ["Embedder", "callable_embedder", "model_embedder", "resolve_embedder"]

#: The files kebab_chunk.eval.bert reads from a model folder (any sub-folder): what a
#: model embedder's id digests.
_MODEL_FILES = frozenset(
    {"config.json", "modules.json", "sentence_bert_config.json", "model.safetensors",
     "tokenizer.json"}
)


@runtime_checkable
class Embedder(Protocol):
    """What ``sync`` needs of an embedder."""

    @property
    def id(self) -> str:
        """Names the model and its weights (the cache and the store key vectors by it)."""
        ...

    @property
    def dimensions(self) -> int:
        """Floats per vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Any:
        """One vector (a sequence of ``dimensions`` floats) per text, in order."""
        ...


@dataclass(frozen=True)
class _Callable:
    id: str
    dimensions: int
    fn: Callable[[Sequence[str]], Any]

    def embed(self, texts: Sequence[str]) -> Any:
        return self.fn(texts)


def callable_embedder(
    fn: Callable[[Sequence[str]], Any], *, id: str, dimensions: int
) -> Embedder:
    """An embedder from a function ``texts -> vectors``; ``id`` must change whenever the
    vectors would (model name and version), or cached vectors of the old model are reused."""
    if not id or not isinstance(id, str):
        raise UsageError("callable_embedder needs a non-empty id naming the model and version.")
    if not isinstance(dimensions, int) or dimensions < 1:
        raise UsageError(
            f"callable_embedder dimensions must be a positive int, got {dimensions!r}."
        )
    return _Callable(id, dimensions, fn)


@dataclass(frozen=True)
class _Model:
    id: str
    dimensions: int
    model: Any  # kebab_chunk.eval.bert.Embedder

    def embed(self, texts: Sequence[str]) -> Any:
        return self.model.embed(texts)


def _folder_digest(folder: Path) -> str:
    hasher = blake3.blake3()
    for path in sorted(p for p in folder.rglob("*") if p.name in _MODEL_FILES and p.is_file()):
        hasher.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                hasher.update(block)
        hasher.update(b"\0")
    return hasher.hexdigest()[:16]


def model_embedder(path: str | Path | None = None) -> Embedder:
    """The numpy sentence-transformers embedder of a local model folder (None: the packaged
    all-MiniLM-L6-v2; needs the ``eval`` extra)."""
    from kebab_chunk.eval.bert import DEFAULT_MODEL
    from kebab_chunk.eval.bert import Embedder as Model

    model = Model.load(path)
    name = DEFAULT_MODEL if path is None else Path(path).name
    return _Model(f"{name}@{_folder_digest(model.folder)}", int(model.dim), model)


def resolve_embedder(spec: Embedder | str | os.PathLike[str] | None) -> Embedder:
    """``spec`` as an embedder: None is the default model, a path a model folder."""
    if spec is None or isinstance(spec, str | os.PathLike):
        return model_embedder(None if spec is None else Path(spec))
    if isinstance(spec, Embedder):
        return spec
    if callable(spec):
        raise UsageError(
            "a bare function cannot name its vectors; wrap it with "
            "kebab_chunk.sync.callable_embedder(fn, id='model-and-version', dimensions=N)."
        )
    raise UsageError(
        f"embedder must be None, a model folder or an object with id, dimensions and "
        f"embed(texts), got {type(spec).__name__}."
    )
