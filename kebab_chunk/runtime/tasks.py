"""The work done inside an isolation helper process: parse, chunk, or both, per document.

Beam-free on purpose: a helper imports this module (and the parsers and chunkers), never
Apache Beam, so starting one costs a fraction of a Beam worker's start-up and memory. The
tasks travel to the helper with the standard ``pickle``, so everything they hold (parse
functions, chunkers, policies) must be importable by reference: module-level classes and
functions, no lambdas.

Every failure a parser or chunker raises becomes an :class:`ErrorRecord` here; what cannot
be caught here (a hang, a crash) is turned into one by the Beam side (``stopped_error``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kebab_chunk._core import installed
from kebab_chunk.chunkers.base import Chunker, needs_of
from kebab_chunk.chunkers.embedding import with_embedding
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
from kebab_chunk.elements import DocumentOutcome, EncodedChunks, RawDocument
from kebab_chunk.errors import LimitExceededError, ParseError
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy
from kebab_chunk.output.records import DocumentFacts, ErrorRecord
from kebab_chunk.output.spill_entry import row_entry, row_of
from kebab_chunk.parsers.base import ParseLimits
from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    ParserChoice,
    detect_media_type,
    get_parser_by_version,
    parse_document,
    parser_versions,
)
from kebab_chunk.runtime.output_limit import DEFAULT_OUTPUT_LIMIT, OutputLimit
from kebab_chunk.table import chunk_document_with_core

__all__ = [
    "DEFAULT_MAX_MEMORY_MB",
    "DEFAULT_PARSE_TIMEOUT_S",
    "MEMORY_LIMIT",
    "NO_ACCEPTING_CHUNKER",
    "ChunkTask",
    "Chunked",
    "ParseChunkTask",
    "ParseFn",
    "ParseTask",
    "Parsed",
    "describe",
    "error_type_of",
    "memory_message",
    "outcome",
    "ran_out_of_memory",
]

DEFAULT_PARSE_TIMEOUT_S = 60.0
#: Address space (MiB) a parse or chunk helper process may add to what it started with.
DEFAULT_MAX_MEMORY_MB = 2048
#: ``error_type`` of a document that hit the memory guard.
MEMORY_LIMIT = "memory_limit"
#: ``error_type`` of a document whose chunks under a label exceed the output limit.
LIMIT_EXCEEDED = LimitExceededError.error_type

#: The callable that parses one document; it must be importable on workers (module level).
ParseFn = Callable[[bytes, str, "str | None", ParseLimits], CanonicalDocument]

NO_ACCEPTING_CHUNKER = "no_accepting_chunker"
_MARKDOWN = "text/markdown"


def ran_out_of_memory(exc: BaseException) -> bool:
    """True when ``exc`` is, or was raised while handling, a ``MemoryError``.

    Parsers wrap library failures (the PDF parser turns anything pypdf raises into a
    ParseError), so the memory guard's ``MemoryError`` is looked for along the chain.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def error_type_of(exc: BaseException) -> str:
    """``memory_limit``, ``ParseError.error_type`` for our own errors, else the class name."""
    if ran_out_of_memory(exc):
        return MEMORY_LIMIT
    return exc.error_type if isinstance(exc, ParseError) else type(exc).__name__


def memory_message(what: str, source_uri: str, max_memory_mb: int | None) -> str:
    """The one sentence of a ``memory_limit`` error row."""
    return (
        f"{what} {source_uri} needed more memory than --max-memory-mb={max_memory_mb} "
        "allows and was stopped; raise the limit or remove the file from the corpus."
    )


def describe(exc: BaseException) -> tuple[str, str]:
    """``(error_type, message)`` of a parser or chunker failure, taken while handling it.

    The message is empty for ``memory_limit``: its sentence is written after the handler,
    once the traceback (and the memory the failed call held) has been released.
    """
    try:
        error_type = error_type_of(exc)
        return error_type, "" if error_type == MEMORY_LIMIT else str(exc) or type(exc).__name__
    except MemoryError:
        return MEMORY_LIMIT, ""


def _default_parse(
    raw: bytes, source_uri: str, media_type: str | None, limits: ParseLimits
) -> CanonicalDocument:
    return parse_document(raw, source_uri, media_type, limits)


class ParseTask:
    """Runs in the helper process: returns the document, or the error row for it.

    ``max_memory_mb`` is the helper's memory guard, named in ``memory_limit`` messages.
    """

    def __init__(
        self, parse_fn: ParseFn | None, limits: ParseLimits, max_memory_mb: int | None = None
    ) -> None:
        self._parse_fn = parse_fn or _default_parse
        self._limits = limits
        self._max_memory_mb = max_memory_mb

    def setup(self) -> None:
        """Import every registered parser now, so no document pays for (or fails) it, and
        the compiled core, whose allocator reserves its first arena of address space when
        it loads: before the memory guard, as the rest of the code's memory."""
        installed()
        for version, media_types in parser_versions().items():
            for media_type in media_types:
                try:
                    get_parser_by_version(version, media_type)
                except Exception:  # an optional dependency missing: that parse reports it
                    continue

    @property
    def limits(self) -> ParseLimits:
        return self._limits

    def reads_default_markdown(self, doc: RawDocument) -> bool:
        """Whether ``doc`` is Markdown this task reads with the default Markdown parser
        (so the compiled core may read it instead: the same document, the same rows)."""
        media_type = doc.media_type or detect_media_type(doc.source_uri, doc.raw[:8])
        if media_type != _MARKDOWN:
            return False
        if self._parse_fn is _default_parse:
            return True
        choice = self._parse_fn
        return (  # exactly ParserChoice: a subclass may parse differently
            type(choice) is ParserChoice
            and choice.version_for(_MARKDOWN) == DEFAULT_PARSER_VERSIONS[_MARKDOWN]
        )

    def run(self, doc: RawDocument, enter: Any = None) -> CanonicalDocument | ErrorRecord:
        return self.parse(doc)

    def parse(self, doc: RawDocument) -> CanonicalDocument | ErrorRecord:
        try:
            return self._parse_fn(doc.raw, doc.source_uri, doc.media_type, self._limits)
        except Exception as exc:  # every parser failure is a dead letter
            error_type, message = describe(exc)
        # Outside the handler: the traceback, and with it all the parser held, is released;
        # after running out of memory, so is what it left in reference cycles.
        if error_type == MEMORY_LIMIT:
            gc.collect()
            message = memory_message("parsing", doc.source_uri, self._max_memory_mb)
        return ErrorRecord(
            doc.source_uri,
            "parse",
            error_type,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
        )


@dataclass(frozen=True)
class Chunked:
    """Everything chunking one document produced; crosses the helper-process boundary.
    The chunks are in ``chunks``, or with ``ChunkTask(encode=True)`` in ``encoded``."""

    chunks: tuple[Chunk, ...]
    errors: tuple[ErrorRecord, ...]
    outcome: DocumentOutcome
    encoded: tuple[EncodedChunks, ...] = ()


def outcome(doc: CanonicalDocument, counts: Sequence[tuple[str, int]]) -> DocumentOutcome:
    """The DocumentOutcome of ``doc`` given ``(label, chunk count)`` pairs."""
    return DocumentOutcome(doc.source_uri, DocumentFacts.of(doc), tuple(counts))


class ChunkTask:
    """Chunks one document under each applicable label (runs in the helper process).

    The chunker instances are resolved on the launching machine and travel with the task,
    so a helper process needs no registry lookup (and sees exactly the launcher's labels).

    Returns one ``Chunked`` per document (it crosses the helper-process boundary);
    ``max_memory_mb`` is only named in ``memory_limit`` messages. ``encode=True`` gives
    each label's chunks as one :class:`~kebab_chunk.elements.EncodedChunks` of spill
    entries instead of Chunk objects (the job's path: encoding here costs the helper what
    pickling the Chunks cost it, and spares the worker unpickling and re-encoding them).
    """

    def __init__(
        self,
        labels: tuple[str, ...] | None,
        policy: ChunkPolicy,
        chunkers: dict[str, Chunker],
        max_memory_mb: int | None = None,
        output_limit: OutputLimit = DEFAULT_OUTPUT_LIMIT,
        *,
        encode: bool = False,
    ) -> None:
        self._encode = encode
        self._labels = labels
        self._policy = policy
        self._chunkers = chunkers
        self._max_memory_mb = max_memory_mb
        self._output_limit = output_limit

    def _labels_for(self, doc: CanonicalDocument) -> tuple[str, ...]:
        if self._labels:
            return self._labels
        return DEFAULT_LABELS_BY_MEDIA_TYPE.get(doc.media_type, ())

    def setup(self) -> None:
        installed()  # before the memory guard (see ParseTask.setup)

    def run(self, doc: CanonicalDocument, enter: Any = None) -> Chunked:
        return self.chunk(doc)

    def chunk(self, doc: CanonicalDocument) -> Chunked:
        counts: list[tuple[str, int]] = []
        chunks: list[Chunk] = []
        encoded: list[EncodedChunks] = []
        errors: list[ErrorRecord] = []
        labels = self._labels_for(doc)
        for label in labels:
            chunker = self._chunkers[label]
            failed: tuple[str, str] | None = None
            try:
                if not chunker.accepts(doc):
                    continue
                made = self._output_limit.collect(self._iter_chunks(chunker, doc), doc)
                if made is None:
                    failed = (LIMIT_EXCEEDED, self._output_limit.message(doc, label))
                else:
                    produced = with_embedding(made, chunker, self._policy)
                    if self._encode:
                        entries = tuple(row_entry(row_of(c)) for c in produced)
            except Exception as exc:  # a chunker failure is a dead letter
                failed = describe(exc)
            if failed is not None:  # handled outside the handler, as in ParseTask.parse
                if failed[0] == MEMORY_LIMIT:
                    gc.collect()
                errors.append(self._error(doc, label, *failed))
                counts.append((label, 0))
                continue
            counts.append((label, len(produced)))
            if self._encode:
                encoded.append(EncodedChunks(label, entries))
            else:
                chunks.extend(produced)
        if not counts:
            errors.append(self._not_accepted(doc, labels, self._chunkers))
        return Chunked(tuple(chunks), tuple(errors), outcome(doc, counts), tuple(encoded))

    def chunk_with_core(self, raw: RawDocument, limits: ParseLimits) -> Chunked | None:
        """Parse and chunk a Markdown document in the compiled core, giving what parsing
        and :meth:`chunk` would (the same spill entries and outcome); None when encoding is
        off, the core does not take the document under every label, or its chunks come near
        the output limit (the Python path then decides)."""
        if not self._encode:
            return None
        labels = self._labels or DEFAULT_LABELS_BY_MEDIA_TYPE.get(_MARKDOWN, ())
        found = chunk_document_with_core(raw.raw, raw.source_uri, labels, self._policy, limits)
        if found is None:
            return None
        encoded: list[EncodedChunks] = []
        counts: list[tuple[str, int]] = []
        for label, entries in found.entries:
            # An entry holds its chunk's text, headings and captions at least once, so
            # entries within the limit's floor hold chunks within the limit.
            if sum(map(len, entries)) > self._output_limit.floor_chars:
                return None
            encoded.append(EncodedChunks(label, entries))
            counts.append((label, len(entries)))
        done = DocumentOutcome(raw.source_uri, found.facts, tuple(counts))
        return Chunked((), (), done, tuple(encoded))

    def _iter_chunks(self, chunker: Chunker, doc: CanonicalDocument) -> Iterable[Chunk]:
        """The chunks, lazily when the chunker streams them (so the output limit stops it
        early), else its list."""
        lazy = getattr(chunker, "iter_chunks", None)
        if callable(lazy):
            chunks: Iterable[Chunk] = lazy(doc, self._policy)
            return chunks
        return chunker.chunk(doc, self._policy)

    def _error(
        self, doc: CanonicalDocument, label: str, error_type: str, message: str
    ) -> ErrorRecord:
        if error_type == MEMORY_LIMIT:
            message = memory_message(f"chunking ({label})", doc.source_uri, self._max_memory_mb)
        return ErrorRecord(
            doc.source_uri,
            "chunk",
            error_type,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
            chunker_version=label,
        )

    @staticmethod
    def _not_accepted(
        doc: CanonicalDocument, labels: tuple[str, ...], chunkers: dict[str, Chunker]
    ) -> ErrorRecord:
        needs = ((label, needs_of(chunkers[label])) for label in labels)
        pins = (need.refusal(label, doc) for label, need in needs if need is not None)
        pin = next((sentence for sentence in pins if sentence), None)
        if pin is not None:  # a label that takes this media type from another parser
            message = f"{pin}."
        elif labels:
            message = (
                f"none of the requested chunkers ({', '.join(labels)}) accepts "
                f"{doc.media_type} documents; add one that does to --labels."
            )
        else:
            message = (
                f"no chunker runs by default for {doc.media_type} documents; "
                "name one with --labels."
            )
        return ErrorRecord(
            doc.source_uri,
            "chunk",
            NO_ACCEPTING_CHUNKER,
            message,
            content_hash=doc.content_hash,
            media_type=doc.media_type,
        )


#: What the worker needs of a parsed document if its chunking then fails: its facts, so
#: the documents table has the same row whether chunking ends or is stopped.
Parsed = DocumentFacts


class ParseChunkTask:
    """Runs in the helper: parse (stage 0), report ``Parsed``, chunk (stage 1).

    Returns the parse error row, or the ``Chunked`` result of the document. Markdown the
    default parser reads is parsed and chunked by the compiled core in one call when it
    takes it (:meth:`ChunkTask.chunk_with_core`; stage 0 then covers both).
    """

    def __init__(self, parse: ParseTask, chunk: ChunkTask) -> None:
        self._parse = parse
        self._chunk = chunk

    def setup(self) -> None:
        self._parse.setup()
        self._chunk.setup()

    def run(self, raw: RawDocument, enter: Any) -> ErrorRecord | Chunked:
        if self._parse.reads_default_markdown(raw):
            fast = self._chunk.chunk_with_core(raw, self._parse.limits)
            if fast is not None:
                enter(1, fast.outcome.facts)
                return fast
        doc = self._parse.parse(raw)
        if isinstance(doc, ErrorRecord):
            return doc
        enter(1, DocumentFacts.of(doc))
        return self._chunk.chunk(doc)
