"""Retrieval evaluation of chunker settings: load, chunk, embed, retrieve top-k, score.

The data is a corpus folder plus a questions file in the format of the
``chunking_evaluation`` project's general evaluation set: a CSV with columns ``question``,
``references`` (a JSON list of ``{"content", "start_index", "end_index"}`` objects: the
character ranges that answer the question) and ``corpus_id`` (a corpus file), optionally
``type``. A reference may name its own file (``corpus_id``: a path relative to the corpus
folder, with or without its extension; the row's ``corpus_id`` otherwise), and may give
only ``content`` (and a PDF ``page``) where the source has no character ranges to cite
(HTML, DOCX, PDF). Reference ranges are code-point offsets into the file's decoded text,
the same text our ``lines`` spans index (UTF-8, a leading byte order mark not counted, no
newline translation); a reference whose ``content`` is not exactly that slice is refused,
as is a ``corpus_id`` that names no file.

For each setting (a label and a chunk policy) every corpus file that a reference names is
parsed and chunked; the chunks of all files form one index. Each chunk's character ranges
come from its own spans (:func:`chunk_ranges`), never from searching for its text. Chunks
and questions are embedded with the given embedder, the top ``k`` chunks per question are
found by cosine similarity (brute force, exact; ties go to the earlier chunk: files by
``corpus_id``, then chunk position), and :mod:`kebab_chunk.eval.metrics` scores them: the
character-range metric for questions whose every reference is a range, the word-overlap
measure for every question. Questions of :data:`APART_TYPES` are summarised by type only.

Pure library: no Beam, no files written. The numbers depend only on the inputs and on the
embeddings, so the same embedder gives the same report.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kebab_chunk.chunkers.contextualize import contextualize
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import BinaryContentError, MissingDependencyError, PolicyError, UsageError
from kebab_chunk.eval import APART_TYPES, EMBED_MODES, EmbedMode
from kebab_chunk.eval.metrics import (
    OverlapScore,
    OverlapSummary,
    QuestionScore,
    Range,
    Retrieved,
    RetrievedText,
    Summary,
    TextReference,
    score_files,
    score_overlap,
    sum_of_ranges,
    summarize,
    summarize_overlap,
    union_ranges,
    word_grams,
)
from kebab_chunk.model import Chunk, ChunkPolicy, make_policy
from kebab_chunk.model.spans import ElementSpan, LineSpan, PageSpan
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import ParserChoice
from kebab_chunk.tokenizers import Tokenizer, canonical_tokenizer_name, get_tokenizer

__all__ = [
    "APART_TYPES",
    "EMBED_MODES",
    "CorpusDocument",
    "EvalResult",
    "Group",
    "IndexedChunk",
    "Question",
    "Reference",
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
    "select_types",
]

_COLUMNS = ("question", "references", "corpus_id")
#: The optional column naming each question's type (``--types`` selects by it).
TYPE_COLUMN = "type"


class TextEmbedder(Protocol):
    """What :func:`evaluate` needs of an embedder (:class:`kebab_chunk.eval.bert.Embedder`
    is one): one float vector per text, rows L2-normalised."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[Any]:
        """A ``(len(texts), dim)`` array of embeddings."""
        ...


# --- questions and corpus ---------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """One excerpt that answers a question: the corpus file it is in, its text and, when
    the data gives one, its character range (``span``) of the file's decoded text.

    ``page`` is a PDF reference's 1-based page (None: anywhere in the file). A reference
    without a span is scored by the overlap measure only (rendered formats: HTML, DOCX,
    PDF pages have no character ranges that the chunks could cite).
    """

    corpus_id: str
    content: str
    span: Range | None = None
    page: int | None = None


@dataclass(frozen=True)
class Question:
    """One question: its text, the corpus file its row names, its references and its type.

    ``line`` is the CSV line the question's record starts on (for messages); ``corpus_id``
    is the row's (the first reference's file in data where references name their own);
    ``type`` is the row's ``type`` cell, None without that column or when it is empty.
    """

    line: int
    question: str
    corpus_id: str
    cited: tuple[Reference, ...]
    type: str | None = None

    @property
    def references(self) -> tuple[Range, ...]:
        """The character ranges of the references that have one, in order."""
        return tuple(r.span for r in self.cited if r.span is not None)

    @property
    def contents(self) -> tuple[str, ...]:
        """Every reference's ``content``, in order."""
        return tuple(r.content for r in self.cited)

    @property
    def ranged(self) -> bool:
        """Whether every reference has a character range (the range metric scores it)."""
        return all(r.span is not None for r in self.cited)


_REFERENCE_FORM = (
    'references must be a JSON list of {"content", "start_index", "end_index"} objects with '
    "0 <= start_index <= end_index (both indexes may be left out for content-only references, "
    'and "corpus_id" and "page" may be added)'
)


def _reference_error(path: str, line: int, what: str) -> UsageError:
    return UsageError(f"{path}, question on line {line}: {what}; {_REFERENCE_FORM}")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_span(path: str, line: int, item: Mapping[str, Any]) -> Range | None:
    """The reference's ``(start_index, end_index)``, or None when it gives neither."""
    start, end = item.get("start_index"), item.get("end_index")
    if start is None and end is None:
        return None
    if not (_whole(start) and _whole(end)):
        raise _reference_error(path, line, "a reference has no whole-number start/end index")
    assert isinstance(start, int) and isinstance(end, int)
    if not 0 <= start <= end:
        raise _reference_error(path, line, f"a reference runs from {start} to {end}")
    return (start, end)


def _parse_reference(path: str, line: int, item: object, row_corpus_id: str) -> Reference:
    """One reference object; its ``corpus_id`` falls back to the row's."""
    if not isinstance(item, dict):
        raise _reference_error(path, line, "a reference is not a JSON object")
    content, corpus_id, page = item.get("content"), item.get("corpus_id"), item.get("page")
    if not isinstance(content, str):
        raise _reference_error(path, line, "a reference has no text 'content'")
    if corpus_id is not None and (not isinstance(corpus_id, str) or not corpus_id.strip()):
        raise _reference_error(path, line, "a reference's corpus_id is not a non-empty string")
    corpus_id = corpus_id.strip() if corpus_id is not None else row_corpus_id
    if not corpus_id:
        raise _reference_error(path, line, "a reference has no corpus_id and the row has none")
    if page is not None and not (_whole(page) and page >= 1):
        raise _reference_error(path, line, f"a reference's page {page!r} is not a number >= 1")
    span = _parse_span(path, line, item)
    if span is None and not word_grams(content, 1):
        raise _reference_error(path, line, "a reference without indexes has no word in content")
    return Reference(corpus_id, content, span, page)


def _parse_references(
    path: str, line: int, value: str, row_corpus_id: str
) -> tuple[Reference, ...]:
    try:
        items = json.loads(value)
    except json.JSONDecodeError:
        raise _reference_error(path, line, "references is not valid JSON") from None
    if not isinstance(items, list) or not items:
        raise _reference_error(path, line, "references is not a non-empty JSON list")
    cited = tuple(_parse_reference(path, line, item, row_corpus_id) for item in items)
    spans = [r.span for r in cited]
    if all(s is not None for s in spans) and sum_of_ranges(s for s in spans if s) == 0:
        raise _reference_error(path, line, "every reference is empty")
    return cited


def _row_question(name: str, line: int, row: list[str], where: Mapping[str, int]) -> Question:
    """The question of one CSV row (``where``: column -> index, ``type`` optional)."""
    text, corpus_id = row[where["question"]], row[where["corpus_id"]].strip()
    if not text.strip():
        raise UsageError(
            f"{name}, line {line}: the question is empty; give every row a question and the "
            "path or stem of its corpus file"
        )
    cited = _parse_references(name, line, row[where["references"]], corpus_id)
    kind = row[where[TYPE_COLUMN]].strip() if TYPE_COLUMN in where else ""
    return Question(line, text, corpus_id or cited[0].corpus_id, cited, kind or None)


def _read_questions(name: str, handle: Iterable[str]) -> list[Question]:
    """Every question of an open CSV file, in file order (blank rows skipped)."""
    reader = csv.reader(handle)
    header = next(reader, None)
    missing = [c for c in _COLUMNS if header is None or c not in header]
    if header is None or missing:
        raise UsageError(
            f"questions file {name} has no column {', '.join(missing)}; it needs a "
            "header row with the columns question, references, corpus_id"
        )
    where = {
        column: header.index(column) for column in (*_COLUMNS, TYPE_COLUMN) if column in header
    }
    questions: list[Question] = []
    while True:
        line = reader.line_num + 1
        row = next(reader, None)
        if row is None:
            return questions
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise UsageError(
                f"{name}, line {line}: the row has {len(row)} fields, the header "
                f"{len(header)}; quote fields that contain commas or line breaks"
            )
        questions.append(_row_question(name, line, row, where))


def load_questions(path: str | Path) -> list[Question]:
    """The questions of a CSV file (columns question, references, corpus_id, optionally
    type; others are ignored), in file order; a malformed file or row is a one-sentence
    ``UsageError``."""
    name = str(path)
    try:
        handle = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise UsageError(f"questions file {name} does not exist; check the path") from None
    except OSError as exc:
        raise UsageError(f"cannot read questions file {name}: {exc.strerror or exc}") from None
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(old_limit, 2**31 - 1))  # references can hold long excerpts
    try:
        with handle:
            questions = _read_questions(name, handle)
    except UnicodeDecodeError:
        raise UsageError(f"questions file {name} is not UTF-8 text; save it as UTF-8") from None
    except csv.Error as exc:
        raise UsageError(f"questions file {name} is not valid CSV: {exc}") from None
    finally:
        csv.field_size_limit(old_limit)
    if not questions:
        raise UsageError(f"questions file {name} has no questions; add rows below the header")
    return questions


def _type_list(value: str | None) -> list[str]:
    """``"A, B"`` -> ``["A", "B"]``; None -> []."""
    return [] if value is None else [t.strip() for t in value.split(",") if t.strip()]


def _check_types(option: str, asked: Sequence[str], known: Sequence[str], name: str) -> None:
    if not known:
        raise UsageError(
            f"{option} selects by the type column, but questions file {name} has none; leave "
            f"out {option} or add a type column"
        )
    unknown = [t for t in asked if t not in known]
    if unknown:
        raise UsageError(
            f"{option}: no question of {name} has the type {unknown[0]!r}; use one or more "
            f"(comma-separated) of {', '.join(known)}"
        )


def select_types(
    questions: Sequence[Question],
    types: str | None = None,
    exclude: str | None = None,
    source: str = "the questions file",
) -> list[Question]:
    """The questions whose type is in ``types`` (comma-separated; None: every question)
    and not in ``exclude``; an option given without a type column, or naming a type no
    question has, or leaving no question, is a one-sentence ``UsageError``."""
    known = sorted({q.type for q in questions if q.type is not None})
    keep, drop = _type_list(types), _type_list(exclude)
    for option, value, asked in (("--types", types, keep), ("--exclude-types", exclude, drop)):
        if value is not None:
            _check_types(option, asked, known, source)
    wanted, unwanted = set(keep), set(drop)
    chosen = [
        q for q in questions if (types is None or q.type in wanted) and q.type not in unwanted
    ]
    if not chosen:
        raise UsageError(
            f"--types and --exclude-types leave no question of {source}; keep at least one type"
        )
    return chosen


@dataclass(frozen=True)
class CorpusDocument:
    """One corpus file: its ``corpus_id``, its path under the corpus folder (``name``), raw
    bytes and decoded text (the text that reference ranges and ``lines`` spans index; None
    for a binary file such as a PDF or DOCX, which only content references can cite)."""

    corpus_id: str
    name: str
    raw: bytes
    text: str | None


def _find_file(folder: Path, corpus_id: str) -> Path | None:
    """The file ``corpus_id`` names: a path relative to ``folder`` whose last part is a file
    name or stem (name without extension); None when there is none."""
    relative = PurePosixPath(corpus_id)
    if relative.is_absolute() or ".." in relative.parts:
        raise UsageError(
            f"corpus_id {corpus_id!r} points outside the corpus folder; give a path relative "
            "to --corpus without '..'"
        )
    parent = folder.joinpath(*relative.parent.parts)
    if not parent.is_dir():
        return None
    matches = sorted(
        p for p in parent.iterdir() if p.is_file() and relative.name in (p.name, p.stem)
    )
    if len(matches) > 1:
        names = ", ".join(p.name for p in matches)
        raise UsageError(
            f"corpus_id {corpus_id!r} matches several files in {parent} ({names}); keep one "
            "file per corpus_id or give the file name with its extension"
        )
    return matches[0] if matches else None


def _load_document(folder: Path, corpus_id: str, line: int) -> tuple[Path, CorpusDocument]:
    """The file ``corpus_id`` names, read and decoded; ``line`` is the first question that
    names it (for the message when there is no such file)."""
    found = _find_file(folder, corpus_id)
    if found is None:
        raise UsageError(
            f"the question on line {line} names corpus_id {corpus_id!r}, but {folder} has "
            f"no file {corpus_id} or {corpus_id}.<extension>; add the file or remove its "
            "questions"
        )
    raw = found.read_bytes()
    name = found.relative_to(folder).as_posix()
    try:
        text: str | None = decode_text(raw, name)[0]
    except BinaryContentError:
        text = None
    return found.resolve(), CorpusDocument(corpus_id, name, raw, text)


def _check_span(q: Question, n: int, reference: Reference, document: CorpusDocument) -> None:
    """Refuse reference ``n`` of ``q`` unless its range lies in its file and is its content."""
    if reference.span is None:
        return
    (start, end), text = reference.span, document.text
    if text is None:
        raise UsageError(
            f"reference {n} of the question on line {q.line} gives characters {start} to "
            f"{end} of {document.name}, which is not a text file; give a binary format's "
            "references as content (and page) without indexes"
        )
    if end > len(text):  # a clipped slice could still equal the content
        raise UsageError(
            f"reference {n} of the question on line {q.line} runs from character "
            f"{start} to {end}, past the end of {document.name} "
            f"({len(text)} characters); reference ranges must lie inside the file "
            "decoded as UTF-8"
        )
    if text[start:end] != reference.content:
        raise UsageError(
            f"reference {n} of the question on line {q.line} (characters {start} to "
            f"{end} of {document.name}) is not its content in the file; "
            "reference ranges must be character offsets into the file decoded as UTF-8"
        )


def load_corpus(corpus_dir: str | Path, questions: Sequence[Question]) -> dict[str, CorpusDocument]:
    """The corpus files any reference names, each ``corpus_id`` a path relative to
    ``corpus_dir`` whose last part is a file name or stem (a plain stem: a file directly in
    the folder). Each range reference is checked against its own file: it must lie inside
    the decoded text and ``content`` must equal that text from ``start_index`` to
    ``end_index``. Two ids naming one file are refused. Sorted by ``corpus_id``."""
    folder = Path(corpus_dir)
    if not folder.is_dir():
        raise UsageError(f"corpus folder {folder} is not a directory; check --corpus")
    first_line: dict[str, int] = {}
    for q in questions:
        for reference in q.cited:
            first_line.setdefault(reference.corpus_id, q.line)
    corpus: dict[str, CorpusDocument] = {}
    owner: dict[Path, str] = {}
    for corpus_id in sorted(first_line):
        path, corpus[corpus_id] = _load_document(folder, corpus_id, first_line[corpus_id])
        if path in owner:
            raise UsageError(
                f"corpus_ids {owner[path]!r} and {corpus_id!r} name the same file "
                f"{corpus[corpus_id].name}; write one of them throughout the questions file"
            )
        owner[path] = corpus_id
    for q in questions:
        for n, reference in enumerate(q.cited, start=1):
            _check_span(q, n, reference, corpus[reference.corpus_id])
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
    """A chunk as the index holds it: where it is, what is embedded, how big it is.

    ``ranges`` is None for a chunk that cites no character ranges (a PDF page, a DOCX
    element): only the overlap measure, which reads ``text``, can score it; ``pages`` are
    the pages its spans cite.
    """

    corpus_id: str
    position: int
    ranges: tuple[Range, ...] | None
    embed_text: str
    chars: int
    tokens: int
    exact: bool  # its text is exactly the source slice of its one range
    text: str = ""
    pages: frozenset[int] = frozenset()


def _pages(chunk: Chunk) -> frozenset[int]:
    """The 1-based pages the chunk's spans cite (none for text formats)."""
    return frozenset(
        span.page
        for span in chunk.source_spans
        if isinstance(span, PageSpan | ElementSpan) and span.page is not None
    )


def _scored_ranges(
    chunk: Chunk, document: CorpusDocument, ranged: bool, label: str
) -> tuple[Range, ...] | None:
    """The chunk's character ranges (:func:`chunk_ranges`), None when it cites none; a
    refusal when ``ranged`` (a range reference names the document) and it cites none."""
    ranges: tuple[Range, ...] | None = None
    if document.text is not None:
        try:
            ranges = chunk_ranges(chunk, document.text)
        except ValueError:
            ranges = None
    if ranges is None and ranged:
        raise UsageError(
            f"{label} cites no character ranges of {document.name}'s text, so its chunks "
            "cannot be scored against the character ranges that references give; evaluate "
            "text formats (Markdown, text, HTML, CSV) or give content-only references"
        )
    return ranges


def _indexed(
    chunk: Chunk,
    document: CorpusDocument,
    ranges: tuple[Range, ...] | None,
    embed: EmbedMode,
    counter: Tokenizer,
) -> IndexedChunk:
    """One chunk of ``document`` as the index holds it."""
    exact = False
    if ranges is not None and len(ranges) == 1 and document.text is not None:
        start, end = ranges[0]
        exact = document.text[start:end] == chunk.text
    return IndexedChunk(
        corpus_id=document.corpus_id,
        position=chunk.position,
        ranges=ranges,
        embed_text=_embedded(chunk, embed),
        chars=len(chunk.text),
        tokens=counter.count_tokens(chunk.text),
        exact=exact,
        text=chunk.text,
        pages=_pages(chunk),
    )


def _index_chunks(
    setting: Setting,
    corpus: Mapping[str, CorpusDocument],
    embed: EmbedMode,
    ranged: frozenset[str],
    parse: ParserChoice,
) -> list[IndexedChunk]:
    """Every chunk of every corpus file under ``setting``, files by ``corpus_id``;
    ``ranged`` names the files that range references cite."""
    chunker = get_chunker(setting.label)
    counter = get_tokenizer(setting.policy.tokenizer)
    indexed: list[IndexedChunk] = []
    for corpus_id, document in sorted(corpus.items()):
        doc = parse(document.raw, document.name)
        if not chunker.accepts(doc):
            raise UsageError(
                f"{setting.label} does not chunk {document.name} ({doc.media_type}); choose a "
                "label that does ('kebab-chunk labels' lists what each accepts)"
            )
        chunks = with_embedding(chunker.chunk(doc, setting.policy), chunker, setting.policy)
        for chunk in chunks:
            ranges = _scored_ranges(chunk, document, corpus_id in ranged, setting.label)
            indexed.append(_indexed(chunk, document, ranges, embed, counter))
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
class Group:
    """The scores of a group of questions (one type): how many there are, the range metric
    over those whose every reference is a character range (None: none is), and the overlap
    measure over those whose references hold a word (None: none does)."""

    questions: int
    ranges: Summary | None
    overlap: OverlapSummary | None


def _group(
    scores: Sequence[QuestionScore | None], overlaps: Sequence[OverlapScore | None]
) -> Group:
    """The group of questions with these per-question scores (None: not scored)."""
    ranged = [s for s in scores if s is not None]
    worded = [s for s in overlaps if s is not None]
    return Group(
        questions=len(scores),
        ranges=summarize(ranged) if ranged else None,
        overlap=summarize_overlap(worded) if worded else None,
    )


@dataclass(frozen=True)
class SettingResult:
    """The scores and chunk statistics of one setting.

    ``summary`` (range metric), ``overlap`` and ``per_corpus`` (range metric by the row's
    ``corpus_id``) cover every question not of a type in :data:`APART_TYPES`; ``per_type``
    has every type that questions have. Per question: ``scores`` (None when a reference has
    no range), ``overlaps`` (None when no reference holds a word), ``types``, ``retrieved``.
    """

    setting: Setting
    chunks: int
    mean_chars: float
    mean_tokens: float
    exact_share: float
    summary: Summary | None
    per_corpus: dict[str, Summary]
    scores: tuple[QuestionScore | None, ...]
    retrieved: tuple[tuple[tuple[str, int], ...], ...]  # per question: (corpus_id, position)
    overlap: OverlapSummary | None = None
    overlaps: tuple[OverlapScore | None, ...] = ()
    per_type: dict[str, Group] = field(default_factory=dict)
    types: tuple[str | None, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """A JSON object: the setting, its statistics, mean scores, per-type and
        per-question scores."""
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
            **_overlap_json(self.overlap),
            "per_corpus": {cid: _summary_json(s) for cid, s in sorted(self.per_corpus.items())},
            "per_type": {
                kind: {
                    "all_questions": group.questions,
                    **_summary_json(group.ranges),
                    **_overlap_json(group.overlap),
                }
                for kind, group in self.per_type.items()
            },
            "per_question": [
                _question_json(s, o, kind, hits)
                for s, o, kind, hits in zip(
                    self.scores, self.overlaps, self.types, self.retrieved, strict=True
                )
            ],
        }


def _question_json(
    score: QuestionScore | None,
    overlap: OverlapScore | None,
    kind: str | None,
    hits: Sequence[tuple[str, int]],
) -> dict[str, Any]:
    return {
        "type": kind,
        "recall": None if score is None else score.recall,
        "precision": None if score is None else score.precision,
        "iou": None if score is None else score.iou,
        "overlap_recall": None if overlap is None else overlap.recall,
        "overlap_precision": None if overlap is None else overlap.precision,
        "retrieved": [[cid, pos] for cid, pos in hits],
    }


def _summary_json(summary: Summary | None) -> dict[str, Any]:
    """The range metric's means; ``questions`` is how many questions it covers."""
    if summary is None:
        keys = ("recall", "recall_std", "precision", "precision_std", "iou", "iou_std")
        return {"questions": 0, **dict.fromkeys(keys)}
    return {
        "questions": summary.questions,
        "recall": summary.recall,
        "recall_std": summary.recall_std,
        "precision": summary.precision,
        "precision_std": summary.precision_std,
        "iou": summary.iou,
        "iou_std": summary.iou_std,
    }


def _overlap_json(overlap: OverlapSummary | None) -> dict[str, Any]:
    """The overlap measure's means; ``overlap_questions`` is how many questions it covers."""
    if overlap is None:
        keys = ("recall", "recall_std", "precision", "precision_std")
        return {"overlap_questions": 0, **{f"overlap_{key}": None for key in keys}}
    return {
        "overlap_questions": overlap.questions,
        "overlap_recall": overlap.recall,
        "overlap_recall_std": overlap.recall_std,
        "overlap_precision": overlap.precision,
        "overlap_precision_std": overlap.precision_std,
    }


@dataclass(frozen=True)
class EvalResult:
    """Everything ``kebab-chunk eval`` reports: the run's parameters and one result per
    setting, in the order the settings were given.

    ``apart`` lists the types of :data:`APART_TYPES` that questions have, with their
    counts: those questions are in ``per_type`` only; ``summarized`` counts the others,
    ``range_questions`` and ``overlap_questions`` how many of those each measure covers.
    """

    k: int
    embed: EmbedMode
    model: str
    questions: int
    corpus: tuple[tuple[str, str, int | None], ...]  # (corpus_id, file, characters or None)
    results: tuple[SettingResult, ...] = field(default_factory=tuple)
    apart: tuple[tuple[str, int], ...] = ()
    summarized: int = 0
    range_questions: int = 0
    overlap_questions: int = 0

    def as_json(self) -> dict[str, Any]:
        """The report as one JSON object (``--json``)."""
        return {
            "k": self.k,
            "embed": self.embed,
            "model": self.model,
            "questions": self.questions,
            "summarized_questions": self.summarized,
            "range_questions": self.range_questions,
            "overlap_questions": self.overlap_questions,
            "apart": {kind: count for kind, count in self.apart},
            "corpus": [
                {"corpus_id": cid, "file": name, "chars": chars} for cid, name, chars in self.corpus
            ],
            "settings": [result.as_json() for result in self.results],
        }


def _scored(
    questions: Sequence[Question], indexed: Sequence[IndexedChunk], top: npt.NDArray[np.intp]
) -> tuple[
    list[QuestionScore | None], list[OverlapScore | None], list[tuple[tuple[str, int], ...]]
]:
    """Per question: the range score (None unless every reference is a range), the overlap
    score (None when no reference holds a word) and the retrieved (corpus_id, position)."""
    scores: list[QuestionScore | None] = []
    overlaps: list[OverlapScore | None] = []
    retrieved: list[tuple[tuple[str, int], ...]] = []
    for q, row in zip(questions, top, strict=True):
        hits = [indexed[int(i)] for i in row]
        scores.append(_range_score(q, hits))
        overlaps.append(_overlap_score(q, hits))
        retrieved.append(tuple((h.corpus_id, h.position) for h in hits))
    return scores, overlaps, retrieved


def _range_score(q: Question, hits: Sequence[IndexedChunk]) -> QuestionScore | None:
    if not q.ranged:
        return None
    references = [(r.corpus_id, r.span) for r in q.cited if r.span is not None]
    chunks = [
        Retrieved(h.corpus_id, (), h.chars)
        if h.ranges is None
        else Retrieved(h.corpus_id, h.ranges)
        for h in hits
    ]
    return score_files(references, chunks)


def _overlap_score(q: Question, hits: Sequence[IndexedChunk]) -> OverlapScore | None:
    references = [TextReference(r.corpus_id, r.content, r.page) for r in q.cited]
    try:
        return score_overlap(
            references, [RetrievedText(h.corpus_id, h.text, h.pages) for h in hits]
        )
    except ValueError:  # no reference holds a word (a range reference of punctuation only)
        return None


def _type_order(kinds: Iterable[str | None]) -> list[str]:
    """The question types present, by name, the types set apart last."""
    present = {kind for kind in kinds if kind is not None}
    return sorted(present, key=lambda kind: (kind in APART_TYPES, kind))


def _setting_result(
    setting: Setting,
    indexed: Sequence[IndexedChunk],
    questions: Sequence[Question],
    top: npt.NDArray[np.intp],
) -> SettingResult:
    """Score one setting's retrievals and summarise them (overall, by file, by type)."""
    scores, overlaps, retrieved = _scored(questions, indexed, top)
    rows = list(zip(questions, scores, overlaps, strict=True))
    kept = [(q, s, o) for q, s, o in rows if q.type not in APART_TYPES]
    per_corpus = {
        cid: summarize([s for q, s, _ in kept if q.corpus_id == cid and s is not None])
        for cid in sorted({q.corpus_id for q, s, _ in kept if s is not None})
    }
    per_type = {
        kind: _group(
            [s for q, s, _ in rows if q.type == kind], [o for q, _, o in rows if q.type == kind]
        )
        for kind in _type_order(q.type for q in questions)
    }
    overall = _group([s for _, s, _ in kept], [o for _, _, o in kept])
    return SettingResult(
        setting=setting,
        chunks=len(indexed),
        mean_chars=math.fsum(c.chars for c in indexed) / len(indexed),
        mean_tokens=math.fsum(c.tokens for c in indexed) / len(indexed),
        exact_share=sum(c.exact for c in indexed) / len(indexed),
        summary=overall.ranges,
        per_corpus=per_corpus,
        scores=tuple(scores),
        retrieved=tuple(retrieved),
        overlap=overall.overlap,
        overlaps=tuple(overlaps),
        per_type=per_type,
        types=tuple(q.type for q in questions),
    )


def evaluate(
    questions: Sequence[Question],
    corpus: Mapping[str, CorpusDocument],
    settings: Sequence[Setting],
    embedder: TextEmbedder,
    k: int = 5,
    embed: EmbedMode = "text",
    model: str = "",
    parsers: ParserChoice | None = None,
) -> EvalResult:
    """Chunk, embed, retrieve the top ``k`` per question from one index over all documents
    and score every setting. ``corpus`` comes from :func:`load_corpus` (references
    checked); ``model`` only names the embedder in the report; ``parsers`` reads the files
    (default: each media type's default parser)."""
    if k < 1:
        raise UsageError(f"k must be at least 1, got {k}")
    if embed not in EMBED_MODES:
        raise UsageError(f"embed must be one of {', '.join(EMBED_MODES)}, got {embed!r}")
    ranged = frozenset(r.corpus_id for q in questions for r in q.cited if r.span is not None)
    # chunk every setting first: a label that cannot chunk the files fails before embedding
    parse = parsers or ParserChoice()
    indexes = [_index_chunks(setting, corpus, embed, ranged, parse) for setting in settings]
    for setting, indexed in zip(settings, indexes, strict=True):
        if not indexed:
            raise UsageError(f"{setting.name} made no chunks of the corpus; nothing to retrieve")
    question_vectors = _embed(embedder, [q.question for q in questions])
    results = []
    for setting, indexed in zip(settings, indexes, strict=True):
        chunk_vectors = _embed(embedder, [c.embed_text for c in indexed])
        top = _top_k(question_vectors, chunk_vectors, k)
        results.append(_setting_result(setting, indexed, questions, top))
    kept = [q for q in questions if q.type not in APART_TYPES]
    apart = [q.type for q in questions if q.type in APART_TYPES]
    return EvalResult(
        k=k,
        embed=embed,
        model=model,
        questions=len(questions),
        corpus=tuple(
            (d.corpus_id, d.name, None if d.text is None else len(d.text))
            for _, d in sorted(corpus.items())
        ),
        results=tuple(results),
        apart=tuple((kind, apart.count(kind)) for kind in APART_TYPES if kind in apart),
        summarized=len(kept),
        range_questions=sum(q.ranged for q in kept),
        overlap_questions=sum(any(word_grams(c, 1) for c in q.contents) for q in kept),
    )


# --- presentation ------------------------------------------------------------------------


def _exact_cell(share: float) -> str:
    if share == 1.0:
        return "yes"
    return "no" if share == 0.0 else f"{100 * share:.0f}%"


def _percent(summary: Summary | OverlapSummary | None, metric: str) -> str:
    """A summary's ``metric`` (a fraction) as a percentage cell; "-" when the measure
    covers no question (no summary)."""
    return "-" if summary is None else f"{100 * getattr(summary, metric):.1f}"


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
    "overlap recall %",
    "overlap precision %",
)

_TYPE_HEADER = (
    "setting",
    "type",
    "questions",
    "ranged",
    "recall %",
    "IoU %",
    "overlap recall %",
)


def _rows(result: EvalResult) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in result.results:
        ranges, overlap = r.summary, r.overlap
        rows.append(
            (
                r.setting.name,
                r.setting.policy.tokenizer,
                str(r.chunks),
                f"{r.mean_chars:.0f}",
                f"{r.mean_tokens:.0f}",
                _exact_cell(r.exact_share),
                _percent(ranges, "recall"),
                _percent(ranges, "precision"),
                _percent(ranges, "iou"),
                _percent(overlap, "recall"),
                _percent(overlap, "precision"),
            )
        )
    return rows


def _type_rows(result: EvalResult) -> list[tuple[str, ...]]:
    """One row per setting and question type (none when the questions have no types)."""
    return [
        (
            r.setting.name,
            kind,
            str(group.questions),
            str(group.ranges.questions if group.ranges else 0),
            _percent(group.ranges, "recall"),
            _percent(group.ranges, "iou"),
            _percent(group.overlap, "recall"),
        )
        for r in result.results
        for kind, group in r.per_type.items()
    ]


_EMBEDDED = {
    "text": "chunk text",
    "contextualized": "contextualized chunk text",
    "embed_text": "chunks' embed_text",
}


def _caption(result: EvalResult) -> str:
    apart = "".join(
        f"; {kind} ({count} question{'' if count == 1 else 's'}) set apart: in the rows by "
        "type only"
        for kind, count in result.apart
    )
    return (
        f"top {result.k} of one index over {len(result.corpus)} documents, "
        f"{result.questions} questions, model {result.model or 'given'}, embedding the "
        f"{_EMBEDDED[result.embed]}; mean tokens of the chunk text under the tokenizer; exact: "
        "share of chunks whose text is the exact source slice they cite; recall, precision "
        f"and IoU over the {result.range_questions} of {result.summarized} questions whose "
        "every reference is a character range, overlap recall and precision (word trigrams "
        f"of the references in the retrieved chunks' text) over {result.overlap_questions}"
        f"{apart}"
    )


_TYPE_CAPTION = (
    "by question type, every type shown: recall and IoU over the type's questions whose every "
    "reference is a character range (the ranged column), overlap recall over all of its "
    "questions"
)


def _grid(header: tuple[str, ...], body: list[tuple[str, ...]], left: int) -> list[str]:
    """Aligned lines: the header, a rule, the rows; the first ``left`` columns (and the
    header of the exact column) flush left, the numbers flush right."""
    rows = [header, *body]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.ljust(w) if i < left or (header[i] == "exact" and n == 0) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def format_table(result: EvalResult) -> str:
    """The results as a plain-text table (one row per setting) under a one-line caption,
    then, when the questions have types, a table by type under its own caption."""
    lines = [_caption(result), *_grid(_HEADER, _rows(result), 2)]
    by_type = _type_rows(result)
    if by_type:
        lines += ["", _TYPE_CAPTION, *_grid(_TYPE_HEADER, by_type, 2)]
    return "\n".join(lines) + "\n"


def check_chart_dependency() -> None:
    """Refuse in one sentence when matplotlib (the ``report`` extra) is not installed."""
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError(
            "the HTML page of kebab-chunk eval draws its chart with matplotlib, which is not "
            "installed; install the report extra (pip install matplotlib) or leave out the "
            "HTML page"
        )


def _measures(r: SettingResult) -> dict[str, float]:
    """The chart's bars of one setting, in percent (NaN: the measure covers no question,
    so no bar is drawn)."""
    ranges, overlap = r.summary, r.overlap
    nan = math.nan
    return {
        "recall": 100 * ranges.recall if ranges else nan,
        "precision": 100 * ranges.precision if ranges else nan,
        "IoU": 100 * ranges.iou if ranges else nan,
        "overlap recall": 100 * overlap.recall if overlap else nan,
    }


def _chart(result: EvalResult) -> str:
    """The SVG chart: the scores per setting as bars beside recall against chunk size."""
    from kebab_chunk.report.report import _figure, _plain, _svg

    names = [r.setting.name for r in result.results]
    fig = _figure(11.0, 4.2)
    bars, scatter = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    colours = {"recall": "#2f6db5", "precision": "#e08a1e", "IoU": "#3a9a5b"}
    colours["overlap recall"] = "#8a5ab5"
    width = 0.8 / len(colours)
    for m, (metric, colour) in enumerate(colours.items()):
        values = [_measures(r)[metric] for r in result.results]
        xs = [i + (m - (len(colours) - 1) / 2) * width for i in range(len(names))]
        bars.bar(xs, values, width=width, color=colour, label=metric)
    bars.set_xticks(range(len(names)))
    bars.set_xticklabels([_plain(n) for n in names], rotation=20, ha="right", fontsize=8)
    bars.set_ylabel("%")
    bars.set_title(f"top {result.k}: scores per setting", fontsize=10, loc="left")
    bars.legend(fontsize=8)
    for r in result.results:
        for metric in ("recall", "overlap recall"):
            value = _measures(r)[metric]
            if math.isnan(value):
                continue
            scatter.scatter([r.mean_chars], [value], color=colours[metric])
            scatter.annotate(
                _plain(r.setting.name),
                (r.mean_chars, value),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
    scatter.set_xlabel("mean chunk size (characters)")
    scatter.set_ylabel("recall % (blue: characters, purple: overlap)")
    scatter.set_title("recall against chunk size", fontsize=10, loc="left")
    fig.subplots_adjust(left=0.06, right=0.98, top=0.92, bottom=0.28, wspace=0.25)
    return _svg(fig)


def _html_table(header: tuple[str, ...], rows: list[tuple[str, ...]], left: int) -> str:
    """A grid table; the columns after the first ``left`` (but exact) hold numbers."""
    from kebab_chunk.report._html import esc

    def cls(i: int) -> str:
        return "num" if i >= left and header[i] != "exact" else ""

    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="{cls(i)}">{esc(c)}</td>' for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def render_html(result: EvalResult) -> str:
    """A self-contained HTML page: the table, the table by type (when the questions have
    types) and a chart of the scores per setting beside recall against mean chunk size
    (matplotlib, the ``report`` extra)."""
    check_chart_dependency()
    from kebab_chunk.report._html import esc, page

    chart = _chart(result)
    files = ", ".join(
        f"{name} ({'binary' if chars is None else f'{chars:,} characters'})"
        for _, name, chars in result.corpus
    )
    by_type = _type_rows(result)
    types = (
        f'<p class="sub">{esc(_TYPE_CAPTION)}</p>' + _html_table(_TYPE_HEADER, by_type, 2)
        if by_type
        else ""
    )
    body = (
        "<h1>Retrieval evaluation</h1>"
        f'<p class="sub">{esc(_caption(result))}. Corpus: {esc(files)}.</p>'
        f"{_html_table(_HEADER, _rows(result), 2)}{types}"
        f'<div class="chart">{chart}</div>'
    )
    return page("kebab-chunk eval", body, css=".chart svg { max-width: 100%; height: auto; }")
