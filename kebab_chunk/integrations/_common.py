"""What every adapter shares: reading records in any form, the two metadata forms, lazy imports.

**Accepted input.** Wherever an adapter takes records it takes :class:`~kebab_chunk.model.Chunk`
objects, their dict form (``chunk.model_dump()``, JSON) and the pipeline's own Parquet rows,
however they were read back: pyarrow rows (``Table.to_pylist()``, whose spans carry every
span kind's fields, null where a kind does not use them), rows of a pandas frame (numpy
arrays for list columns, a categorical ``chunker_version``), a whole ``pandas.DataFrame``,
a ``pyarrow.Table``, ``RecordBatch`` or ``pyarrow.dataset`` dataset. Values are brought back
to plain Python by looking at their type's module, so neither pandas nor numpy is imported
here. Columns that are not record fields (a query's score, an index column) are ignored.

``chunker_version`` is the hive partition column of ``OUT/chunks``: reading the directory
(``pd.read_parquet(OUT / "chunks")``, ``pyarrow.dataset.dataset(..., partitioning="hive")``)
restores it, a single part file read on its own has no such column. A row without it is
refused with a sentence saying so, because the label is part of what the record means and
cannot be guessed.

**Metadata forms** (``metadata=`` of every adapter):

* ``"full"`` (default): every record field except ``text`` as JSON values (lists, span
  dicts), plus ``content_kind``; the exact record can be rebuilt from it.
* ``"flat"``: scalars only (``str`` and ``int``; never a list, dict or ``None``), the form
  vector stores such as Chroma require. See :func:`flat_metadata` for the keys.

**Content.** An adapter's text is the chunk ``text``, or with ``contextualized=True`` the
record's ``embed_text``: the one text to embed that the pipeline writes for every label
(docs/internals/contract.md, "The text to embed"), so a vector store embeds exactly what the Parquet
column holds. ``content_kind`` says which (``"text"`` or ``"embed_text"``); full metadata
then holds every other field, so the exact record can be rebuilt either way. Content
made before ``embed_text`` existed (``content_kind`` ``"contextualized"``: heading path and
caption lines, then the text) is still read back.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from kebab_chunk.chunkers.contextualize import context_prefix, contextualize
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import ConfigurationError, RecordError, WrongTypeError
from kebab_chunk.model import Chunk, ElementSpan, LineSpan, PageSpan

__all__ = [
    "CONTENT_KIND_KEY",
    "FLAT_KEYS",
    "FLAT_SEPARATOR",
    "MetadataMode",
    "adapter_metadata",
    "adapter_text",
    "as_record",
    "as_records",
    "check_metadata_mode",
    "contextualize",
    "convert_all",
    "flat_metadata",
    "install_hint",
    "lazy_export",
    "record_from_content",
    "record_from_metadata",
    "record_metadata",
    "require",
    "strip_context",
]

#: Metadata key saying whether the target's text is the chunk text or contextualised.
CONTENT_KIND_KEY = "content_kind"

#: ``"full"``: the whole record as JSON values; ``"flat"``: scalars only.
MetadataMode = Literal["full", "flat"]

#: What joins ``heading_path`` (and ``captions``) into one flat string: a line break, as
#: :func:`contextualize` writes them, so the flat heading path is the first lines of the
#: contextualised text and a ``>`` or ``/`` inside a heading stays unambiguous.
FLAT_SEPARATOR = "\n"

#: Every key of :func:`flat_metadata`, in the order it writes them.
FLAT_KEYS = (
    "chunk_id",
    "doc_id",
    "source_uri",
    "chunker_version",
    "policy_hash",
    "parser_version",
    "position",
    "heading_path",
    "captions",
    "token_estimate",
    "content_hash",
    "span_kind",
    "span_count",
    "page",
    "page_end",
    "line_start",
    "line_end",
    "char_start",
    "char_end",
    "span_ref",
)

_RECORD_FIELDS = tuple(name for name in Chunk.model_fields if name != "text")
_REQUIRED_FIELDS = tuple(name for name, f in Chunk.model_fields.items() if f.is_required())
_FIX_ROWS = "pass Chunk records, their dict form, or rows read from a run's chunks directory"


_T_co = TypeVar("_T_co", covariant=True)


class ConvertOne(Protocol[_T_co]):
    """An adapter's one-record conversion (``to_langchain_document`` and the like)."""

    def __call__(
        self, chunk: Chunk | Mapping[str, Any], *, contextualized: bool, metadata: MetadataMode
    ) -> _T_co: ...


def convert_all(
    one: ConvertOne[_T_co], chunks: Any, *, contextualized: bool, metadata: object
) -> list[_T_co]:
    """``one`` applied to every record of ``chunks`` (any accepted form), in order; a bad
    ``metadata`` is refused before any record is read."""
    mode = check_metadata_mode(metadata)
    records = as_records(chunks)
    return [one(record, contextualized=contextualized, metadata=mode) for record in records]


def check_metadata_mode(value: object) -> MetadataMode:
    """``value`` if it names a metadata form, else a one-sentence ``ValueError``."""
    if value == "full":
        return "full"
    if value == "flat":
        return "flat"
    raise ConfigurationError(
        f"metadata must be 'full' (the whole record) or 'flat' (scalars only), got {value!r}."
    )


def record_metadata(chunk: Chunk) -> dict[str, Any]:
    """Every field of the record except ``text``, as plain JSON values (lists, dicts)."""
    return chunk.model_dump(mode="json", exclude={"text"})


def flat_metadata(chunk: Chunk) -> dict[str, str | int]:
    """The record as scalar metadata (``str``/``int`` only, every key always present).

    Keys (:data:`FLAT_KEYS`): the record's scalar fields (``chunk_id``, ``doc_id``,
    ``source_uri``, ``chunker_version``, ``policy_hash``, ``parser_version``, ``position``,
    ``token_estimate``, ``content_hash``); ``heading_path`` and ``captions`` joined with
    :data:`FLAT_SEPARATOR` (``""`` when empty); and the location, where a chunk with
    several spans gets the range from its first span's start to its last span's end (spans
    are in document order):

    * ``span_kind``: the first span's kind (``lines``, ``page``, ``element``) and
      ``span_count``: how many spans; with one span the location below is exact;
    * ``page`` / ``page_end``: the first / last page a span names (1-based), ``0`` if none;
    * ``line_start`` / ``line_end``: the first line span's start, the last one's end
      (1-based), ``0`` if the chunk has no line span;
    * ``char_start`` / ``char_end``: the first span's start, the last span's end (for page
      and element spans these count within the first and last page or element);
    * ``span_ref``: the first element span's ``ref`` (DOCX XPath, docling pointer), ``""``
      if none.

    ``0`` stands for "none" because pages and lines count from 1, so every record has the
    same keys and types (what tabular stores need) and no value is ``None`` (Chroma refuses
    it). ``block_ids`` and the other spans are left out: join on ``chunk_id`` to get them.
    """
    spans = chunk.source_spans
    lines = [s for s in spans if isinstance(s, LineSpan)]
    pages = [s.page for s in spans if isinstance(s, PageSpan | ElementSpan) and s.page is not None]
    refs = [s.ref for s in spans if isinstance(s, ElementSpan)]
    return {
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "source_uri": chunk.source_uri,
        "chunker_version": chunk.chunker_version,
        "policy_hash": chunk.policy_hash,
        "parser_version": chunk.parser_version,
        "position": chunk.position,
        "heading_path": FLAT_SEPARATOR.join(chunk.heading_path),
        "captions": FLAT_SEPARATOR.join(chunk.captions),
        "token_estimate": chunk.token_estimate,
        "content_hash": chunk.content_hash,
        "span_kind": spans[0].kind,
        "span_count": len(spans),
        "page": pages[0] if pages else 0,
        "page_end": pages[-1] if pages else 0,
        "line_start": lines[0].line_start if lines else 0,
        "line_end": lines[-1].line_end if lines else 0,
        "char_start": spans[0].char_start,
        "char_end": spans[-1].char_end,
        "span_ref": refs[0] if refs else "",
    }


def adapter_metadata(chunk: Chunk, *, contextualized: bool, metadata: object) -> dict[str, Any]:
    """The metadata an adapter attaches: the chosen form plus ``content_kind``. Full
    metadata holds every record field except the one that is the content (``text``, or
    ``embed_text`` with ``contextualized``; a record without ``embed_text`` keeps its
    ``None``, the content then being made by :func:`adapter_text`)."""
    mode = check_metadata_mode(metadata)
    if mode == "flat":
        values: dict[str, Any] = flat_metadata(chunk)
    elif contextualized and chunk.embed_text is not None:
        values = chunk.model_dump(mode="json", exclude={"embed_text"})
    elif contextualized:  # content made here: the record's own None is kept, for the round trip
        values = chunk.model_dump(mode="json")
    else:
        values = record_metadata(chunk)
    values[CONTENT_KIND_KEY] = "embed_text" if contextualized else "text"
    return values


def adapter_text(chunk: Chunk, *, contextualized: bool) -> str:
    """An adapter's content: the chunk text, or with ``contextualized`` its ``embed_text``.

    A record made by a chunker directly has no ``embed_text`` yet: it is then made by its
    label's chunker, unless that needs the policy the record was made with (the record does
    not hold it), which is a one-sentence :class:`~kebab_chunk.errors.RecordError`.
    """
    if not contextualized:
        return chunk.text
    if chunk.embed_text is not None:
        return chunk.embed_text
    try:
        return get_chunker(chunk.chunker_version).embed_text(chunk)
    except ConfigurationError:
        raise RecordError(
            f"chunk {chunk.chunk_id} has no embed_text and {chunk.chunker_version} makes its "
            "own from the policy; fill it with kebab_chunk.chunkers.embedding.with_embedding("
            "chunks, chunker, policy) or pass records read from a run's output."
        ) from None


def _require_full(metadata: Mapping[str, Any]) -> None:
    if "source_spans" not in metadata or "block_ids" not in metadata:
        raise RecordError(
            "this metadata has no source_spans or block_ids (the flat form keeps scalars "
            "only), so the record cannot be rebuilt from it; look its chunk_id up in the "
            "chunk records it was made from, or convert with metadata='full'."
        )


def record_from_metadata(metadata: Mapping[str, Any], text: str) -> Chunk:
    """Rebuild the record from full-form adapter metadata and the chunk's own text.

    Keys that are not record fields (for example ones a vector store or a splitter's
    source document added) are ignored; flat metadata gives a one-sentence ``ValueError``.
    """
    _require_full(metadata)
    return Chunk.model_validate(
        {**{key: metadata[key] for key in _RECORD_FIELDS if key in metadata}, "text": text}
    )


def record_from_content(metadata: Mapping[str, Any], content: str) -> Chunk:
    """The record an adapter's full metadata and content (text, ``embed_text`` or legacy
    contextualised text, per ``content_kind``) were made from."""
    kind = metadata.get(CONTENT_KIND_KEY)
    if kind == "embed_text":
        _require_full(metadata)
        if "text" not in metadata:
            raise RecordError(
                "this metadata says the content is embed_text but holds no text, so the "
                "record cannot be rebuilt; convert again with metadata='full'."
            )
        own = {"embed_text": content} if "embed_text" not in metadata else {}
        return record_from_metadata({**metadata, **own}, str(metadata["text"]))
    if kind == "contextualized":
        content = strip_context(metadata, content)
    return record_from_metadata(metadata, content)


def strip_context(metadata: Mapping[str, Any], content: str) -> str:
    """Invert :func:`contextualize` using the heading path and captions in ``metadata``."""
    _require_full(metadata)
    prefix = context_prefix(metadata.get("heading_path", ()), metadata.get("captions", ()))
    if prefix:
        prefix += "\n"
    if not content.startswith(prefix):
        raise RecordError(
            "the content does not start with the chunk's heading path and captions, so "
            "contextualize() did not make it; pass the original chunk text instead."
        )
    return content[len(prefix) :]


# --- records in any form ----------------------------------------------------------------


def _library(value: object) -> str:
    """The top-level package that defines ``value``'s type (``numpy``, ``pandas``, ...)."""
    return type(value).__module__.partition(".")[0]


def _plain(value: Any) -> Any:
    """``value`` as plain Python: numpy arrays and scalars, pandas missing values, NaN."""
    if value is None or type(value) in (str, int, bool):
        return value
    if isinstance(value, float):  # numpy.float64 is a float subclass
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):  # numpy.str_ and other str subclasses
        return str(value)
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    library = _library(value)
    if library == "numpy" and hasattr(value, "tolist"):  # ndarray or numpy scalar
        return _plain(value.tolist())
    if library == "pandas" and type(value).__name__ in ("NAType", "NaTType"):
        return None
    if library == "pyarrow" and hasattr(value, "as_py"):  # a pyarrow scalar
        return _plain(value.as_py())
    return value


def _plain_span(span: Any) -> Any:
    """A span row without the null fields of the other span kinds (Parquet's struct)."""
    if isinstance(span, Mapping):
        return {key: item for key, item in span.items() if item is not None}
    return span


def _refusal(detail: str) -> RecordError:
    return RecordError(f"a row is not a chunk record: {detail}; {_FIX_ROWS}.")


def _record_from_row(row: Mapping[Any, Any]) -> Chunk:
    values = {name: _plain(row[name]) for name in Chunk.model_fields if name in row}
    missing = [name for name in _REQUIRED_FIELDS if name not in values]
    if missing == ["chunker_version"]:
        raise RecordError(
            "a chunk row has no chunker_version column, which the pipeline keeps only in "
            "the chunks/chunker_version=<label>/ directory names; read the whole chunks "
            "directory (for example pandas.read_parquet(OUT / 'chunks')) so the label "
            "comes back as a column."
        )
    if missing:
        raise _refusal(f"it lacks the field(s) {', '.join(missing)}")
    spans = values["source_spans"]
    if isinstance(spans, list):
        values["source_spans"] = [_plain_span(span) for span in spans]
    try:
        return Chunk.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "the row"
        message = str(first.get("msg", "is invalid")).removeprefix("Value error, ")
        raise _refusal(f"{where}: {message}") from None


def as_record(element: Any) -> Chunk:
    """One chunk record from a record, its dict form, or a Parquet row (see module doc)."""
    if isinstance(element, Chunk):
        return element
    if _library(element) == "pandas" and hasattr(element, "to_dict"):  # a row (Series)
        element = element.to_dict()
    if isinstance(element, Mapping):
        return _record_from_row(element)
    raise WrongTypeError(
        f"expected a kebab_chunk Chunk record or its dict form, got {type(element).__name__}; "
        "feed the adapter the output of the chunking step."
    )


def _rows(chunks: Any) -> Iterable[Any]:
    """The elements of ``chunks``: rows of a frame or table, else the iterable itself."""
    library = _library(chunks)
    if library == "pandas" and hasattr(chunks, "columns") and hasattr(chunks, "to_dict"):
        rows: list[Any] = chunks.to_dict(orient="records")
        return rows
    if library == "pyarrow":
        if hasattr(chunks, "to_table") and not hasattr(chunks, "to_pylist"):  # a dataset
            chunks = chunks.to_table()
        if hasattr(chunks, "to_batches"):  # a Table: one batch of Python rows at a time
            return (row for batch in chunks.to_batches() for row in batch.to_pylist())
        if hasattr(chunks, "to_pylist"):  # a RecordBatch
            batch_rows: list[Any] = chunks.to_pylist()
            return batch_rows
    if isinstance(chunks, Chunk | Mapping | str | bytes) or not isinstance(chunks, Iterable):
        raise WrongTypeError(
            f"expected several chunk records (a list, a pandas DataFrame or a pyarrow "
            f"Table), got {type(chunks).__name__}; wrap a single record in a list."
        )
    return chunks


def as_records(chunks: Any) -> Iterator[Chunk]:
    """Records, in the given order, from any collection the module doc lists."""
    for element in _rows(chunks):
        yield as_record(element)


def require(module: str, package: str, extra: str) -> ModuleType:
    """Import an optional dependency, or fail with a one-sentence install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(install_hint(package, extra)) from exc


def install_hint(package: str, extra: str) -> str:
    """The sentence an adapter raises when its optional package is missing."""
    return (
        f"this adapter needs the optional package {package!r}, which is not installed; "
        f"install it with `pip install {package}` (or `pip install kebab-chunk[{extra}]`)."
    )


def lazy_export(module: str, name: str, source: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` giving ``name`` from module ``source`` on first use, so
    importing an adapter module imports no integration class (nor its library) before a
    caller asks for it."""

    def __getattr__(attribute: str) -> Any:
        if attribute == name:
            return getattr(importlib.import_module(source), name)
        raise AttributeError(f"module {module!r} has no attribute {attribute!r}")

    return __getattr__
