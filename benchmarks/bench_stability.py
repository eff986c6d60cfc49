"""Edit stability of chunk ids: how many ids survive a small edit, per chunker label.

Two parts.

**Generated documents** (the original figures; names kept). Each trial generates a varied
50-section Markdown document (prose, lists, code, tables, quotes, images;
``benchmarks.corpus.markdown_document``) and measures the share of its chunk ids that
survive:

* ``edit_one_paragraph`` — one paragraph in the middle third gets a sentence appended
  (spliced into the source at the block's own span, so no other byte moves);
* ``append_section`` — a section is added at the end of the document;
* ``add_document`` — another document is added to the corpus (ids of the existing one);
* ``rerun_unchanged`` — the same bytes are chunked again.

Figures are percentages of the original document's chunk ids still present (median and
minimum over the trials), plus the ids changed per edit, under the default policy (and
md-heading-v1 once more without overlap), for every case of :data:`CASES` whose label is
registered. ``quick=True`` runs 5 trials instead of 30.

**Real documents** (``real``). The installed distributions' Markdown READMEs, the fixtures'
Markdown and the Markdown files under ``/usr/share/doc`` (``.md`` and ``.md.gz``; skipped
when absent; nothing is downloaded), deduplicated by content. Every document gets one random
single edit of each kind (:data:`EDIT_KINDS`), chosen with a generator seeded by the
document's name and the kind, and spliced into the decoded source at the chosen block's
own span, so no other byte moves:

* ``insert_paragraph`` — a new paragraph (:data:`NEW_PARAGRAPH`) before a random
  top-level paragraph (at the start of its line);
* ``delete_paragraph`` — a random top-level paragraph's text is removed;
* ``change_paragraph`` — one word (4+ ASCII letters) of a random paragraph is replaced;
* ``rename_heading`` — the first word of a random heading's title gets a prefix.

For every case of :data:`REAL_CASES` (policy at :data:`REAL_TARGET_TOKENS` target tokens)
and edit kind: median and mean survival (share of the document's chunks before the edit
whose id is still present after it with the same embedded content: text, heading path,
captions; a kept id whose heading context changed must be embedded again) and the share of
files keeping >= 95%, over all files and per corpus (``by_corpus``), and the mean chunk
size in tokens. Beside each figure is the **ideal**: the survival if exactly the chunks
whose source spans overlap the edited characters changed (for an insertion, the chunks
whose span strictly contains the insertion point; for a renamed heading, the chunks
overlapping its section) — what a chunker with perfectly local ids and boundaries keeps.
A document that has no block of the needed kind, or no chunks, does not count for that
kind. A full run writes ``benchmarks/results/stability.json`` and ``stability.md``
(``stability-quick.*`` with ``quick=True``, which uses a ~150 KB subset of each corpus).
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from benchmarks import corpora
from benchmarks.corpus import markdown_document
from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.model import (
    CanonicalDocument,
    Chunk,
    ChunkPolicy,
    HeadingBlock,
    ParagraphBlock,
    SourceSpan,
)
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import parse_document

#: Figure name -> (label, policy), generated documents. The overlap-free md-heading-v1 row
#: shows where its edits cost ids: overlap pieces are slices, whose ids carry their
#: document-absolute offset. Cases whose label is not registered are left out.
CASES: dict[str, tuple[str, ChunkPolicy]] = {
    "md-heading-v1": ("md-heading-v1", ChunkPolicy()),
    "md-heading-v1 (overlap_tokens=0)": ("md-heading-v1", ChunkPolicy(overlap_tokens=0)),
    "hybrid-v1": ("hybrid-v1", ChunkPolicy()),
    "md-heading-v2": ("md-heading-v2", ChunkPolicy()),
    "hybrid-v2": ("hybrid-v2", ChunkPolicy()),
}
SECTIONS = 50
FULL_TRIALS, QUICK_TRIALS = 30, 5
EDIT = " This sentence was added by an editor."

#: Target tokens of every real-document case (the issue's measurement, default tokenizer).
REAL_TARGET_TOKENS = 256
_P = ChunkPolicy(target_tokens=REAL_TARGET_TOKENS)
#: Figure name -> (label, policy), real documents. Extend this list for a new label; cases
#: whose label is not registered are reported as ``not registered`` and skipped.
REAL_CASES: dict[str, tuple[str, ChunkPolicy]] = {
    "md-heading-v1": ("md-heading-v1", _P),
    "md-heading-v1 (overlap_tokens=0)": (
        "md-heading-v1",
        _P.model_copy(update={"overlap_tokens": 0}),
    ),
    "md-heading-v2": ("md-heading-v2", _P),
    "md-heading-v2 (merge_peers=False)": (
        "md-heading-v2",
        _P.model_copy(update={"merge_peers": False}),
    ),
    "hybrid-v1": ("hybrid-v1", _P),
    "hybrid-v2": ("hybrid-v2", _P),
    "hybrid-v2 (merge_peers=False)": ("hybrid-v2", _P.model_copy(update={"merge_peers": False})),
}
EDIT_KINDS = ("insert_paragraph", "delete_paragraph", "change_paragraph", "rename_heading")
#: The paragraph ``insert_paragraph`` adds (a word no real document uses keeps it unique,
#: so it cannot share a block id with an existing paragraph).
NEW_PARAGRAPH = (
    "Kebabeditmarker: this paragraph was inserted by an editor to measure how many chunk "
    "ids survive a small change. It is about as long as a typical paragraph of prose, a "
    "few sentences, so packing chunkers have to make room for it."
)
USR_SHARE_DOC = Path("/usr/share/doc")
QUICK_BYTES = 150_000
RESULTS = Path(__file__).resolve().parent / "results"

_WORD = re.compile(r"\b[A-Za-z]{4,}\b")
_HEADING_WORD = re.compile(r"[ \t]{0,3}(?:#{1,6}[ \t]+)?(\S+)")


# --- generated documents (the original figures) ------------------------------------------


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


def _registered(cases: dict[str, tuple[str, ChunkPolicy]]) -> dict[str, tuple[str, ChunkPolicy]]:
    labels = set(registered_labels())
    return {name: case for name, case in cases.items() if case[0] in labels}


def run_generated(quick: bool) -> dict[str, Any]:
    """The generated-document figures (see the module docstring)."""
    cases = _registered(CASES)
    trials = QUICK_TRIALS if quick else FULL_TRIALS
    rng = random.Random(2024)
    kept: dict[str, dict[str, list[float]]] = {name: {} for name in cases}
    changed_per_edit: dict[str, list[int]] = {name: [] for name in cases}
    chunks_per_doc: dict[str, list[int]] = {name: [] for name in cases}
    for _ in range(trials):
        text = markdown_document(rng, SECTIONS)
        doc = _parse(text)
        variants = {
            "edit_one_paragraph": _parse(_edit_middle_paragraph(text, doc, rng)),
            "append_section": _parse(text + "\n\n## Appendix\n\nOne more section.\n"),
            "rerun_unchanged": _parse(text),
        }
        other = _parse(markdown_document(rng, 5), "other.md")
        for case, (label, policy) in cases.items():
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
            for case in cases
        },
    }


# --- real documents: single edits spliced at block spans ---------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``replacement`` (an insertion when start == end).

    ``section_end`` is set for a renamed heading: the end of its section, whose every chunk
    carries the heading in its ``heading_path`` and so in the text it embeds.
    """

    kind: str
    start: int
    end: int
    replacement: str
    section_end: int | None = None

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]

    def touches(self, spans: Sequence[SourceSpan]) -> bool:
        """Whether a chunk with these spans overlaps the edited characters.

        A chunk covers the characters from its first span's start to its last span's end
        (the gaps between the blocks it joins included); an insertion touches it when it
        falls strictly inside that range. A renamed heading touches every chunk that
        overlaps its section: the heading is in their embedded context.
        """
        lo, hi = min(s.char_start for s in spans), max(s.char_end for s in spans)
        if self.section_end is not None:
            return lo < self.section_end and self.start < hi
        if self.start == self.end:
            return lo < self.start < hi
        return lo < self.end and self.start < hi


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _paragraphs(doc: CanonicalDocument) -> list[ParagraphBlock]:
    return [b for b in doc.blocks if isinstance(b, ParagraphBlock)]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _section_end(doc: CanonicalDocument, index: int, text_end: int) -> int:
    """Where the section of the heading at ``doc.blocks[index]`` ends: the start of the
    next heading of the same or a higher level, else the end of the text."""
    level = cast(HeadingBlock, doc.blocks[index]).level
    for b in doc.blocks[index + 1 :]:
        if isinstance(b, HeadingBlock) and b.level <= level:
            return b.spans[0].char_start
    return text_end


def _embedded(chunk: Chunk) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """What a chunk's embedding is made of (its ``embed_text`` is built from these)."""
    return chunk.text, tuple(chunk.heading_path), tuple(chunk.captions)


def surviving(old: Sequence[Chunk], new: Sequence[Chunk]) -> int:
    """How many of ``old`` need no new embedding: the same ``chunk_id`` is in ``new`` with
    the same embedded content. An id alone is not enough: a label whose id leaves out the
    heading context keeps its ids under a renamed heading while the text to embed changes
    (``kebab-chunk diff`` calls those ``modified``)."""
    after = {c.chunk_id: _embedded(c) for c in new}
    return sum(after.get(c.chunk_id) == _embedded(c) for c in old)


def choose_edit(text: str, doc: CanonicalDocument, kind: str, rng: random.Random) -> Edit | None:
    """One random single edit of ``kind`` on ``text`` (the source ``doc`` was parsed from),
    at a top-level block's own span; None when the document has no block to edit."""
    if kind in ("insert_paragraph", "delete_paragraph"):
        paragraphs = _paragraphs(doc)
        if not paragraphs:
            return None
        block = rng.choice(paragraphs)
        start = _line_start(text, block.spans[0].char_start)
        if kind == "delete_paragraph":
            return Edit(kind, start, block.spans[-1].char_end, "")
        nl = _newline(text)
        return Edit(kind, start, start, NEW_PARAGRAPH + nl + nl)
    if kind == "change_paragraph":
        words = [
            (m.start(), m.end())
            for b in _paragraphs(doc)
            if len(b.spans) == 1
            for m in _WORD.finditer(text, b.spans[0].char_start, b.spans[0].char_end)
            if m.group() != "revised"
        ]
        if not words:
            return None
        start, end = rng.choice(words)
        return Edit(kind, start, end, "revised")
    if kind == "rename_heading":
        spots = []
        for i, b in enumerate(doc.blocks):
            if isinstance(b, HeadingBlock) and b.title.strip():
                m = _HEADING_WORD.match(text, b.spans[0].char_start, b.spans[0].char_end)
                if m is not None:
                    spots.append((m.start(1), m.end(1), _section_end(doc, i, len(text))))
        if not spots:
            return None
        start, end, section_end = rng.choice(spots)
        return Edit(kind, start, end, "Renamed-" + text[start:end], section_end)
    raise ValueError(f"unknown edit kind {kind!r}; use one of {', '.join(EDIT_KINDS)}")


def _usr_share_doc(root: Path = USR_SHARE_DOC) -> corpora.Corpus:
    """Markdown files under ``/usr/share/doc`` (``.md``, ``.md.gz``), deduplicated, UTF-8
    text only; an empty corpus when the directory is absent."""
    seen: set[bytes] = set()
    docs = []
    paths = (
        sorted(
            (p for p in root.rglob("*") if p.name.endswith((".md", ".md.gz")) and p.is_file()),
            key=lambda p: p.as_posix(),
        )
        if root.is_dir()
        else []
    )
    for path in paths:
        try:
            raw = path.read_bytes()
            if path.name.endswith(".gz"):
                raw = gzip.decompress(raw)
            raw.decode("utf-8")
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError):
            continue
        if b"\x00" in raw or raw in seen or not raw.strip():
            continue
        seen.add(raw)
        name = path.relative_to(root).as_posix().removesuffix(".gz")
        docs.append(corpora.Document(f"usr-share-doc/{name}", raw))
    return corpora.Corpus(
        "usr-share-doc", "text/markdown", tuple(docs), f"*.md and *.md.gz under {root}"
    )


def real_corpora(quick: bool) -> list[corpora.Corpus]:
    """The real Markdown corpora, in a fixed order (quick: a subset of each)."""
    found = [corpora.distribution_readmes(), corpora.fixture_markdown(), _usr_share_doc()]
    found = [c for c in found if c.n_documents]
    return [corpora.subset(c, QUICK_BYTES) for c in found] if quick else found


@dataclass
class _Tally:
    """Per-document survival figures of one (case, edit kind)."""

    kept: list[float]
    ideal: list[float]
    chunks: list[int]
    sources: list[str]  # the corpus of each file


def _chunk_fn(label: str, policy: ChunkPolicy) -> Callable[[CanonicalDocument], list[Chunk]]:
    chunker = get_chunker(label)
    return lambda doc: chunker.chunk(doc, policy)


def _stats(values: list[float]) -> dict[str, float | None]:
    """Median, mean and the share of files keeping >= 95% (None when no file counted)."""
    if not values:
        return {"median_%": None, "mean_%": None, "files_ge95_%": None}
    return {
        "median_%": round(statistics.median(values), 2),
        "mean_%": round(statistics.fmean(values), 2),
        "files_ge95_%": round(100.0 * sum(v >= 95.0 for v in values) / len(values), 2),
    }


def run_real(quick: bool) -> dict[str, Any]:
    """The real-document figures (see the module docstring)."""
    labels = set(registered_labels())
    cases = {name: c for name, c in REAL_CASES.items() if c[0] in labels}
    logging.disable(logging.WARNING)  # hybrid's notes on oversized headings, not results
    try:
        return _run_real(cases, labels, quick)
    finally:
        logging.disable(logging.NOTSET)


def _run_real(
    cases: dict[str, tuple[str, ChunkPolicy]], labels: set[str], quick: bool
) -> dict[str, Any]:
    tallies = {(c, k): _Tally([], [], [], []) for c in cases for k in EDIT_KINDS}
    fns = {name: _chunk_fn(label, policy) for name, (label, policy) in cases.items()}
    sizes: dict[str, list[int]] = {name: [] for name in cases}
    found = real_corpora(quick)
    for corpus in found:
        for document in corpus.documents:
            text, _ = decode_text(document.raw, document.name)
            doc = parse_document(text.encode("utf-8"), "doc.md")
            before = {name: fn(doc) for name, fn in fns.items()}
            for name, chunks in before.items():
                sizes[name].extend(c.token_estimate for c in chunks)
            for kind in EDIT_KINDS:
                edit = choose_edit(text, doc, kind, random.Random(f"{document.name}:{kind}"))
                if edit is None:
                    continue
                edited = parse_document(edit.apply(text).encode("utf-8"), "doc.md")
                for name, fn in fns.items():
                    old = before[name]
                    if not old:
                        continue
                    untouched = sum(not edit.touches(c.source_spans) for c in old)
                    tally = tallies[(name, kind)]
                    tally.kept.append(100.0 * surviving(old, fn(edited)) / len(old))
                    tally.ideal.append(100.0 * untouched / len(old))
                    tally.chunks.append(len(old))
                    tally.sources.append(corpus.name)
    figures: dict[str, Any] = {
        "corpus": {
            "documents": sum(c.n_documents for c in found),
            "bytes": sum(c.n_bytes for c in found),
            "sources": {c.name: c.summary() for c in found},
            "target_tokens": REAL_TARGET_TOKENS,
            "tokenizer": _P.tokenizer,
        },
        "not_registered": sorted(n for n, c in REAL_CASES.items() if c[0] not in labels),
    }
    for name in cases:
        figures[name] = {
            "mean_chunk_tokens": round(statistics.fmean(sizes[name]), 1) if sizes[name] else 0
        }
        for kind in EDIT_KINDS:
            tally = tallies[(name, kind)]
            figures[name][kind] = {
                "files": len(tally.kept),
                "chunks_per_file_median": statistics.median(tally.chunks) if tally.chunks else 0,
                **_stats(tally.kept),
                "ideal": _stats(tally.ideal),
                "by_corpus": {
                    c.name: {
                        "files": len(kept := _of(tally.kept, tally.sources, c.name)),
                        **_stats(kept),
                        "ideal": _stats(_of(tally.ideal, tally.sources, c.name)),
                    }
                    for c in found
                },
            }
    return figures


def _of(values: list[float], sources: list[str], source: str) -> list[float]:
    return [v for v, s in zip(values, sources, strict=True) if s == source]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def markdown_table(real: dict[str, Any], kinds: Sequence[str] = EDIT_KINDS) -> str:
    """The real-document figures as Markdown: one row per (case, edit kind), each figure
    followed by its ideal in parentheses."""
    rows = [
        f"| label, policy ({real['corpus']['target_tokens']} tokens) | edit | files "
        "| median survival (ideal) | mean (ideal) | files keeping ≥ 95% (ideal) |",
        "|---|---|---|---|---|---|",
    ]
    for name, per_kind in real.items():
        if name in ("corpus", "not_registered"):
            continue
        for kind in kinds:
            f = per_kind[kind]
            ideal = f["ideal"]
            rows.append(
                f"| {name} | {kind.replace('_', ' ')} | {f['files']} "
                f"| {_pct(f['median_%'])} ({_pct(ideal['median_%'])}) "
                f"| {_pct(f['mean_%'])} ({_pct(ideal['mean_%'])}) "
                f"| {_pct(f['files_ge95_%'])} ({_pct(ideal['files_ge95_%'])}) |"
            )
    return "\n".join(rows) + "\n"


def summary_table(real: dict[str, Any], kinds: Sequence[str] = EDIT_KINDS) -> str:
    """One row per case: for each edit kind, median survival and the share of files keeping
    >= 95% of their ids, the ideal in parentheses (the table in docs/benchmarks.md)."""
    head = " | ".join(f"{kind.replace('_', ' ')}: median · files ≥ 95%" for kind in kinds)
    rows = [
        f"| label, policy ({real['corpus']['target_tokens']} tokens) | mean chunk tokens "
        f"| {head} |",
        "|---" * (len(kinds) + 2) + "|",
    ]
    for name, per_kind in real.items():
        if name in ("corpus", "not_registered"):
            continue
        cells = []
        for kind in kinds:
            f, ideal = per_kind[kind], per_kind[kind]["ideal"]
            cells.append(
                f"{_pct(f['median_%'])} ({_pct(ideal['median_%'])}) · "
                f"{_pct(f['files_ge95_%'])} ({_pct(ideal['files_ge95_%'])})"
            )
        rows.append(f"| {name} | {per_kind['mean_chunk_tokens']} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def _write(real: dict[str, Any], quick: bool) -> dict[str, str]:
    stem = "stability-quick" if quick else "stability"
    corpus = real["corpus"]
    sources = ", ".join(
        f"{s['source']} ({s['documents']} files)" for s in corpus["sources"].values()
    )
    missing = real["not_registered"]
    md = (
        "# Chunk-id survival after one edit, real documents\n\n"
        f"{corpus['documents']} Markdown files ({corpus['bytes']:,} bytes): {sources}. One "
        f"random edit of each kind per file, at {corpus['target_tokens']} target tokens "
        f"({corpus['tokenizer']}). Survival: share of a file's chunks whose id is still present "
        "after the edit with the same embedded content (text, heading path, captions), i.e. "
        "need no new embedding. In parentheses, the ideal: only the chunks overlapping the "
        "edited characters change (for a renamed heading, those overlapping its section, "
        "whose heading path holds it). Mean chunk tokens: the chunks before any edit. "
        "Made by `python -m benchmarks --only stability`.\n\n"
        + summary_table(real)
        + "\nEvery figure, with the mean:\n\n"
        + markdown_table(real)
        + (f"\nNot measured (label not registered): {', '.join(missing)}.\n" if missing else "")
    )
    paths = {"json": RESULTS / f"{stem}.json", "md": RESULTS / f"{stem}.md"}
    RESULTS.mkdir(exist_ok=True)
    paths["json"].write_text(json.dumps(real, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    paths["md"].write_text(md, encoding="utf-8")
    return {k: str(v) for k, v in paths.items()}


def run(quick: bool) -> dict[str, Any]:
    """Both parts; the real-document figures are also written to ``benchmarks/results``."""
    figures = run_generated(quick)
    real = run_real(quick)
    figures["real"] = real
    figures["written"] = _write(real, quick)
    return figures
