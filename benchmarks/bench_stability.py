"""Edit stability of chunk ids: md-heading-v1 and hybrid-v1 under small corpus changes.

Each trial generates a varied 50-section Markdown document (prose, lists, code, tables,
quotes, images; ``benchmarks.corpus.markdown_document``) and measures the share of its
chunk ids that survive:

* ``edit_one_paragraph`` — one paragraph in the middle third gets a sentence appended
  (spliced into the source at the block's own span, so no other byte moves);
* ``append_section`` — a section is added at the end of the document;
* ``add_document`` — another document is added to the corpus (ids of the existing one);
* ``rerun_unchanged`` — the same bytes are chunked again.

Figures are percentages of the original document's chunk ids still present (median and
minimum over the trials), plus the ids changed per edit, under the default policy (and
md-heading-v1 once more without overlap). ``quick=True`` runs 5 trials
instead of 30.
"""

from __future__ import annotations

import random
import statistics
from typing import Any

from benchmarks.corpus import markdown_document
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.model import CanonicalDocument, ChunkPolicy, ParagraphBlock
from kebab_chunk.parsers.registry import parse_document

#: Figure name -> (label, policy). The overlap-free md-heading-v1 row shows where its edits
#: cost ids: overlap pieces are slices, whose ids carry their document-absolute offset.
CASES: dict[str, tuple[str, ChunkPolicy]] = {
    "md-heading-v1": ("md-heading-v1", ChunkPolicy()),
    "md-heading-v1 (overlap_tokens=0)": ("md-heading-v1", ChunkPolicy(overlap_tokens=0)),
    "hybrid-v1": ("hybrid-v1", ChunkPolicy()),
}
SECTIONS = 50
FULL_TRIALS, QUICK_TRIALS = 30, 5
EDIT = " This sentence was added by an editor."


def _parse(text: str, uri: str = "doc.md") -> CanonicalDocument:
    return parse_document(text.encode("utf-8"), uri)


def _ids(doc: CanonicalDocument, label: str, policy: ChunkPolicy) -> set[str]:
    return {c.chunk_id for c in get_chunker(label).chunk(doc, policy)}


def _edit_middle_paragraph(text: str, doc: CanonicalDocument, rng: random.Random) -> str:
    """The source with one paragraph of the middle third extended, spliced at its span."""
    paragraphs = [b for b in doc.blocks if isinstance(b, ParagraphBlock)]
    third = len(paragraphs) // 3
    block = rng.choice(paragraphs[third : max(third + 1, 2 * third)])
    end = block.spans[-1].char_end
    return text[:end] + EDIT + text[end:]


def _kept(before: set[str], after: set[str]) -> float:
    return 100.0 * len(before & after) / len(before) if before else 100.0


def _summary(values: list[float]) -> dict[str, float]:
    return {"median_%": statistics.median(values), "min_%": min(values)}


def run(quick: bool) -> dict[str, Any]:
    trials = QUICK_TRIALS if quick else FULL_TRIALS
    rng = random.Random(2024)
    kept: dict[str, dict[str, list[float]]] = {name: {} for name in CASES}
    changed_per_edit: dict[str, list[int]] = {name: [] for name in CASES}
    chunks_per_doc: dict[str, list[int]] = {name: [] for name in CASES}
    for _ in range(trials):
        text = markdown_document(rng, SECTIONS)
        doc = _parse(text)
        variants = {
            "edit_one_paragraph": _parse(_edit_middle_paragraph(text, doc, rng)),
            "append_section": _parse(text + "\n\n## Appendix\n\nOne more section.\n"),
            "rerun_unchanged": _parse(text),
        }
        other = _parse(markdown_document(rng, 5), "other.md")
        for case, (label, policy) in CASES.items():
            before = _ids(doc, label, policy)
            chunks_per_doc[case].append(len(before))
            for name, variant in variants.items():
                after = _ids(variant, label, policy)
                kept[case].setdefault(name, []).append(_kept(before, after))
                if name == "edit_one_paragraph":
                    changed_per_edit[case].append(len(before - after))
            # Adding a document: the existing document's ids, chunked beside the new one.
            corpus_ids = _ids(doc, label, policy) | _ids(other, label, policy)
            kept[case].setdefault("add_document", []).append(_kept(before, corpus_ids))
    return {
        "corpus": {"trials": trials, "sections_per_doc": SECTIONS},
        **{
            case: {
                "chunks_per_doc_median": statistics.median(chunks_per_doc[case]),
                "ids_changed_per_edit_median": statistics.median(changed_per_edit[case]),
                **{name: _summary(values) for name, values in kept[case].items()},
            }
            for case in CASES
        },
    }
