# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its transforms are untyped callables.)
"""``run --update``: commit a new snapshot of an output, at the cost of what changed.

The output's latest snapshot (kebab_chunk/output/snapshots.py) is the base. Every file of
the corpus is still read and hashed (``ReadCorpus``; its bytes are dropped in the same
fused step, so they never travel), and ``PlanUpdate`` joins (source_uri, media type,
content hash) with the base's documents table, one small row per document
(``CoGroupByKey``); no chunk record of the base is read. Per document
(``ReuseRule.decide_row``):

* ``reused`` — nothing is read again or written: its chunk, documents and error rows stay
  in the base's files, which the new snapshot references. The plan turns its documents
  row into its FileAccount, so the manifest counts it without joining anything more.
* ``rechunked`` / ``new`` — read again (``ReadAgain``), parsed and chunked as in a full run;
  the new rows go to files named ``s<n>-part-*.parquet``.
* ``deleted`` — no longer matched.

Every base document that is not reused (rechunked, deleted, now unreadable or skipped)
has its ``source_uri`` in the snapshot's delete file, which removes its earlier rows from
all three tables. ``commit_step`` then writes the delete file and the change feed
(kebab_chunk/output/changes.py, from the documents rows' chunk index of the removed and
the new documents) and commits ``_snapshots/<n>.json``, the one step that makes the run
visible; ``manifest.json`` is rewritten as its copy afterwards. A killed run leaves the
base snapshot as it was (its new files are referenced by nothing; ``kebab-chunk expire``
removes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.dataset as pads
from apache_beam import pvalue
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import AsList, PCollection

from kebab_chunk.beam import metrics
from kebab_chunk.beam.batches import Pack, PackPerBucket, unpack_records
from kebab_chunk.beam.chunk import run_labels
from kebab_chunk.beam.durable import write_whole
from kebab_chunk.beam.incremental import NOTHING_REUSED
from kebab_chunk.beam.manifest import CHUNKED, FileAccount, count_account
from kebab_chunk.beam.reuse_rule import (
    DECISIONS,
    NEW,
    RECHUNKED,
    REUSE_OPTIONS,
    REUSED,
    BaseRow,
    PreviousRun,
    ReuseRule,
)
from kebab_chunk.elements import SourceFile, WrittenFile
from kebab_chunk.errors import OutputDirError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.output.changes import CHANGES_DIR, change_rows, changes_table
from kebab_chunk.output.digest import DigestSink
from kebab_chunk.output.finished import open_output
from kebab_chunk.output.layout import CHUNKS_DIR, DOCUMENTS_DIR, MANIFEST_NAME
from kebab_chunk.output.schema import (
    PARTITION_COLUMN,
    write_parquet,
)
from kebab_chunk.output.snapshots import (
    DATA_KINDS,
    DELETE_SCHEMA,
    added_in,
    commit_snapshot,
    delete_path,
    live_deletes,
    live_filter,
    read_deleted,
    snapshot_ids,
    snapshot_of,
)
from kebab_chunk.parsers.registry import ParserChoice

__all__ = ["BaseSnapshot", "PlanUpdate", "commit_step", "first_snapshot", "load_base"]

_FILES, _SEEN, _BASE = "files", "seen", "base"
_TO_READ, _ACCOUNTS, _DELETED, _DECISIONS = "to_read", "accounts", "deleted", "decisions"


@dataclass(frozen=True)
class BaseSnapshot:
    """The snapshot an update builds on, as the launching machine read it."""

    output: str
    snapshot: int
    manifest: Mapping[str, Any]
    previous: PreviousRun

    @property
    def next(self) -> int:
        return self.snapshot + 1


def load_base(output: str) -> BaseSnapshot | None:
    """The latest snapshot of ``output`` (None: no finished output there yet, so the update
    is a full run). Its files are checked by ``open_output`` (listed, sizes and row counts
    from footers); their bytes are not hashed, which would cost the whole table."""
    try:
        path, manifest = open_output(
            output,
            "--output",
            remedy="restore it from a copy, or move it aside to start a new one with a full run",
        )
    except OutputDirError:
        if not _has_manifest(output):
            return None
        raise
    chunkers, options = manifest["chunkers"], manifest["options"]
    previous = PreviousRun(
        output=path,
        policy_hash=str(manifest["policy_hash"]),
        labels=tuple(str(label) for label in chunkers["labels"]),
        requested=tuple(options["chunkers"]) if options.get("chunkers") else None,
        defaults_by_media_type=tuple(
            (str(k), tuple(v)) for k, v in sorted(chunkers["defaults_by_media_type"].items())
        ),
        options=tuple((k, options[k]) for k in REUSE_OPTIONS if k in options),
        has_documents=bool(manifest["outputs"].get(DOCUMENTS_DIR)),
    )
    return BaseSnapshot(path, snapshot_of(manifest), manifest, previous)


def _has_manifest(output: str) -> bool:
    return bool(snapshot_ids(output)) or FileSystems.exists(f"{output}/{MANIFEST_NAME}")


def first_snapshot(base: BaseSnapshot) -> None:
    """Before a plain output's first update: keep its manifest as ``_snapshots/00000001``
    (with a snapshot section), so "the chunks as of run 1" stays readable."""
    if base.snapshot == 1 and not snapshot_ids(base.output):
        commit_snapshot(base.output, {**base.manifest, "snapshot": _section(1, None, [], None)})


def _section(
    n: int, parent: int | None, deletes: Sequence[Mapping[str, Any]], changes: Any
) -> dict[str, Any]:
    return {"id": n, "parent": parent, "deletes": list(deletes), "changes": changes}


class _ReadBaseDocumentsFn(beam.DoFn):
    """One base documents file -> (source_uri, BaseRow values) of its live rows."""

    def __init__(self, output: str, deleted: Sequence[tuple[int, frozenset[str]]]) -> None:
        self._output = output
        self._deleted = deleted

    def process(self, entry: tuple[str, int]) -> Iterator[tuple[str, tuple[Any, ...]]]:
        path, added = entry
        dataset = pads.dataset(f"{self._output}/{path}", format="parquet")
        table = dataset.to_table(
            columns=list(BaseRow.COLUMNS), filter=live_filter(added, self._deleted)
        )
        for row in table.to_pylist():
            yield str(row["source_uri"]), BaseRow.of(row).values()


def file_key(source: SourceFile) -> tuple[str, tuple[str | None, int]]:
    """A matched file as the update's join holds it: plain values, no dataclass (the
    in-memory runner holds one per document; see ``BaseRow.values``)."""
    return source.source_uri, (source.media_type, source.size_bytes)


class _DecideFn(beam.DoFn):
    """One bucket of the join -> one decision per source_uri in it; see the module
    docstring. A reused document leaves as its finished FileAccount (the manifest counts
    it without joining anything more); every other matched file's SourceFile goes on to
    the manifest's join as in a full run."""

    def __init__(self, rule: ReuseRule) -> None:
        self._rule = rule

    def process(self, element: tuple[int, Mapping[str, Iterable[Pack]]]) -> Iterator[Any]:
        _, grouped = element
        sides: dict[str, tuple[list[Any], list[Any], list[Any]]] = {}
        for slot, side in enumerate((_FILES, _SEEN, _BASE)):
            for uri, values in unpack_records(grouped[side]):
                sides.setdefault(uri, ([], [], []))[slot].append(values)
        for uri in sorted(sides):
            yield from self._decide(uri, *sides[uri])

    def _decide(
        self, uri: str, matched: list[Any], seen: list[Any], base: list[Any]
    ) -> Iterator[Any]:
        files = [SourceFile(uri, media_type, size) for media_type, size in matched]
        rows = [BaseRow(*values) for values in base]
        row = rows[0] if len(rows) == 1 else None
        decision = self._rule.decide_row(
            matched=bool(files), seen=seen[0] if seen else None, row=row
        )
        if rows and decision.name != REUSED:
            yield pvalue.TaggedOutput(_DELETED, uri)
        if decision.name == REUSED and row is not None and len(files) == 1:
            account = _reused_account(uri, files[0], seen[0], row, decision.carried)
            count_account(account)
            yield pvalue.TaggedOutput(_ACCOUNTS, account)
        else:
            for source in files:
                yield pvalue.TaggedOutput(_FILES, source)
        if decision.name is None:
            return
        metrics.inc(metrics.keyed("incremental", decision.name))
        yield pvalue.TaggedOutput(_DECISIONS, decision.name)
        if decision.name in (RECHUNKED, NEW):
            yield uri


def _reused_account(
    uri: str,
    source: SourceFile,
    seen: tuple[str | None, str],
    row: BaseRow,
    carried: tuple[tuple[str, int], ...],
) -> FileAccount:
    """The manifest's account of a reused document: what its live rows say."""
    media_type, content_hash = seen
    return FileAccount(
        source_uri=uri,
        bucket=CHUNKED,
        media_type=media_type or "unknown",
        size_bytes=source.size_bytes,
        matched=True,
        parsed=True,
        warnings=row.warnings,
        parser_version=row.parser_version,
        chunks_by_label=carried,
        errors=(),
        detected_media_type=source.media_type,
        content_hash=content_hash,
    )


class _CountDecisionsFn(beam.CombineFn):
    """Decision names -> the manifest's incremental section."""

    def __init__(self, base: BaseSnapshot, blocked: str | None) -> None:
        self._base = base.output
        self._snapshot = base.snapshot
        self._blocked = blocked

    def create_accumulator(self) -> dict[str, int]:
        return dict.fromkeys(DECISIONS, 0)

    def add_input(self, acc: dict[str, int], decision: str) -> dict[str, int]:
        acc[decision] += 1
        return acc

    def merge_accumulators(self, accs: Iterable[dict[str, int]]) -> dict[str, int]:
        total = dict.fromkeys(DECISIONS, 0)
        for acc in accs:
            for k, v in acc.items():
                total[k] += v
        return total

    def extract_output(self, acc: dict[str, int]) -> dict[str, Any]:
        section: dict[str, Any] = {
            "previous_output": f"{self._base} (snapshot {self._snapshot})",
            "base_snapshot": self._snapshot,
            "documents": acc,
        }
        if self._blocked is not None:
            section[NOTHING_REUSED] = self._blocked
        return section


class PlanUpdate(beam.PTransform[Mapping[str, PCollection[Any]], dict[str, PCollection[Any]]]):
    """Decide per document against the base snapshot's documents table.

    Input: ``ReadCorpus``'s outputs. Outputs (a dict): ``to_read`` (source_uris to read
    again, parse and chunk), ``files`` (the SourceFile of every matched file that was not
    reused, for the manifest's join), ``accounts`` (the FileAccount of each reused
    document: counted, its rows left where they are), ``deleted`` (source_uris whose base
    rows the snapshot removes) and ``counts`` (the manifest's ``incremental`` section)."""

    def __init__(
        self,
        base: BaseSnapshot,
        labels: Sequence[str] | None,
        policy: ChunkPolicy,
        parsers: ParserChoice | None,
        *,
        options: Mapping[str, Any],
        buckets: int | None = None,
    ) -> None:
        super().__init__()
        self._base = base
        self._buckets = buckets
        self._rule = ReuseRule(
            base.previous,
            run_labels(labels) if labels else None,
            policy.policy_hash,
            parsers or ParserChoice(),
            options,
        )

    def expand(self, read: Mapping[str, PCollection[Any]]) -> dict[str, PCollection[Any]]:
        p = read["files"].pipeline
        base = self._base
        files = [
            (str(e["path"]), added_in(e)) for e in base.manifest["outputs"].get(DOCUMENTS_DIR) or ()
        ]
        rows = (
            p
            | "Base documents files" >> beam.Create(files)
            | "Spread base files" >> beam.Reshuffle()
            | "Read base documents"
            >> beam.ParDo(
                _ReadBaseDocumentsFn(base.output, read_deleted(base.output, base.manifest))
            )
        )
        seen = read["documents"] | "Keep hashes only" >> beam.Map(
            lambda d: (d.source_uri, (d.media_type, d.content_hash))
        )
        keyed_files = read["files"] | "Key files" >> beam.Map(file_key)
        sides = {_FILES: keyed_files, _SEEN: seen, _BASE: rows}
        decided = (
            {
                side: pc | f"Pack {side} per bucket" >> PackPerBucket(self._buckets)
                for side, pc in sides.items()
            }
            | "Join with the base snapshot" >> beam.CoGroupByKey()
            | "Decide per document"
            >> beam.ParDo(_DecideFn(self._rule)).with_outputs(
                _FILES, _ACCOUNTS, _DELETED, _DECISIONS, main=_TO_READ
            )
        )
        counts = decided[_DECISIONS] | "Count decisions" >> beam.CombineGlobally(
            _CountDecisionsFn(base, self._rule.blocked)
        )
        return {
            _TO_READ: decided[_TO_READ],
            _FILES: decided[_FILES],
            _ACCOUNTS: decided[_ACCOUNTS],
            _DELETED: decided[_DELETED],
            "counts": counts,
        }


def _base_entries(base: BaseSnapshot, labels: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The base's listed files the new snapshot keeps referencing: all but the chunk
    partitions of labels this run does not apply (every row there is deleted: a document
    with such a label is never reused)."""
    kept: dict[str, list[dict[str, Any]]] = {}
    for kind in DATA_KINDS:
        entries = []
        for entry in base.manifest["outputs"].get(kind) or ():
            path = str(entry["path"])
            if kind == CHUNKS_DIR:
                label = path[len(f"{CHUNKS_DIR}/{PARTITION_COLUMN}=") :].split("/", 1)[0]
                if label not in labels:
                    continue
            entries.append({**entry, "snapshot": added_in(entry)})
        kept[kind] = entries
    return kept


class _CommitFn(beam.DoFn):
    """The last step: delete file, change feed, snapshot, then manifest.json."""

    def __init__(
        self,
        base: BaseSnapshot,
        labels: Sequence[str],
        header: Mapping[str, Any],
        info: Mapping[str, Any],
    ) -> None:
        self._base = base
        self._labels = tuple(labels)
        self._header = dict(header)
        self._info = dict(info)

    def process(
        self,
        summary: Mapping[str, Any],
        written: Sequence[WrittenFile],
        deleted: Sequence[str],
    ) -> Iterator[str]:
        base, n = self._base, self._base.next
        output = base.output
        if summary["accounting"]["closes"] is not True:
            # A scheduled update's snapshot is what syncs downstream: one whose accounting
            # does not close (a document lost or doubled) is kept out of the table.
            acc = summary["accounting"]
            named = [
                *acc["unaccounted_files"],
                *acc["unexpected_files"],
                *acc["inconsistent_files"],
            ]
            raise OutputDirError(
                f"the accounting of this update does not close (files such as {named[:3]} are "
                f"lost, unexpected or doubled), so snapshot {n} was not committed and "
                f"{output!r} still reads as snapshot {base.snapshot}; run the update again, "
                "and report those files if it recurs."
            )
        outputs = _base_entries(base, self._labels)
        for w in sorted(written, key=lambda w: w.path):
            kind = w.path.split("/", 1)[0]
            outputs[kind].append({**w.listing(), "snapshot": n})
        deletes = list(live_deletes(base.manifest))
        removed = sorted(set(deleted))
        if removed:
            table = pa.Table.from_pydict({"source_uri": removed}, schema=DELETE_SCHEMA)
            deletes.append({**_write_table(output, delete_path(n), table), "snapshot": n})
        changes = self._changes(removed, [w for w in written if w.path.startswith(DOCUMENTS_DIR)])
        manifest = {
            **self._header,
            "outputs": {kind: sorted(v, key=lambda e: e["path"]) for kind, v in outputs.items()},
            **summary,
            "snapshot": _section(n, base.snapshot, deletes, changes),
            "run_info": {
                **self._info,
                "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        }
        if not snapshot_ids(output):
            first_snapshot(base)
        path = commit_snapshot(output, manifest)
        write_whole(
            f"{output}/{MANIFEST_NAME}",
            (_json(manifest)).encode(),
        )
        yield path

    def _changes(self, removed: Sequence[str], documents: Sequence[WrittenFile]) -> dict[str, Any]:
        """The change feed file of this snapshot (kebab_chunk/output/changes.py)."""
        base, n = self._base, self._base.next
        old, complete = _index_rows(
            base.output,
            [
                (str(e["path"]), added_in(e))
                for e in base.manifest["outputs"].get(DOCUMENTS_DIR) or ()
            ],
            read_deleted(base.output, base.manifest),
            set(removed),
        )
        new, _ = _index_rows(base.output, [(w.path, n) for w in documents], [], None)
        table = changes_table(change_rows(n, old, new))
        entry = _write_table(base.output, f"{CHANGES_DIR}/s{n:08d}.parquet", table)
        return {**entry, "snapshot": n, "complete": complete}


def _documents_files(manifest: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(path, the snapshot that added it) of every documents file a manifest lists."""
    return [(str(e["path"]), added_in(e)) for e in manifest["outputs"].get(DOCUMENTS_DIR) or ()]


def _index_rows(
    output: str,
    files: Sequence[tuple[str, int]],
    deleted: Sequence[tuple[int, frozenset[str]]],
    only: set[str] | None,
) -> tuple[list[dict[str, Any]], bool]:
    """(source_uri, doc_id, chunk_index) of the live documents rows of ``files`` whose
    source_uri is in ``only`` (None: all), and whether every file had the chunk index."""
    rows: list[dict[str, Any]] = []
    complete = True
    if only is not None and not only:
        return rows, complete
    for path, added in files:
        dataset = pads.dataset(f"{output}/{path}", format="parquet")
        if "chunk_index" not in dataset.schema.names:
            complete = False  # written before the chunk index existed: see changes.py
            continue
        keep = live_filter(added, deleted)
        if only is not None:
            wanted = pads.field("source_uri").isin(pa.array(sorted(only), pa.string()))
            keep = wanted if keep is None else keep & wanted
        rows.extend(
            dataset.to_table(
                columns=["source_uri", "doc_id", "chunk_index"], filter=keep
            ).to_pylist()
        )
    return rows, complete


def _write_table(output: str, relative: str, table: pa.Table) -> dict[str, Any]:
    with FileSystems.create(f"{output}/{relative}", mime_type="application/octet-stream") as f:
        sink = DigestSink(f)
        write_parquet(table, sink)
    return WrittenFile(relative, table.num_rows, sink.size, sink.digest).listing()


def _json(manifest: Mapping[str, Any]) -> str:
    import json

    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def commit_step(
    summary: PCollection[Any],
    base: BaseSnapshot,
    labels: Sequence[str],
    header: Mapping[str, Any],
    info: Mapping[str, Any],
    *,
    written: PCollection[WrittenFile],
    deleted: PCollection[str],
) -> PCollection[str]:
    """Commit snapshot ``base.next`` once every file is written: ``summary`` is the
    manifest's counts and accounting (one element), ``written`` every new WrittenFile,
    ``deleted`` the source_uris to delete. Output: the snapshot's path."""
    committed: PCollection[str] = summary | "Commit snapshot" >> beam.ParDo(
        _CommitFn(base, labels, header, info), AsList(written), AsList(deleted)
    )
    return committed
