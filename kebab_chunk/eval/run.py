"""Retrieval evaluation of chunker settings: load, chunk, embed, retrieve top-k, score.

The data is a corpus folder plus a questions file in the format of the
``chunking_evaluation`` project's general evaluation set: a CSV with columns ``question``,
``references`` (a JSON list of ``{"content", "start_index", "end_index"}`` objects: the
character ranges that answer the question) and ``corpus_id`` (the stem of a corpus file).
Reference ranges are code-point offsets into the file's decoded text, the same text our
``lines`` spans index (UTF-8, a leading byte order mark not counted, no newline
translation); a reference whose ``content`` is not exactly that slice is refused, as is a
question whose ``corpus_id`` names no file.

For each setting (a label and a chunk policy) every corpus file that a question names is
parsed and chunked; the chunks of all files form one index. Each chunk's character ranges
come from its own spans (:func:`chunk_ranges`), never from searching for its text. Chunks
and questions are embedded with the given embedder, the top ``k`` chunks per question are
found by cosine similarity (brute force, exact; ties go to the earlier chunk: files by
``corpus_id``, then chunk position), and :mod:`kebab_chunk.eval.metrics` scores them.

Pure library: no Beam, no files written. The numbers depend only on the inputs and on the
embeddings, so the same embedder gives the same report.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import MissingDependencyError, PolicyError, UsageError
from kebab_chunk.eval import EMBED_MODES, EmbedMode
from kebab_chunk.eval.metrics import (
    QuestionScore,
    Range,
    Retrieved,
    Summary,
    score_question,
    summarize,
    union_ranges,
)
from kebab_chunk.model import Chunk, ChunkPolicy, make_policy
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers import parse_document
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.tokenizers import canonical_tokenizer_name, get_tokenizer

__all__ = [
    "EMBED_MODES",
    "CorpusDocument",
    "EvalResult",
    "IndexedChunk",
    "Question",
    "Setting",
    "SettingResult",
    "TextEmbedder",
    "check_chart_dependency",
    "chunk_ranges",
    "evaluate",
    "format_table",
    "load_corpus",
    "load_questions",
    "parse_setting",
    "render_html",
]

_COLUMNS = ("question", "references", "corpus_id")


class TextEmbedder(Protocol):
    """What :func:`evaluate` needs of an embedder (:class:`kebab_chunk.eval.bert.Embedder`
    is one): one float vector per text, rows L2-normalised."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[Any]:
        """A ``(len(texts), dim)`` array of embeddings."""
        ...


# --- questions and corpus ---------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One question: its text, the corpus file it is about and the ranges that answer it.

    ``line`` is the CSV line the question's record starts on (for messages);
    ``contents`` are the references' ``content`` strings, checked against the corpus.
    """

    line: int
    question: str
    corpus_id: str
    references: tuple[Range, ...]
    contents: tuple[str, ...]


def _reference_error(path: str, line: int, what: str) -> UsageError:
    return UsageError(
        f"{path}, question on line {line}: {what}; references must be a JSON list of "
        '{"content", "start_index", "end_index"} objects with 0 <= start_index <= end_index'
    )


def _parse_references(
    path: str, line: int, value: str
) -> tuple[tuple[Range, ...], tuple[str, ...]]:
    try:
        items = json.loads(value)
    except json.JSONDecodeError:
        raise _reference_error(path, line, "references is not valid JSON") from None
    if not isinstance(items, list) or not items:
        raise _reference_error(path, line, "references is not a non-empty JSON list")
    ranges: list[Range] = []
    contents: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            raise _reference_error(path, line, "a reference is not a JSON object")
        content, start, end = item.get("content"), item.get("start_index"), item.get("end_index")
        if not isinstance(content, str):
            raise _reference_error(path, line, "a reference has no text 'content'")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise _reference_error(path, line, "a reference has no whole-number start/end index")
        assert isinstance(start, int) and isinstance(end, int)
        if not 0 <= start <= end:
            raise _reference_error(path, line, f"a reference runs from {start} to {end}")
        ranges.append((start, end))
        contents.append(content)
    if sum(end - start for start, end in ranges) == 0:
        raise _reference_error(path, line, "every reference is empty")
    return tuple(ranges), tuple(contents)


def load_questions(path: str | Path) -> list[Question]:
    """The questions of a CSV file (columns question, references, corpus_id; others are
    ignored), in file order; a malformed file or row is a one-sentence ``UsageError``."""
    name = str(path)
    try:
        handle = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise UsageError(f"questions file {name} does not exist; check the path") from None
    except OSError as exc:
        raise UsageError(f"cannot read questions file {name}: {exc.strerror or exc}") from None
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, 2**31 - 1))  # references can hold long excerpts
    questions: list[Question] = []
    try:
        with handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            missing = [c for c in _COLUMNS if header is None or c not in header]
            if header is None or missing:
                raise UsageError(
                    f"questions file {name} has no column {', '.join(missing)}; it needs a "
                    "header row with the columns question, references, corpus_id"
                )
            where = {column: header.index(column) for column in _COLUMNS}
            while True:
                line = reader.line_num + 1
                row = next(reader, None)
                if row is None:
                    break
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) < len(header):
                    raise UsageError(
                        f"{name}, line {line}: the row has {len(row)} fields, the header "
                        f"{len(header)}; quote fields that contain commas or line breaks"
                    )
                text, corpus_id = row[where["question"]], row[where["corpus_id"]].strip()
                if not text.strip() or not corpus_id:
                    raise UsageError(
                        f"{name}, line {line}: the question or its corpus_id is empty; give "
                        "every row a question and the stem of its corpus file"
                    )
                ranges, contents = _parse_references(name, line, row[where["references"]])
                questions.append(Question(line, text, corpus_id, ranges, contents))
    except UnicodeDecodeError:
        raise UsageError(f"questions file {name} is not UTF-8 text; save it as UTF-8") from None
    except csv.Error as exc:
        raise UsageError(f"questions file {name} is not valid CSV: {exc}") from None
    finally:
        csv.field_size_limit(old_limit)
    if not questions:
        raise UsageError(f"questions file {name} has no questions; add rows below the header")
    return questions


@dataclass(frozen=True)
class CorpusDocument:
    """One corpus file: its ``corpus_id``, file name, raw bytes and decoded text (the text
    that reference ranges and ``lines`` spans index)."""

    corpus_id: str
    name: str
    raw: bytes
    text: str


def _find_file(folder: Path, corpus_id: str) -> Path | None:
    matches = sorted(p for p in folder.iterdir() if p.is_file() and corpus_id in (p.name, p.stem))
    if len(matches) > 1:
        names = ", ".join(p.name for p in matches)
        raise UsageError(
            f"corpus_id {corpus_id!r} matches several files in {folder} ({names}); keep one "
            "file per corpus_id"
        )
    return matches[0] if matches else None


def load_corpus(corpus_dir: str | Path, questions: Sequence[Question]) -> dict[str, CorpusDocument]:
    """The corpus files the questions name (file name or stem = ``corpus_id``, directly in
    ``corpus_dir``), each reference checked against its file: it must lie inside the decoded
    text (``end_index`` at most its length) and ``content`` must equal that text from
    ``start_index`` to ``end_index``. Sorted by ``corpus_id``."""
    folder = Path(corpus_dir)
    if not folder.is_dir():
        raise UsageError(f"corpus folder {folder} is not a directory; check --corpus")
    corpus: dict[str, CorpusDocument] = {}
    for corpus_id in sorted({q.corpus_id for q in questions}):
        found = _find_file(folder, corpus_id)
        if found is None:
            line = next(q.line for q in questions if q.corpus_id == corpus_id)
            raise UsageError(
                f"the question on line {line} names corpus_id {corpus_id!r}, but {folder} has "
                f"no file {corpus_id} or {corpus_id}.<extension>; add the file or remove its "
                "questions"
            )
        raw = found.read_bytes()
        text, _ = decode_text(raw, found.name)
        corpus[corpus_id] = CorpusDocument(corpus_id, found.name, raw, text)
    for q in questions:
        text = corpus[q.corpus_id].text
        for n, ((start, end), content) in enumerate(
            zip(q.references, q.contents, strict=True), start=1
        ):
            if end > len(text):  # a clipped slice could still equal the content
                raise UsageError(
                    f"reference {n} of the question on line {q.line} runs from character "
                    f"{start} to {end}, past the end of {corpus[q.corpus_id].name} "
                    f"({len(text)} characters); reference ranges must lie inside the file "
                    "decoded as UTF-8"
                )
            if text[start:end] != content:
                raise UsageError(
                    f"reference {n} of the question on line {q.line} (characters {start} to "
                    f"{end} of {corpus[q.corpus_id].name}) is not its content in the file; "
                    "reference ranges must be character offsets into the file decoded as UTF-8"
                )
    return corpus


# --- settings and chunking ---------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """A label and the policy it chunks with; ``name`` is the setting as written."""

    name: str
    label: str
    policy: ChunkPolicy


#: Setting switches (after a comma) -> the policy field each turns off; the names are the
#: ``kebab-chunk run`` flags without their dashes.
SWITCHES = {"no-merge-peers": "merge_peers", "no-merge-list-items": "merge_list_items"}
SETTING_FORM = "LABEL[:TARGET[:OVERLAP]][,SWITCH...]"


def parse_setting(value: str, tokenizer: str = "bytes-3") -> Setting:
    """``LABEL[:target_tokens[:overlap_tokens]][,switch...]`` -> a Setting (unspecified
    numbers take the policy defaults; switches are :data:`SWITCHES`, e.g.
    ``hybrid-v2:256:0,no-merge-peers``); a bad label, number, switch or policy is a
    one-sentence KebabError."""
    head, *switches = value.split(",")
    label, *numbers = head.split(":")
    if len(numbers) > 2 or not label:
        raise UsageError(
            f"setting {value!r} is not {SETTING_FORM}; write e.g. md-heading-v1:256:32 or "
            "hybrid-v2:256:0,no-merge-peers"
        )
    get_chunker(label)  # an unknown label: one sentence listing the registered ones
    fields: dict[str, Any] = {"tokenizer": canonical_tokenizer_name(tokenizer)}
    for key, number in zip(("target_tokens", "overlap_tokens"), numbers, strict=False):
        try:
            fields[key] = int(number)
        except ValueError:
            raise UsageError(
                f"setting {value!r}: {key} {number!r} is not a whole number; write e.g. "
                "md-heading-v1:256:32"
            ) from None
    for switch in switches:
        if switch not in SWITCHES:
            raise UsageError(
                f"setting {value!r}: unknown switch {switch!r}; use "
                f"{' or '.join(SWITCHES)} after a comma"
            )
        fields[SWITCHES[switch]] = False
    try:
        policy = make_policy(**fields)
    except PolicyError as exc:
        raise UsageError(
            f"setting {value!r}: {str(exc).rstrip('.')}; write LABEL[:TARGET[:OVERLAP]] with "
            "TARGET > 0 and 0 <= OVERLAP < TARGET"
        ) from None
    get_tokenizer(policy.tokenizer)  # a tokenizer that cannot load fails here, once
    return Setting(value, label, policy)


def chunk_ranges(chunk: Chunk, text: str) -> tuple[Range, ...]:
    """The character ranges of ``text`` (the decoded source) that ``chunk`` covers.

    A chunk whose text is exactly the source from its first span's start to its last
    span's end covers that one range. Otherwise it covers its spans, neighbours merged
    when only whitespace lies between them. A chunk without ``lines`` spans (a PDF page, a
    DOCX element) has no range in the text: ValueError.
    """
    spans = [s for s in chunk.source_spans if isinstance(s, LineSpan)]
    if len(spans) != len(chunk.source_spans):
        raise ValueError("the chunk does not cite character ranges of its source text")
    start = min(s.char_start for s in spans)
    end = max(s.char_end for s in spans)
    if text[start:end] == chunk.text:
        return ((start, end),)
    merged: list[Range] = []
    for s_start, s_end in union_ranges((s.char_start, s.char_end) for s in spans):
        if merged and not text[merged[-1][1] : s_start].strip():
            merged[-1] = (merged[-1][0], s_end)
        else:
            merged.append((s_start, s_end))
    return tuple(merged)


@dataclass(frozen=True)
class IndexedChunk:
    """A chunk as the index holds it: where it is, what is embedded, how big it is."""

    corpus_id: str
    position: int
    ranges: tuple[Range, ...]
    embed_text: str
    chars: int
    tokens: int
    exact: bool  # its text is exactly the source slice of its one range


def _index_chunks(
    setting: Setting, corpus: Mapping[str, CorpusDocument], embed: EmbedMode
) -> list[IndexedChunk]:
    chunker = get_chunker(setting.label)
    counter = get_tokenizer(setting.policy.tokenizer)
    indexed: list[IndexedChunk] = []
    for corpus_id, document in sorted(corpus.items()):
        doc = parse_document(document.raw, document.name)
        if not chunker.accepts(doc):
            raise UsageError(
                f"{setting.label} does not chunk {document.name} ({doc.media_type}); choose a "
                "label that does ('kebab-chunk labels' lists what each accepts)"
            )
        for chunk in with_embedding(chunker.chunk(doc, setting.policy), chunker, setting.policy):
            try:
                ranges = chunk_ranges(chunk, document.text)
            except ValueError:
                raise UsageError(
                    f"{setting.label} cites no character ranges of {document.name}'s text, so "
                    "its chunks cannot be scored; evaluate text formats (Markdown, text, HTML, "
                    "CSV)"
                ) from None
            text = _embedded(chunk, embed)
            exact = len(ranges) == 1 and document.text[ranges[0][0] : ranges[0][1]] == chunk.text
            indexed.append(
                IndexedChunk(
                    corpus_id=corpus_id,
                    position=chunk.position,
                    ranges=ranges,
                    embed_text=text,
                    chars=len(chunk.text),
                    tokens=counter.count_tokens(chunk.text),
                    exact=exact,
                )
            )
    return indexed


# --- retrieval and scoring ---------------------------------------------------------------


def _embedded(chunk: Chunk, embed: EmbedMode) -> str:
    if embed == "contextualized":
        return contextualize(chunk)
    if embed == "embed_text" and chunk.embed_text is not None:
        return chunk.embed_text
    return chunk.text


def _embed(embedder: TextEmbedder, texts: Sequence[str]) -> npt.NDArray[np.float64]:
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(
            f"the embedder returned an array of shape {vectors.shape} for {len(texts)} texts"
        )
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: npt.NDArray[np.float64] = np.divide(
        vectors, norms, out=np.zeros_like(vectors), where=norms > 0
    )
    return unit


def _top_k(
    questions: npt.NDArray[np.float64], chunks: npt.NDArray[np.float64], k: int
) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` most similar chunks per question, best first; ties go to the
    earlier chunk (a stable sort), so the order never depends on the machine's sort."""
    if questions.shape[1] != chunks.shape[1]:
        raise ValueError("questions and chunks were embedded with different dimensions")
    scores = questions @ chunks.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


@dataclass(frozen=True)
class SettingResult:
    """The scores and chunk statistics of one setting."""

    setting: Setting
    chunks: int
    mean_chars: float
    mean_tokens: float
    exact_share: float
    summary: Summary
    per_corpus: dict[str, Summary]
    scores: tuple[QuestionScore, ...]
    retrieved: tuple[tuple[tuple[str, int], ...], ...]  # per question: (corpus_id, position)

    def as_json(self) -> dict[str, Any]:
        """A JSON object: the setting, its statistics, mean scores, per-question scores."""
        return {
            "setting": self.setting.name,
            "label": self.setting.label,
            "policy": self.setting.policy.as_json(),
            "policy_hash": self.setting.policy.policy_hash,
            "chunks": self.chunks,
            "mean_chars": self.mean_chars,
            "mean_tokens": self.mean_tokens,
            "exact_share": self.exact_share,
            **_summary_json(self.summary),
            "per_corpus": {cid: _summary_json(s) for cid, s in sorted(self.per_corpus.items())},
            "per_question": [
                {
                    "recall": s.recall,
                    "precision": s.precision,
                    "iou": s.iou,
                    "retrieved": [[cid, pos] for cid, pos in hits],
                }
                for s, hits in zip(self.scores, self.retrieved, strict=True)
            ],
        }


def _summary_json(summary: Summary) -> dict[str, Any]:
    return {
        "questions": summary.questions,
        "recall": summary.recall,
        "recall_std": summary.recall_std,
        "precision": summary.precision,
        "precision_std": summary.precision_std,
        "iou": summary.iou,
        "iou_std": summary.iou_std,
    }


@dataclass(frozen=True)
class EvalResult:
    """Everything ``kebab-chunk eval`` reports: the run's parameters and one result per
    setting, in the order the settings were given."""

    k: int
    embed: EmbedMode
    model: str
    questions: int
    corpus: tuple[tuple[str, str, int], ...]  # (corpus_id, file name, characters)
    results: tuple[SettingResult, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, Any]:
        """The report as one JSON object (``--json``)."""
        return {
            "k": self.k,
            "embed": self.embed,
            "model": self.model,
            "questions": self.questions,
            "corpus": [
                {"corpus_id": cid, "file": name, "chars": chars} for cid, name, chars in self.corpus
            ],
            "settings": [result.as_json() for result in self.results],
        }


def evaluate(
    questions: Sequence[Question],
    corpus: Mapping[str, CorpusDocument],
    settings: Sequence[Setting],
    embedder: TextEmbedder,
    k: int = 5,
    embed: EmbedMode = "text",
    model: str = "",
) -> EvalResult:
    """Chunk, embed, retrieve the top ``k`` per question from one index over all documents
    and score every setting. ``corpus`` comes from :func:`load_corpus` (references
    checked); ``model`` only names the embedder in the report."""
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k}")
    if embed not in EMBED_MODES:
        raise UsageError(f"embed must be one of {', '.join(EMBED_MODES)}, got {embed!r}")
    # chunk every setting first: a label that cannot chunk the files fails before embedding
    indexes = [_index_chunks(setting, corpus, embed) for setting in settings]
    for setting, indexed in zip(settings, indexes, strict=True):
        if not indexed:
            raise UsageError(f"{setting.name} made no chunks of the corpus; nothing to retrieve")
    question_vectors = _embed(embedder, [q.question for q in questions])
    results = []
    for setting, indexed in zip(settings, indexes, strict=True):
        chunk_vectors = _embed(embedder, [c.embed_text for c in indexed])
        top = _top_k(question_vectors, chunk_vectors, k)
        scores: list[QuestionScore] = []
        retrieved: list[tuple[tuple[str, int], ...]] = []
        for q, row in zip(questions, top, strict=True):
            hits = [indexed[int(i)] for i in row]
            scores.append(
                score_question(
                    q.references, q.corpus_id, [Retrieved(h.corpus_id, h.ranges) for h in hits]
                )
            )
            retrieved.append(tuple((h.corpus_id, h.position) for h in hits))
        per_corpus = {
            cid: summarize(
                [s for s, q in zip(scores, questions, strict=True) if q.corpus_id == cid]
            )
            for cid in sorted({q.corpus_id for q in questions})
        }
        results.append(
            SettingResult(
                setting=setting,
                chunks=len(indexed),
                mean_chars=math.fsum(c.chars for c in indexed) / len(indexed),
                mean_tokens=math.fsum(c.tokens for c in indexed) / len(indexed),
                exact_share=sum(c.exact for c in indexed) / len(indexed),
                summary=summarize(scores),
                per_corpus=per_corpus,
                scores=tuple(scores),
                retrieved=tuple(retrieved),
            )
        )
    return EvalResult(
        k=k,
        embed=embed,
        model=model,
        questions=len(questions),
        corpus=tuple((d.corpus_id, d.name, len(d.text)) for _, d in sorted(corpus.items())),
        results=tuple(results),
    )


# --- presentation ------------------------------------------------------------------------


def _exact_cell(share: float) -> str:
    if share == 1.0:
        return "yes"
    return "no" if share == 0.0 else f"{100 * share:.0f}%"


_HEADER = (
    "setting",
    "tokenizer",
    "chunks",
    "mean chars",
    "mean tokens",
    "exact",
    "recall %",
    "precision %",
    "IoU %",
)


def _rows(result: EvalResult) -> list[tuple[str, ...]]:
    return [
        (
            r.setting.name,
            r.setting.policy.tokenizer,
            str(r.chunks),
            f"{r.mean_chars:.0f}",
            f"{r.mean_tokens:.0f}",
            _exact_cell(r.exact_share),
            f"{100 * r.summary.recall:.1f}",
            f"{100 * r.summary.precision:.1f}",
            f"{100 * r.summary.iou:.1f}",
        )
        for r in result.results
    ]


def _caption(result: EvalResult) -> str:
    embedded = "chunk text" if result.embed == "text" else "contextualized chunk text"
    return (
        f"top {result.k} of one index over {len(result.corpus)} documents, "
        f"{result.questions} questions, model {result.model or 'given'}, embedding the "
        f"{embedded}; mean tokens of the chunk text under the tokenizer; exact: share of "
        "chunks whose text is the exact source slice they cite"
    )


def format_table(result: EvalResult) -> str:
    """The results as a plain-text table (one row per setting) under a one-line caption."""
    rows = [_HEADER, *_rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADER))]
    lines = [_caption(result)]
    for n, row in enumerate(rows):
        cells = [
            cell.ljust(w) if i < 2 or (i == 5 and n == 0) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def check_chart_dependency() -> None:
    """Refuse in one sentence when matplotlib (the ``report`` extra) is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError(
            "the HTML page of kebab-chunk eval draws its chart with matplotlib, which is not "
            "installed; install the report extra (pip install matplotlib) or leave out the "
            "HTML page"
        )


def render_html(result: EvalResult) -> str:
    """A self-contained HTML page: the table and a chart of recall, precision and IoU per
    setting beside recall against mean chunk size (matplotlib, the ``report`` extra)."""
    check_chart_dependency()
    from kebab_chunk.report._html import esc, page
    from kebab_chunk.report.report import _figure, _plain, _svg

    names = [r.setting.name for r in result.results]
    fig = _figure(11.0, 4.2)
    bars, scatter = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    metrics = (("recall", "#2f6db5"), ("precision", "#e08a1e"), ("IoU", "#3a9a5b"))
    width = 0.8 / len(metrics)
    for m, (metric, colour) in enumerate(metrics):
        values = [
            100 * getattr(r.summary, "iou" if metric == "IoU" else metric) for r in result.results
        ]
        xs = [i + (m - 1) * width for i in range(len(names))]
        bars.bar(xs, values, width=width, color=colour, label=metric)
    bars.set_xticks(range(len(names)))
    bars.set_xticklabels([_plain(n) for n in names], rotation=20, ha="right", fontsize=8)
    bars.set_ylabel("%")
    bars.set_title(f"top {result.k}: scores per setting", fontsize=10, loc="left")
    bars.legend(fontsize=8)
    for r in result.results:
        scatter.scatter([r.mean_chars], [100 * r.summary.recall], color="#2f6db5")
        scatter.annotate(
            _plain(r.setting.name),
            (r.mean_chars, 100 * r.summary.recall),
            fontsize=7,
            xytext=(4, 3),
            textcoords="offset points",
        )
    scatter.set_xlabel("mean chunk size (characters)")
    scatter.set_ylabel("recall %")
    scatter.set_title("recall against chunk size", fontsize=10, loc="left")
    fig.subplots_adjust(left=0.06, right=0.98, top=0.92, bottom=0.28, wspace=0.25)
    chart = _svg(fig)
    head = "".join(f"<th>{esc(h)}</th>" for h in _HEADER)
    body_rows = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"num" if i >= 2 and i != 5 else ""}">{esc(c)}</td>'
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in _rows(result)
    )
    files = ", ".join(f"{name} ({chars:,} characters)" for _, name, chars in result.corpus)
    body = (
        "<h1>Retrieval evaluation</h1>"
        f'<p class="sub">{esc(_caption(result))}. Corpus: {esc(files)}.</p>'
        f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body_rows}</tbody></table>'
        f'<div class="chart">{chart}</div>'
    )
    return page("kebab-chunk eval", body, css=".chart svg { max-width: 100%; height: auto; }")
