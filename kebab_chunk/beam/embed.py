# mypy: disallow-untyped-calls=False
"""Embedding chunks inside a Beam job, for corpora too large to embed on one machine.

``EmbedTexts`` takes ``(chunk_id, embed_text)`` pairs and gives ``(chunk_id, vector)``
pairs. Each distinct text is embedded once per job (pairs are grouped by the text's cache
key first, kebab_chunk/sync/cache.py), through Beam's ``RunInference`` with a
:class:`EmbedderHandler`: Beam batches the texts, loads the model once per worker process
and shares it between threads, and reports inference metrics. The embedder is built on the
worker from a picklable factory (default: the packaged all-MiniLM-L6-v2), because a loaded
model is neither small nor picklable.

``apache_beam.ml.transforms.embeddings`` (MLTransform with sentence-transformers) would
load the same models through torch, which this project does not install; RunInference
with our own handler runs the numpy encoder instead, with the same batching.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RunInference
from apache_beam.pvalue import PCollection

from kebab_chunk.sync.cache import text_key
from kebab_chunk.sync.embedders import Embedder, model_embedder

__all__ = ["EmbedTexts", "EmbedderHandler"]


class EmbedderHandler(ModelHandler[str, PredictionResult, Embedder]):
    """RunInference's model handler for a kebab-chunk embedder built by ``factory``."""

    def __init__(
        self, factory: Callable[[], Embedder] = model_embedder, batch_size: int = 64
    ) -> None:
        super().__init__()
        self._factory = factory
        self._batch_size = batch_size

    def load_model(self) -> Embedder:
        return self._factory()

    def run_inference(
        self, batch: Sequence[str], model: Embedder, inference_args: Any = None
    ) -> Iterable[PredictionResult]:
        vectors = model.embed(list(batch))
        return [
            PredictionResult(text, [float(x) for x in vector])
            for text, vector in zip(batch, vectors, strict=True)
        ]

    def batch_elements_kwargs(self) -> dict[str, int]:
        return {"min_batch_size": 1, "max_batch_size": self._batch_size}

    def share_model_across_processes(self) -> bool:
        return False


class EmbedTexts(beam.PTransform[PCollection[Any], PCollection[Any]]):
    """``(chunk_id, embed_text)`` -> ``(chunk_id, vector)``, each distinct text embedded once."""

    def __init__(
        self, factory: Callable[[], Embedder] = model_embedder, batch_size: int = 64
    ) -> None:
        super().__init__()
        self._handler = EmbedderHandler(factory, batch_size)

    def expand(self, pairs: PCollection[Any]) -> PCollection[Any]:
        keyed = pairs | "Key by text" >> beam.Map(lambda p: (text_key(p[1]), p))
        texts = pairs | "Text" >> beam.Map(lambda p: p[1]) | "Distinct texts" >> beam.Distinct()
        vectors = (
            texts
            | "Embed" >> RunInference(self._handler)
            | "Vector by text" >> beam.Map(lambda r: (text_key(r.example), r.inference))
        )
        joined: PCollection[Any] = (
            {"chunks": keyed, "vector": vectors}
            | "Join" >> beam.CoGroupByKey()
            | "Per chunk" >> beam.FlatMap(_per_chunk)
        )
        return joined


def _per_chunk(joined: tuple[str, dict[str, list[Any]]]) -> Iterable[tuple[str, list[float]]]:
    _, groups = joined
    (vector,) = groups["vector"]
    for chunk_id, _text in groups["chunks"]:
        yield chunk_id, vector
