"""Block-granular chunks (``hybrid-v2`` with ``merge_peers=False``) against the peers, with
chunk sizes compared per document as well as pooled.

Why: one chunk per block keeps chunk ids stable under edits (README "Stable ids under
edits"), and pooled over the development data its mean size (~210 characters) sits beside
peers that it out-recalls by 5 to 9 points. But its sizes follow the documents' paragraphs:
short in one document, budget-long in another, while a peer's chunk size is the same
everywhere. This script asks whether the gain survives a comparison at comparable sizes in
each document. Run from the repository root (needs the ``bench`` and ``eval`` extras):

    python -m benchmarks.experiments.granularity.compare

Embeddings are cached by text (``KEBAB_EVAL_CACHE``, see the cohesion harness). Writes
``results.md`` beside this file.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks import bench_eval as be
from benchmarks.experiments.cohesion import harness as H
from kebab_chunk.eval import run
from kebab_chunk.eval.metrics import QuestionScore, Retrieved, score_question

HERE = Path(__file__).resolve().parent
OURS = [f"hybrid-v2:{t}:0{switch}" for switch in ("", ",no-merge-peers") for t in (128, 192, 256)]
PEER_SIZES = range(100, 1001, 20)
BAND = 0.15  # "comparable size": means within 15%


@dataclass(frozen=True)
class Row:
    """One chunker setting: per-corpus mean chunk size and per-question scores."""

    name: str
    mean: float
    mean_by_corpus: dict[str, float]
    scores: tuple[QuestionScore, ...]


def _means(indexed: Sequence[run.IndexedChunk]) -> tuple[float, dict[str, float]]:
    by: dict[str, list[int]] = {}
    for c in indexed:
        by.setdefault(c.corpus_id, []).append(c.chars)
    pooled = math.fsum(c.chars for c in indexed) / len(indexed)
    return pooled, {cid: statistics.fmean(sizes) for cid, sizes in by.items()}


def ours() -> list[Row]:
    settings = [run.parse_setting(s) for s in OURS]
    result = H.evaluate(settings)
    rows = []
    for setting, r in zip(settings, result.results, strict=True):
        pooled, by = _means(run._index_chunks(setting, H.CORPUS, "text"))
        rows.append(Row(setting.name, pooled, by, r.scores))
    return rows


def peers() -> list[Row]:
    qv = run._embed(H.EMB, [q.question for q in H.QUESTIONS])
    rows = []
    for peer in be.PEERS:
        for size in PEER_SIZES:
            indexed, _ = be.peer_index(peer.build(size), H.CORPUS)
            top = run._top_k(qv, run._embed(H.EMB, [c.embed_text for c in indexed]), 5)
            scores = tuple(
                score_question(
                    q.references,
                    q.corpus_id,
                    [Retrieved(indexed[int(i)].corpus_id, indexed[int(i)].ranges) for i in row],
                )
                for q, row in zip(H.QUESTIONS, top, strict=True)
            )
            pooled, by = _means(indexed)
            rows.append(Row(f"{peer.name} {size}", pooled, by, scores))
        H.EMB.save()
        print(peer.name, "done", flush=True)
    return rows


def _mean(scores: Sequence[QuestionScore], field: str, corpus: str | None) -> float:
    picked = [
        getattr(s, field)
        for q, s in zip(H.QUESTIONS, scores, strict=True)
        if corpus is None or q.corpus_id == corpus
    ]
    return 100 * statistics.fmean(picked)


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= BAND * a


def compare(ours_rows: list[Row], peer_rows: list[Row], corpus: str | None) -> list[str]:
    """Markdown rows: each of ours against the best-recall peer of comparable size, pooled
    (``corpus`` None: sizes and scores over everything) or within one corpus."""
    lines = []
    for o in ours_rows:
        size = o.mean if corpus is None else o.mean_by_corpus[corpus]
        near = [
            p
            for p in peer_rows
            if _near(size, p.mean if corpus is None else p.mean_by_corpus[corpus])
        ]
        r, i = _mean(o.scores, "recall", corpus), _mean(o.scores, "iou", corpus)
        if not near:
            lines.append(f"| {o.name} | {size:.0f} | {r:.1f} / {i:.1f} | no peer in range | |")
            continue
        best = max(near, key=lambda p: _mean(p.scores, "recall", corpus))
        pr, pi = _mean(best.scores, "recall", corpus), _mean(best.scores, "iou", corpus)
        psize = best.mean if corpus is None else best.mean_by_corpus[corpus]
        lines.append(
            f"| {o.name} | {size:.0f} | {r:.1f} / {i:.1f} | {best.name} ({psize:.0f}): "
            f"{pr:.1f} / {pi:.1f} | {r - pr:+.1f} / {i - pi:+.1f} |"
        )
    return lines


def main() -> None:
    ours_rows, peer_rows = ours(), peers()
    head = [
        "| ours | mean chars | recall / IoU % | best peer of comparable size (mean chars): "
        "recall / IoU % | Δ recall / Δ IoU |",
        "|---|---|---|---|---|",
    ]
    parts = [
        "# Block-granular chunks against the peers, pooled and per document\n",
        f"Generated by `python -m benchmarks.experiments.granularity.compare`; "
        f"{len(H.QUESTIONS)} questions, all-MiniLM-L6-v2, k=5, one index over both "
        f"documents; peers (LangChain recursive, semchunk, chonkie recursive and token) "
        f"at chunk sizes {PEER_SIZES.start}–{PEER_SIZES.stop - 1} chars in steps of "
        f"{PEER_SIZES.step}; comparable: mean size within {BAND:.0%}.\n",
        "## Pooled (the issue's rule: mean over all chunks)\n",
        *head,
        *compare(ours_rows, peer_rows, None),
    ]
    for cid in sorted(H.CORPUS):
        parts += [
            f"\n## {cid} only (its questions, its chunks' mean size)\n",
            *head,
            *compare(ours_rows, peer_rows, cid),
        ]
    (HERE / "results.md").write_text("\n".join(parts) + "\n", encoding="utf-8")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
