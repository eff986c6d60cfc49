"""``kebab-chunk sync OUTPUT --to STORE``: make a vector store hold exactly an output's chunks.

The library call is :func:`kebab_chunk.sync.sync` (docs/guide/sync.md); this parses the options,
prints one line of what was done (``--json``: the report as JSON) and turns every user
error into one sentence and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any

from kebab_chunk.cli.exits import EXIT_OK

__all__ = ["add_sync_parser", "cmd_sync"]


def _positive(name: str) -> Any:
    def parse(text: str) -> int:
        if not text.strip().isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"{name} takes a whole number >= 1, not {text!r}")
        return int(text)

    return parse


def add_sync_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``sync`` on the ``kebab-chunk`` sub-command parser; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "sync",
        help="make a vector store hold exactly the chunks of an output (embeds only new texts)",
        description="Bring a vector store to the chunks of a finished output, whatever it "
        "holds now: new and changed chunks are embedded (each text once, cached) and "
        "upserted by chunk_id, moved ones get new metadata without a new vector, gone ones "
        "are deleted. Stores: a folder (LanceDB) or a postgresql:// URL (pgvector).",
    )
    p.add_argument("output", metavar="OUTPUT", help="the output directory of a finished run")
    p.add_argument(
        "--to",
        required=True,
        metavar="STORE",
        help="a folder (LanceDB, created if missing), lancedb:FOLDER or a postgresql:// URL "
        "(required; no default)",
    )
    p.add_argument(
        "--table", default="kebab_chunks", help="the store's table of chunks (default: %(default)s)"
    )
    p.add_argument(
        "--label",
        action="append",
        metavar="LABEL",
        help="a chunker label to sync; repeat for several (default: the output's only "
        "label, else each document's default label for its media type)",
    )
    p.add_argument(
        "--embedder",
        metavar="FOLDER",
        help="a local sentence-transformers model folder of a BERT encoder (default: the "
        "packaged all-MiniLM-L6-v2)",
    )
    p.add_argument(
        "--cache",
        metavar="FILE",
        help="the embedding cache file (default: embeddings.sqlite3 in $KEBAB_CHUNK_CACHE_DIR, "
        "else in $XDG_CACHE_HOME/kebab-chunk or ~/.cache/kebab-chunk)",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="keep embeddings in memory only (default: off)"
    )
    p.add_argument(
        "--snapshot",
        type=_positive("--snapshot"),
        metavar="N",
        help="sync snapshot N of an updated output (default: the latest)",
    )
    p.add_argument(
        "--batch-size",
        type=_positive("--batch-size"),
        default=64,
        metavar="N",
        help="texts per embedder call (default: %(default)s)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the report as one JSON object (default: off)"
    )
    return p


def cmd_sync(args: argparse.Namespace) -> int:
    """Run ``kebab-chunk sync``; returns the exit status (errors reach the CLI's handler)."""
    from kebab_chunk.errors import UsageError
    from kebab_chunk.sync import EmbeddingCache, open_store, sync

    if args.no_cache and args.cache:
        raise UsageError("--cache and --no-cache contradict each other; give one of them")
    store = open_store(args.to, table=args.table)
    try:
        report = sync(
            args.output,
            store,
            labels=args.label,
            embedder=args.embedder,
            cache=EmbeddingCache() if args.no_cache else args.cache,
            snapshot=args.snapshot,
            batch_size=args.batch_size,
            progress=sys.stderr.isatty() and not os.environ.get("CI"),
        )
    finally:
        store.close()
    if args.json:
        print(json.dumps({**dataclasses.asdict(report), "wrote": report.wrote}, sort_keys=True))
        return EXIT_OK
    labels = ", ".join(report.labels) or "no label"
    print(
        f"kebab-chunk sync: {report.store} now holds the {report.chunks} chunks of "
        f"{report.output} snapshot {report.snapshot} ({labels}): {report.upserted} upserted "
        f"({report.embedded} embedded, {report.cached} from the cache), "
        f"{report.metadata_updated} metadata updated, {report.deleted} deleted, "
        f"{report.unchanged} unchanged"
    )
    return EXIT_OK
