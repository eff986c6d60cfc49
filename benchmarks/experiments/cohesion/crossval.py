"""2-fold cross-corpus selection over ``collect.py``'s output: pick the variant on one
corpus's questions, report it on the other's (an honest estimate of what choosing a
variant on this data is worth). Bands: each chunker averaged over its 3 settings nearest
the band centre; the peer side is the best of the peers per band.

    python -m benchmarks.experiments.cohesion.crossval OUT_DIR
"""

import json
import statistics as st
import sys
from pathlib import Path

ours = json.loads((Path(sys.argv[1]) / "ours.json").read_text())
peers = json.loads((Path(sys.argv[1]) / "peers.json").read_text())
corp = ours.pop("_corpus")
peers.pop("_corpus")
BANDS = [300, 480, 670]


def band_rows(rows, centre):
    return sorted(rows, key=lambda r: abs(r["mean"] - centre))[:3]


def score(rows, centre, qs, key="recall"):
    rs = band_rows(rows, centre)
    return 100 * st.mean(st.mean(r[key][i] for i in qs) for r in rs), st.mean(r["mean"] for r in rs)


groups = {c: [i for i, x in enumerate(corp) if x == c] for c in sorted(set(corp))}
allq = list(range(len(corp)))


def adv(name, qs):
    out = []
    for b in BANDS:
        r, m = score(ours[name], b, qs)
        best = max((score(p, b, qs)[0], n) for n, p in peers.items())
        iou = score(ours[name], b, qs, "iou")[0] - max(
            score(p, b, qs, "iou")[0] for p in peers.values()
        )
        out.append((r - best[0], m, iou))
    return out


print("variant: per band (recall adv vs best peer, mean chars, iou adv) on all / per corpus")
for name in ours:
    a = adv(name, allq)
    print(
        f"{name:18s}",
        " | ".join(f"{d:+.1f} {m:.0f} {i:+.1f}" for d, m, i in a),
        "  mean",
        f"{st.mean(x[0] for x in a):+.2f}",
        " ".join(f"{c[:5]} {st.mean(x[0] for x in adv(name, q)):+.2f}" for c, q in groups.items()),
    )
print("\n2-fold: choose on A (mean band adv), report on B")
for a, b in [tuple(groups), tuple(groups)[::-1]]:
    choice = max(ours, key=lambda n: st.mean(x[0] for x in adv(n, groups[a])))
    print(f"chosen on {a}: {choice}; on {b}:", [f"{x[0]:+.1f}" for x in adv(choice, groups[b])])
