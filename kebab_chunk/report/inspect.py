"""``kebab-chunk inspect``: what a pipeline output holds, read from its Parquet and manifest.

:func:`load_output` reads the columns it needs (never the chunk text) with the readers of
:mod:`kebab_chunk.output.reader`, the documents table included (which documents gave zero
chunks, which had parse warnings); :func:`summarize` turns them into a plain JSON-able dict
(the ``--json`` output, and the data behind the HTML report); :func:`render_text` draws
that dict for a terminal; :func:`compare_outputs` says what changed between two outputs.

Percentiles are nearest-rank (numpy's ``inverted_cdf``): the p-th percentile is the
smallest token count that at least p % of the chunks do not exceed, so it is always a
size some chunk really has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kebab_chunk._quote import safe_text
from kebab_chunk.errors import OutputDirError
from kebab_chunk.output.diff import diff_outputs
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.reader import read_chunks, read_documents, read_errors
from kebab_chunk.output.schema import CHUNK_SCHEMA, ERROR_SCHEMA

__all__ = [
    "CHUNK_COLUMNS",
    "DOCUMENT_COLUMNS",
    "MAX_LISTED_DOCUMENTS",
    "MAX_WARNINGS_SHOWN",
    "PERCENTILES",
    "OutputData",
    "OutputDirError",
    "compare_outputs",
    "load_output",
    "percentiles",
    "render_compare_text",
    "render_text",
    "safe_text",
    "span_location",
    "summarize",
    "tokens_by_label",
]

#: The chunk columns the summary needs (the text column is never read).
CHUNK_COLUMNS = (
    "chunker_version",
    "chunk_id",
    "doc_id",
    "source_uri",
    "position",
    "token_estimate",
    "source_spans",
)
PERCENTILES = (50, 90, 99)
#: Examples of failing files listed per error group.
MAX_ERROR_EXAMPLES = 3
#: The documents-table columns the summary needs (never the front matter or title).
DOCUMENT_COLUMNS = ("source_uri", "status", "warnings")
#: Documents listed by name per list (zero chunks, with warnings); the rest are counted.
MAX_LISTED_DOCUMENTS = 100
#: Warning texts shown per document; the rest are counted.
MAX_WARNINGS_SHOWN = 10


@dataclass(frozen=True)
class OutputData:
    """One pipeline output: its manifest and the chunk/error/document columns the summaries
    use (``documents`` is None for an output written before the documents table existed)."""

    path: str
    manifest: dict[str, Any]
    chunks: pa.Table
    errors: pa.Table
    documents: pa.Table | None = None


def _empty(schema: pa.Schema, columns: Sequence[str]) -> pa.Table:
    return pa.schema([schema.field(c) for c in columns]).empty_table()


def load_output(output: str) -> OutputData:
    """Check ``output`` is a finished run (as ``kebab-chunk diff`` does), then read its
    manifest, the summary columns of its chunks and its error rows.

    Raises :class:`~kebab_chunk.output.diff.OutputDirError` (one sentence) when it is not.
    """
    path, manifest = open_output(output, "OUTPUT")
    try:
        chunks = read_chunks(path, columns=list(CHUNK_COLUMNS))
    except FileNotFoundError:  # a run that wrote no chunk partition at all
        chunks = _empty(CHUNK_SCHEMA, CHUNK_COLUMNS)
    try:
        errors = read_errors(path)
    except FileNotFoundError:
        errors = ERROR_SCHEMA.empty_table()
    try:
        documents: pa.Table | None = read_documents(path, columns=DOCUMENT_COLUMNS)
    except FileNotFoundError:  # written by a version without the documents table
        documents = None
    return OutputData(
        path=path, manifest=manifest, chunks=chunks, errors=errors, documents=documents
    )


# --- numbers -------------------------------------------------------------------------------


def percentiles(values: Sequence[int], qs: Iterable[int] = PERCENTILES) -> dict[str, int]:
    """Nearest-rank percentiles ``{"p50": ..., ...}`` and ``max``; zeros for no values."""
    qs = tuple(qs)
    if not values:
        return {**{f"p{q}": 0 for q in qs}, "max": 0}
    arr = np.asarray(values, dtype=np.int64)
    found = np.percentile(arr, qs, method="inverted_cdf")
    return {**{f"p{q}": int(v) for q, v in zip(qs, found, strict=True)}, "max": int(arr.max())}


def span_location(spans: Sequence[Mapping[str, Any]]) -> str:
    """A short human location of a chunk, e.g. ``lines 3-10``, ``page 2 [0:265]``."""
    if not spans:
        return "no span"
    first, last = spans[0], spans[-1]
    kind = first.get("kind")
    if kind == "lines":
        end = max(int(s.get("line_end") or 0) for s in spans)
        where = f"lines {first['line_start']}-{end}"
    elif kind == "page":
        pages = sorted({int(s["page"]) for s in spans})
        where = (
            f"page {pages[0]} [{first['char_start']}:{last['char_end']}]"
            if len(pages) == 1
            else f"pages {pages[0]}-{pages[-1]}"
        )
    else:
        where = f"{first.get('ref')}"
        if first.get("page"):
            where += f" (page {first['page']})"
    if len(spans) > 1:
        where += f" +{len(spans) - 1} span{'s' if len(spans) > 2 else ''}"
    return where


def _policy(manifest: Mapping[str, Any]) -> dict[str, Any]:
    policy = manifest.get("policy")
    return dict(policy) if isinstance(policy, Mapping) else {}


def summarize(data: OutputData, top: int = 5) -> dict[str, Any]:
    """The inspect summary of one output as a JSON-able dict (see the module docstring)."""
    manifest = data.manifest
    policy = _policy(manifest)
    target = policy.get("target_tokens")
    max_tokens = policy.get("max_tokens")
    rows = data.chunks.to_pylist()
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_label[str(row["chunker_version"])].append(row)
    labels_in_manifest = list(manifest.get("chunkers", {}).get("labels", []))
    labels = sorted(set(labels_in_manifest) | set(by_label))
    counts = manifest.get("counts", {})
    accounting = manifest.get("accounting", {})
    return {
        "output": data.path,
        "package_version": manifest.get("package", {}).get("version"),
        "schema_version": manifest.get("schema_version"),
        "policy": policy,
        "policy_hash": manifest.get("policy_hash"),
        "files": {
            "matched": accounting.get("files_matched", counts.get("files_matched")),
            "chunked": accounting.get("documents_chunked"),
            "zero_chunks": accounting.get("documents_with_zero_chunks"),
            "errors": accounting.get("errors"),
            "skipped": accounting.get("skipped", 0),
            "accounting_closes": accounting.get("closes"),
            "with_warnings": counts.get("documents_with_warnings"),
        },
        "by_media_type": counts.get("by_media_type", {}),
        "labels": [
            _label_summary(label, by_label.get(label, []), target, max_tokens, top)
            for label in labels
        ],
        "errors": _error_summary(data.errors.to_pylist()),
        "documents": _document_summary(data.documents),
    }


def _document_summary(documents: pa.Table | None) -> dict[str, Any] | None:
    """Zero-chunk documents and documents with warnings, from the documents table, in
    ``source_uri`` order; at most MAX_LISTED_DOCUMENTS of each are named (``count`` has
    them all) and MAX_WARNINGS_SHOWN warnings per document (``warnings_total`` has all).
    None when the output has no documents table."""
    if documents is None:
        return None
    zero: list[str] = []
    warned: list[dict[str, Any]] = []
    counts = {"zero_chunks": 0, "with_warnings": 0}
    for row in documents.select(list(DOCUMENT_COLUMNS)).to_pylist():
        if row["status"] == "zero_chunks":
            counts["zero_chunks"] += 1
            if len(zero) < MAX_LISTED_DOCUMENTS:
                zero.append(str(row["source_uri"]))
        warnings = [str(w) for w in row["warnings"]]
        if warnings:
            counts["with_warnings"] += 1
            if len(warned) < MAX_LISTED_DOCUMENTS:
                warned.append(
                    {
                        "source_uri": row["source_uri"],
                        "warnings": warnings[:MAX_WARNINGS_SHOWN],
                        "warnings_total": len(warnings),
                    }
                )
    return {
        "rows": documents.num_rows,
        "zero_chunks": {"count": counts["zero_chunks"], "files": zero},
        "with_warnings": {"count": counts["with_warnings"], "documents": warned},
    }


def _label_summary(
    label: str, rows: list[dict[str, Any]], target: Any, max_tokens: Any, top: int
) -> dict[str, Any]:
    tokens = [int(r["token_estimate"]) for r in rows]
    largest = sorted(
        rows, key=lambda r: (-int(r["token_estimate"]), r["source_uri"], r["position"])
    )
    summary: dict[str, Any] = {
        "label": label,
        "documents": len({r["doc_id"] for r in rows}),
        "chunks": len(rows),
        "tokens": {
            "total": sum(tokens),
            "min": min(tokens, default=0),
            "mean": round(sum(tokens) / len(tokens), 1) if tokens else 0.0,
            **percentiles(tokens),
        },
        "target_tokens": target,
        "over_target": sum(t > target for t in tokens) if isinstance(target, int) else None,
        "largest": [
            {
                "token_estimate": int(r["token_estimate"]),
                "source_uri": r["source_uri"],
                "position": int(r["position"]),
                "location": span_location(r["source_spans"]),
                "chunk_id": r["chunk_id"],
            }
            for r in largest[:top]
        ],
    }
    if isinstance(max_tokens, int):
        summary["max_tokens"] = max_tokens
        summary["over_max"] = sum(t > max_tokens for t in tokens)
    return summary


def _error_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(str(row["stage"]), str(row["error_type"]))].append(row)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    out = []
    for (stage, error_type), members in ordered:
        members.sort(key=lambda r: (r["source_uri"], r["message"]))
        examples = list(dict.fromkeys(r["source_uri"] for r in members))[:MAX_ERROR_EXAMPLES]
        out.append(
            {
                "stage": stage,
                "error_type": error_type,
                "count": len(members),
                "files": len({r["source_uri"] for r in members}),
                "examples": examples,
                "message": members[0]["message"],
            }
        )
    return {"rows": len(rows), "groups": out}


def compare_outputs(old: OutputData, new: OutputData) -> dict[str, Any]:
    """Per label: what ``kebab-chunk diff`` reports, plus chunk counts and size percentiles.

    The change counts (added / removed / unchanged / modified / relocated, documents
    affected, ``reembed_tokens``: the token volume a downstream embedding store must
    re-embed) come from :func:`kebab_chunk.output.diff.diff_outputs`, so the report and
    ``kebab-chunk diff`` always agree.
    """
    diff = diff_outputs(old.path, new.path)
    before, after = tokens_by_label(old), tokens_by_label(new)
    labels = [
        {
            "label": d.label,
            "status": d.status,
            "old_chunks": len(before.get(d.label, [])),
            "new_chunks": len(after.get(d.label, [])),
            "added": d.added,
            "removed": d.removed,
            "unchanged": d.unchanged,
            "modified": d.modified,
            "relocated": d.relocated,
            "documents_affected": d.documents_affected,
            "reembed_tokens": d.reembed_tokens,
            "old_tokens": percentiles(before.get(d.label, [])),
            "new_tokens": percentiles(after.get(d.label, [])),
        }
        for d in diff.labels
    ]
    return {
        "old": old.path,
        "new": new.path,
        "old_policy_hash": old.manifest.get("policy_hash"),
        "new_policy_hash": new.manifest.get("policy_hash"),
        "changed": diff.changed,
        "labels": labels,
    }


def tokens_by_label(data: OutputData) -> dict[str, list[int]]:
    """label -> every chunk's token estimate."""
    out: dict[str, list[int]] = defaultdict(list)
    cols = data.chunks.select(["chunker_version", "token_estimate"]).to_pydict()
    for label, tokens in zip(cols["chunker_version"], cols["token_estimate"], strict=True):
        out[str(label)].append(int(tokens))
    return dict(out)


# --- terminal rendering ----------------------------------------------------------------------

def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: str = "  ") -> str:
    """Columns padded to width; numbers right-aligned, text left-aligned."""
    cells = [[safe_text(c) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(isinstance(r[i], int) for r in rows) for i in range(len(headers))]
    lines = []
    for row in [list(headers), *cells]:
        parts = [
            cell.rjust(w) if num else cell.ljust(w)
            for cell, w, num in zip(row, widths, numeric, strict=True)
        ]
        lines.append(indent + "  ".join(parts).rstrip())
    return "\n".join(lines)


def render_text(summary: Mapping[str, Any]) -> str:
    """The summary as a plain-text terminal report (no colours, no control characters)."""
    files = summary["files"]
    policy = summary["policy"]
    closes = {True: "closes", False: "DOES NOT CLOSE"}.get(files["accounting_closes"], "unknown")
    out = [
        f"kebab-chunk output {safe_text(summary['output'])} "
        f"(kebab-chunk {summary['package_version']}, {summary['schema_version']})",
        f"policy {summary['policy_hash']}: target {policy.get('target_tokens')} tokens, "
        f"overlap {policy.get('overlap_tokens')}, max {policy.get('max_tokens') or '-'}, "
        f"tokenizer {policy.get('tokenizer')}",
        f"files matched {files['matched']} = chunked {files['chunked']} + zero chunks "
        f"{files['zero_chunks']} + errors {files['errors']}"
        f"{' + skipped ' + str(files['skipped']) if files.get('skipped') else ''} ({closes}); "
        f"{files['with_warnings']} with warnings",
        "",
        "chunks by label (token estimates):",
    ]
    rows = [
        [
            lab["label"],
            lab["documents"],
            lab["chunks"],
            lab["tokens"]["p50"],
            lab["tokens"]["p90"],
            lab["tokens"]["p99"],
            lab["tokens"]["max"],
            "-" if lab["over_target"] is None else lab["over_target"],
        ]
        for lab in summary["labels"]
    ]
    headers = ["label", "documents", "chunks", "p50", "p90", "p99", "max", "over target"]
    out.append(_table(headers, rows) if rows else "  (no chunker labels)")
    media = summary["by_media_type"]
    if media:
        out += ["", "documents by media type:"]
        out.append(
            _table(
                ["media type", "files", "chunked", "zero chunks", "errors"],
                [
                    [
                        m,
                        v.get("files", 0),
                        v.get("chunked", 0),
                        v.get("zero_chunks", 0),
                        v.get("errors", 0),
                    ]
                    for m, v in sorted(media.items())
                ],
            )
        )
    for lab in summary["labels"]:
        if lab["largest"]:
            out += ["", f"largest chunks, {safe_text(lab['label'])}:"]
            out.append(
                _table(
                    ["tokens", "source", "position", "location", "chunk_id"],
                    [
                        [
                            c["token_estimate"],
                            c["source_uri"],
                            c["position"],
                            c["location"],
                            c["chunk_id"],
                        ]
                        for c in lab["largest"]
                    ],
                )
            )
    errors = summary["errors"]
    out += ["", f"errors: {errors['rows']} row{'s' if errors['rows'] != 1 else ''}"]
    for g in errors["groups"]:
        more = g["files"] - len(g["examples"])
        examples = ", ".join(safe_text(e) for e in g["examples"]) + (
            f" (+{more} more)" if more > 0 else ""
        )
        out.append(f"  {g['stage']}/{g['error_type']}: {g['count']}  e.g. {examples}")
        out.append(f"    {safe_text(g['message'])[:200]}")
    out += _documents_text(summary.get("documents"))
    return "\n".join(out) + "\n"


def _more(shown: int, total: int) -> list[str]:
    return [f"  (+{total - shown} more)"] if total > shown else []


def _documents_text(documents: Mapping[str, Any] | None) -> list[str]:
    """The zero-chunk and warning lists of the documents table, one file per line."""
    if documents is None:
        return ["", "documents: no documents table (the output predates it)"]
    zero, warned = documents["zero_chunks"], documents["with_warnings"]
    out = ["", f"documents with zero chunks: {zero['count']}"]
    out += [f"  {safe_text(uri)}" for uri in zero["files"]]
    out += _more(len(zero["files"]), zero["count"])
    out += ["", f"documents with warnings: {warned['count']}"]
    for doc in warned["documents"]:
        out.append(f"  {safe_text(doc['source_uri'])}")
        out += [f"    - {safe_text(w)}" for w in doc["warnings"]]
        if doc["warnings_total"] > len(doc["warnings"]):
            out.append(f"    - (+{doc['warnings_total'] - len(doc['warnings'])} more)")
    out += _more(len(warned["documents"]), warned["count"])
    return out


def render_compare_text(comparison: Mapping[str, Any]) -> str:
    """The comparison of two outputs as a terminal table."""
    head = (
        f"compare {safe_text(comparison['old'])} (policy {comparison['old_policy_hash']}) -> "
        f"{safe_text(comparison['new'])} (policy {comparison['new_policy_hash']})"
    )
    rows = [
        [
            c["label"],
            c["old_chunks"],
            c["new_chunks"],
            c["added"],
            c["removed"],
            c["unchanged"],
            c["modified"],
            c["documents_affected"],
            c["reembed_tokens"],
        ]
        for c in comparison["labels"]
    ]
    headers = [
        "label",
        "old",
        "new",
        "added",
        "removed",
        "unchanged",
        "modified",
        "docs affected",
        "tokens to re-embed",
    ]
    return head + "\n" + _table(headers, rows) + "\n"
