"""Per-question recall and IoU of every cohesion variant, md-heading-v2 and the peers over
a size grid, as JSON for ``crossval.py``. Run from the repository root, one process per
part (give each its own ``KEBAB_EVAL_CACHE``):

    python -m benchmarks.experiments.cohesion.collect ours OUT_DIR
    python -m benchmarks.experiments.cohesion.collect peers OUT_DIR
"""

import json
import sys
from pathlib import Path

from benchmarks import bench_eval as be
from benchmarks.experiments.cohesion import harness as H
from benchmarks.experiments.cohesion.md_cohesion_exp import MdCohesionExpChunker as C
from kebab_chunk.eval import run
from kebab_chunk.eval.metrics import Retrieved, score_question

which = sys.argv[1]
TARGETS = [110, 123, 136, 150, 170, 185, 200, 220, 241, 260, 277, 295, 310, 336]
VARIANTS = {
    "md-heading-v2": None,
    "nocoh-pp": dict(prefer_paragraphs=True, cohesion=False),
}
for sc in ("similarity", "depth"):
    for w in (20, 40, 80, 120):
        for pp in (False, True):
            VARIANTS[f"{sc[:3]}-w{w}{'-pp' if pp else ''}"] = dict(
                score=sc, window=w, prefer_paragraphs=pp
            )
    for w in (40, 80, 120):
        VARIANTS[f"dp-{sc[:3]}-w{w}"] = dict(score=sc, window=w, search="dp")
out = {}
if which == "ours":
    for name, kw in VARIANTS.items():
        ch = None if kw is None else C(**kw)
        settings = [H.setting(name if ch else "md-heading-v2", ch, t) for t in TARGETS]
        res = H.evaluate(settings)
        out[name] = [
            dict(
                mean=r.mean_chars,
                chunks=r.chunks,
                recall=[s.recall for s in r.scores],
                iou=[s.iou for s in r.scores],
            )
            for r in res.results
        ]
        print(name, [round(100 * r.summary.recall, 1) for r in res.results], flush=True)
else:
    qv = run._embed(H.EMB, [q.question for q in H.QUESTIONS])
    for peer in be.PEERS:
        if "Token" in peer.name:
            continue
        rows = []
        for size in range(300, 1000, 30):
            idx, _ = be.peer_index(peer.build(size), H.CORPUS)
            cv = run._embed(H.EMB, [c.embed_text for c in idx])
            top = run._top_k(qv, cv, 5)
            sc = [
                score_question(
                    q.references,
                    q.corpus_id,
                    [Retrieved(idx[int(i)].corpus_id, idx[int(i)].ranges) for i in row],
                )
                for q, row in zip(H.QUESTIONS, top, strict=True)
            ]
            rows.append(
                dict(
                    size=size,
                    mean=sum(c.chars for c in idx) / len(idx),
                    chunks=len(idx),
                    recall=[s.recall for s in sc],
                    iou=[s.iou for s in sc],
                )
            )
        H.EMB.save()
        out[peer.name] = rows
        print(peer.name, flush=True)
out["_corpus"] = [q.corpus_id for q in H.QUESTIONS]
(Path(sys.argv[2]) / f"{which}.json").write_text(json.dumps(out))
