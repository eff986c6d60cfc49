"""Helpers for the report/view tests: a tiny DOM, hand-built outputs, a CLI harness.

* :func:`parse_dom` turns HTML (a generated page, or Chromium's ``--dump-dom``) into a tree
  of :class:`Node` with the standard library's parser, so tests can query classes and
  ``data-*`` attributes and read text exactly as the DOM holds it.
* :func:`write_output` writes a pipeline-shaped output (Parquet part files via
  :mod:`kebab_chunk.output.schema`, a manifest via :mod:`kebab_chunk.beam.manifest`'s own
  builders) from chunks the test made by hand, so summaries can be checked against numbers
  computed by hand.
* :func:`run_cli` runs the sub-commands through their ``add_*_parser`` / ``cmd_*`` pair.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pyarrow.parquet as pq

from kebab_chunk.beam.manifest import MANIFEST_NAME, manifest_header, summarise
from kebab_chunk.chunkers.base import make_chunk
from kebab_chunk.cli import report as report_cli
from kebab_chunk.model import CanonicalDocument, Chunk, ChunkPolicy, LineSpan, ParagraphBlock
from kebab_chunk.model.ids import content_hash, doc_id
from kebab_chunk.output.records import ErrorRecord
from kebab_chunk.output.schema import chunks_table, errors_table, parquet_bytes

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"
FIXTURES = REPO / "fixtures"

# --- DOM -----------------------------------------------------------------------------------

_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, pred: Callable[[Node], bool]) -> list[Node]:
        return [n for n in self.iter() if pred(n)]

    def by_class(self, name: str, tag: str | None = None) -> list[Node]:
        return self.find_all(lambda n: name in n.classes and (tag is None or n.tag == tag))


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_dom(html: str) -> Node:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root


def chunk_indices(dom: Node) -> set[int]:
    """The chunk indices named by the highlighted pieces (``.hl[data-c]``) of a view page."""
    return {int(i) for n in dom.by_class("hl") for i in n.attrs["data-c"].split()}


# --- hand-built outputs ----------------------------------------------------------------------


def make_doc(uri: str, n_blocks: int = 1, media_type: str = "text/markdown") -> CanonicalDocument:
    blocks = tuple(
        ParagraphBlock(
            block_id=f"{uri}-b{i}",
            text=f"block {i}",
            spans=(
                LineSpan(line_start=i + 1, line_end=i + 1, char_start=i * 8, char_end=i * 8 + 7),
            ),
        )
        for i in range(n_blocks)
    )
    return CanonicalDocument(
        doc_id=doc_id(uri),
        source_uri=uri,
        media_type=media_type,
        content_hash=content_hash(uri.encode()),
        parser_version="md-mistune-v1",
        blocks=blocks,
    )


def chunks_with_tokens(
    doc: CanonicalDocument, label: str, tokens: Sequence[int], policy: ChunkPolicy
) -> list[Chunk]:
    """One chunk per token value (stated, not estimated), distinct ids via distinct blocks,
    with the embed fields the pipeline fills in (the text, and its stated tokens)."""
    made = [
        make_chunk(
            doc,
            chunker_version=label,
            policy=policy,
            position=i,
            text=f"chunk {i}",
            block_ids=[f"{doc.source_uri}-{label}-{i}"],
            spans=[LineSpan(line_start=1, line_end=1, char_start=0, char_end=1)],
            token_estimate=t,
        )
        for i, t in enumerate(tokens)
    ]
    return [
        c.model_copy(update={"embed_text": c.text, "embed_tokens": c.token_estimate}) for c in made
    ]


def write_output(
    out: Path,
    chunks: Sequence[Chunk],
    errors: Sequence[ErrorRecord],
    policy: ChunkPolicy,
    labels: Sequence[str],
    media: dict[str, tuple[str, str]],
) -> Path:
    """Write ``out`` like the pipeline does; ``media`` maps source_uri -> (media type, bucket)."""
    for label in labels:
        part = out / "chunks" / f"chunker_version={label}" / "part-00000-of-00001.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(
            parquet_bytes(chunks_table(c for c in chunks if c.chunker_version == label))
        )
    (out / "errors").mkdir(parents=True, exist_ok=True)
    (out / "errors" / "part-00000-of-00001.parquet").write_bytes(
        parquet_bytes(errors_table(errors))
    )
    counts: Counter[tuple[str, ...]] = Counter()
    for _uri, (media_type, bucket) in sorted(media.items()):
        counts["files_matched",] += 1
        counts["media", media_type, "files"] += 1
        counts["bucket", bucket] += 1
        counts["media", media_type, bucket] += 1
        counts["documents_parsed",] += int(bucket != "errors")
    for c in chunks:
        counts["chunks", c.chunker_version] += 1
    for e in errors:
        counts["errors", e.stage, e.error_type] += 1
    header = manifest_header(
        labels=labels, requested=labels, policy=policy, max_file_bytes=1000, parse_timeout_s=5.0
    )
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    outputs = {
        k: [
            {"path": p, "rows": pq.read_metadata(out / p).num_rows}
            for p in written
            if p.startswith(f"{k}/")
        ]
        for k in ("chunks", "errors")
    }
    manifest = {
        **header,
        "outputs": outputs,
        **summarise(counts, []),
        "run_info": {"started_at": "test"},
    }
    import json

    (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2))
    return out


# --- CLI harness -----------------------------------------------------------------------------


@dataclass
class CliResult:
    status: int
    out: str
    err: str


def run_cli(argv: Sequence[str]) -> CliResult:
    """Parse ``argv`` with the report sub-commands and run the chosen one."""
    parser = argparse.ArgumentParser(prog="kebab-chunk")
    sub = parser.add_subparsers(dest="command", required=True)
    report_cli.add_inspect_parser(sub)
    report_cli.add_report_parser(sub)
    report_cli.add_view_parser(sub)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        args = parser.parse_args(list(argv))
        command = {
            "inspect": report_cli.cmd_inspect,
            "report": report_cli.cmd_report,
            "view": report_cli.cmd_view,
        }[args.command]
        status = command(args)
    return CliResult(status, out.getvalue(), err.getvalue())


def run_pipeline(corpus: Path, output: Path, *extra: str) -> Path:
    """Run the real Beam pipeline (DirectRunner) over ``corpus`` into ``output``."""
    from kebab_chunk.beam.graph import run
    from kebab_chunk.cli.run import parse_args

    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("apache_beam").setLevel(logging.WARNING)
    config, beam_args = parse_args(["--input", str(corpus), "--output", str(output), *extra])
    _result, written = run(config, [*beam_args, "--default_sdk_harness_log_level=WARNING"])
    return Path(written)
