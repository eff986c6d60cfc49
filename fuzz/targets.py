"""Fuzz targets: one per registered parser version and media type, with their oracle.

A target feeds arbitrary bytes to one parser (by version, so every registered parser is
fuzzed, defaults or not) and then to the default chunkers of that media type. A *crash* is
anything the contract does not allow:

* an exception that is not a :class:`~kebab_chunk.errors.ParseError` (parsers must turn
  every bad input into one, docs/internals/contract.md, "Bad input"), or any exception from a
  chunker;
* a document that breaks the source-location conventions: a block without spans, a span
  outside the decoded text, or (Markdown and plain text, whose block text is "exactly
  ``decoded[char_start:char_end]``") a block text that is not its source slice;
* chunks that break the record invariants: positions ``0..n-1``, unique ids.

Hangs and memory blow-ups are crashes too; the engines (``python -m fuzz``) enforce a
per-input time limit and a memory limit around :func:`check`.

When the compiled core is installed, the target ``core-markdown`` is differential: the
Markdown rows of :func:`~kebab_chunk.table.chunk_table` under the md-heading and hybrid
engine labels the core runs, through the core, must equal those of the Python path (or
both must raise the same error type), so must what the job's helper gives (spill entries
and outcome), and a panic in the core shows as its warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kebab_chunk._core import installed, using
from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
from kebab_chunk.elements import RawDocument
from kebab_chunk.errors import ParseError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.model.spans import LineSpan
from kebab_chunk.parsers.base import DEFAULT_LIMITS
from kebab_chunk.parsers.decode import decode_text
from kebab_chunk.parsers.registry import detect_media_type, parse_document, parser_versions
from kebab_chunk.runtime.tasks import ChunkTask, ParseChunkTask, ParseTask
from kebab_chunk.table import chunk_table

__all__ = ["POLICY", "Target", "check", "seed_files", "targets"]

REPO = Path(__file__).resolve().parents[1]
#: A small budget, so chunkers split even the short inputs fuzzers make.
POLICY = ChunkPolicy(target_tokens=16, overlap_tokens=4)
#: Parsers whose block text must be the exact source slice (docs conventions).
_EXACT_TEXT = {"text/markdown", "text/plain"}
#: Media references: their text is alt text or caption, not a source slice (documented).
_MEDIA = ("image_ref", "audio_ref")
#: The labels the core's differential target compares.
_CORE_LABELS = ("md-heading-v2", "md-heading-v3", "hybrid-v3", "hybrid-v4")
_URI_BY_MEDIA_TYPE = {
    "text/markdown": "fuzz.md",
    "text/plain": "fuzz.txt",
    "application/pdf": "fuzz.pdf",
    "text/html": "fuzz.html",
    "text/csv": "fuzz.csv",
    "text/tab-separated-values": "fuzz.tsv",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "fuzz.docx",
    "application/vnd.docling+json": "fuzz.docling.json",
}


@dataclass(frozen=True)
class Target:
    """One parser version reading one media type."""

    name: str
    version: str
    media_type: str
    #: Compare the compiled core with the Python path instead of checking one parser.
    differential: bool = False

    @property
    def uri(self) -> str:
        return _URI_BY_MEDIA_TYPE.get(self.media_type, "fuzz.bin")


def targets() -> dict[str, Target]:
    """Every registered (parser version, media type), by target name."""
    found: dict[str, Target] = {}
    for version, media_types in parser_versions().items():
        for media_type in media_types:
            name = version if len(media_types) == 1 else f"{version}-{media_type.split('/')[1]}"
            found[name] = Target(name, version, media_type)
    if installed() is not None:
        found["core-markdown"] = Target("core-markdown", "md-pyromark-v1", "text/markdown", True)
    return found


def seed_files(target: Target) -> Iterator[Path]:
    """The committed fixtures of the target's media type: the fuzzers' starting corpus."""
    for path in sorted((REPO / "fixtures").rglob("*")):
        if not path.is_file() or path.suffix == ".py" or path.name == "manifest.json":
            continue
        if detect_media_type(path.name, path.read_bytes()[:8]) == target.media_type:
            yield path


def check(target: Target, data: bytes) -> None:
    """Parse and chunk ``data``; raise (AssertionError or the escaping error) on a crash."""
    if target.differential:
        _check_core(target, data)
        return
    try:
        doc = parse_document(data, target.uri, target.media_type, parser_version=target.version)
    except ParseError:
        return  # bad input reported the way the contract asks
    assert doc.parser_version == target.version
    decoded = decode_text(data, target.uri)[0] if target.media_type in _EXACT_TEXT else None
    for block in doc.blocks:
        assert block.spans, f"block {block.block_id} has no span"
        for span in block.spans:
            assert 0 <= span.char_start <= span.char_end, span
            if isinstance(span, LineSpan) and decoded is not None:
                assert span.char_end <= len(decoded), (span, len(decoded))
                assert 1 <= span.line_start <= span.line_end, span
        if decoded is not None and len(block.spans) == 1 and block.kind not in _MEDIA:
            span = block.spans[0]
            assert decoded[span.char_start : span.char_end] == block.text, (span, block.kind)
    for label in DEFAULT_LABELS_BY_MEDIA_TYPE.get(target.media_type, ()):
        chunker = get_chunker(label)
        if not chunker.accepts(doc):
            continue
        chunks = chunker.chunk(doc, POLICY)
        assert [c.position for c in chunks] == list(range(len(chunks))), label
        assert len({c.chunk_id for c in chunks}) == len(chunks), label


def _check_core(target: Target, data: bytes) -> None:
    """The core's rows equal the Python path's, or both paths fail alike; a panic in the
    core (which the core turns into its warning, then the Python path) is a crash too."""
    panics: list[str] = []

    class _Panics(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            panics.append(record.getMessage())

    handler = _Panics(logging.WARNING)
    logger = logging.getLogger("kebab_chunk.table")
    logger.addHandler(handler)
    try:
        for label in _CORE_LABELS:
            got = _outcome(data, target, label, "native")
            want = _outcome(data, target, label, "python")
            assert got == want, (label, got if isinstance(got, str) else "rows differ")
        got, want = _helper(data, target, "native"), _helper(data, target, "python")
        assert got == want, ("helper", got if isinstance(got, str) else "entries differ")
    finally:
        logger.removeHandler(handler)
    assert not panics, panics[0]


def _helper(data: bytes, target: Target, mode: str) -> object:
    """What the job's helper gives for ``data`` under the core's labels together (spill
    entries, outcome, error rows), or the name of what it raised."""
    raw = RawDocument(target.uri, target.media_type, content_hash(data), data)
    chunkers = {label: get_chunker(label) for label in _CORE_LABELS}
    task = ParseChunkTask(
        ParseTask(None, DEFAULT_LIMITS), ChunkTask(_CORE_LABELS, POLICY, chunkers, encode=True)
    )
    with using(mode):
        try:
            return task.run(raw, lambda stage, note: None)
        except Exception as error:  # compared between the paths
            return type(error).__name__


def _outcome(data: bytes, target: Target, label: str, mode: str) -> object:
    """The rows of ``data`` under ``label`` by one path, or the name of what it raised."""
    with using(mode):
        try:
            table = chunk_table(data, target.uri, label, POLICY, media_type=target.media_type)
        except Exception as error:  # compared between the paths
            return type(error).__name__
    return table.to_pylist()
