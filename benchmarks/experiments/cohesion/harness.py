"""Experiment harness: evaluate chunker instances (registered or not) and peers with the
same embedder, metric and index as kebab-chunk eval. Embeddings cached by text."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from kebab_chunk.chunkers import registry
from kebab_chunk.eval import run
from kebab_chunk.eval.bert import Embedder

DATA = Path(os.environ.get("KEBAB_EVAL_DATA", "../shared/eval/chunking-evaluation-dev"))
CACHE = Path(os.environ.get("KEBAB_EVAL_CACHE", "/tmp/cohesion-emb-cache.pkl"))

_EXTRA: dict[str, Any] = {}
_orig_get = registry.get_chunker


def _get(label: str) -> Any:
    if label in _EXTRA:
        return _EXTRA[label]
    return _orig_get(label)


run.get_chunker = _get  # type: ignore[assignment]


class CachingEmbedder:
    def __init__(self) -> None:
        self.inner: Embedder | None = None
        self.cache: dict[str, np.ndarray] = {}
        if CACHE.exists():
            self.cache = pickle.loads(CACHE.read_bytes())
        self.dirty = False

    def embed(self, texts):  # type: ignore[no-untyped-def]
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        pairs = zip(keys, texts, strict=True)
        missing = sorted({k: t for k, t in pairs if k not in self.cache}.items())
        if missing:
            if self.inner is None:
                self.inner = Embedder.load()
            vecs = self.inner.embed([t for _, t in missing])
            for (k, _), v in zip(missing, vecs, strict=False):
                self.cache[k] = v
            self.dirty = True
        return np.stack([self.cache[k] for k in keys])

    def save(self) -> None:
        if self.dirty:
            tmp = CACHE.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(self.cache))
            tmp.replace(CACHE)
            self.dirty = False


QUESTIONS = run.load_questions(DATA / "questions.csv")
CORPUS = run.load_corpus(DATA, QUESTIONS)
EMB = CachingEmbedder()


def setting(name: str, chunker: Any, target: int, overlap: int = 0):  # type: ignore[no-untyped-def]
    label = name
    if chunker is not None:
        _EXTRA[label] = chunker
    return run.parse_setting(f"{label}:{target}:{overlap}")


def evaluate(settings, k: int = 5):  # type: ignore[no-untyped-def]
    res = run.evaluate(QUESTIONS, CORPUS, settings, EMB, k=k)
    EMB.save()
    return res


def row(r) -> str:  # type: ignore[no-untyped-def]
    s = r.summary
    return (
        f"| {r.setting.name} | {r.chunks} | {r.mean_chars:.0f} | {100 * s.recall:.1f} | "
        f"{100 * s.precision:.1f} | {100 * s.iou:.1f} |"
    )


def peers_at(mean_levels, names=None):  # type: ignore[no-untyped-def]
    """Peers calibrated to each mean size; rows as (name, size, chunks, mean, summary)."""
    from benchmarks import bench_eval as be

    qv = run._embed(EMB, [q.question for q in QUESTIONS])
    out = []
    for peer in be.PEERS:
        if names and peer.name not in names:
            continue
        for size, mean in be.calibrate(peer, CORPUS, mean_levels):
            idx, _missing = be.peer_index(peer.build(size), CORPUS)
            summ = be.score_index(idx, QUESTIONS, qv, EMB, 5)
            out.append((peer.name, size, len(idx), mean, summ))
    EMB.save()
    return out
