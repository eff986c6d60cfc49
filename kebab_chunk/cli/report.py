"""The ``inspect``, ``report`` and ``view`` sub-commands of ``kebab-chunk``.

Each has ``add_<name>_parser(subparsers)`` (declares the sub-command and its options) and
``cmd_<name>(args) -> int`` (runs it, returns the exit status), wired in
:mod:`kebab_chunk.cli`. A user error is one sentence on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kebab_chunk._quote import terminal_json
from kebab_chunk.cli._io import UsageError, read_input, source_uri_for
from kebab_chunk.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from kebab_chunk.errors import KebabError

__all__ = [
    "add_inspect_parser",
    "add_report_parser",
    "add_view_parser",
    "cmd_inspect",
    "cmd_report",
    "cmd_view",
]

_DEFAULT_TOP = 5


def _fail(exc: BaseException) -> int:
    message = str(exc).strip().rstrip(".")
    sys.stderr.write(f"kebab-chunk: {message}.\n")
    return EXIT_USAGE


def _check_target(path: str) -> Path:
    """Refuse an unusable output path before any work is done, including one that would
    overwrite a file of a finished output (its manifest or a part file), links resolved."""
    from kebab_chunk.output.layout import CONTENT, MANIFEST_NAME

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path} is a directory; pass a file name such as {path}/page.html")
    if not target.parent.is_dir():
        raise UsageError(f"the directory of {path} does not exist; create it or pick another path")
    resolved = target.resolve()
    for folder in resolved.parents:
        if (folder / MANIFEST_NAME).is_file():
            if resolved.relative_to(folder).parts[0] in CONTENT:
                raise UsageError(
                    f"{path} would overwrite a file of the output {folder}; write the page "
                    "beside it instead"
                )
            break
    return target


def _write(path: str, text: str) -> None:
    target = _check_target(path)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _top(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--top takes a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"--top must be >= 0, got {n}")
    return n


# --- inspect ---------------------------------------------------------------------------------


def add_inspect_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "inspect",
        help="summarise a pipeline output: chunks and token percentiles per label, errors, "
        "documents with zero chunks or warnings",
        description="Summarise a 'kebab-chunk run' output from its Parquet files and manifest: "
        "chunks per label, errors, and from the documents table the documents that gave zero "
        "chunks and those with parse warnings.",
    )
    p.add_argument("output", metavar="OUTPUT", help="the --output directory of a run")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--top", type=_top, default=_DEFAULT_TOP, help="largest chunks listed per label")
    p.add_argument(
        "--compare",
        metavar="OLD_OUTPUT",
        help="also compare with an older output: chunk ids added/removed/unchanged per label "
        "(default: no comparison)",
    )
    return p


def cmd_inspect(args: argparse.Namespace) -> int:
    from kebab_chunk.report.inspect import (
        compare_outputs,
        load_output,
        render_compare_text,
        render_text,
        summarize,
    )

    try:
        data = load_output(args.output)
        summary = summarize(data, top=args.top)
        comparison = compare_outputs(load_output(args.compare), data) if args.compare else None
    except KebabError as exc:
        return _fail(exc)
    if args.json:
        out: dict[str, Any] = dict(summary)
        if comparison is not None:
            out["compare"] = comparison
        sys.stdout.write(terminal_json(out, indent=2) + "\n")
    else:
        sys.stdout.write(render_text(summary))
        if comparison is not None:
            sys.stdout.write("\n" + render_compare_text(comparison))
    return EXIT_OK


# --- report ----------------------------------------------------------------------------------


def add_report_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report (charts, tables) of a pipeline output",
        description="Write one self-contained HTML file describing a 'kebab-chunk run' output.",
    )
    p.add_argument("output", metavar="OUTPUT", help="the --output directory of a run")
    p.add_argument("--html", required=True, metavar="FILE", help="where to write the report")
    p.add_argument(
        "--compare",
        metavar="OLD_OUTPUT",
        help="an older output to compare with (e.g. the previous chunker version's run; "
        "default: no comparison)",
    )
    p.add_argument("--top", type=_top, default=10, help="largest chunks listed per label")
    return p


def cmd_report(args: argparse.Namespace) -> int:
    from kebab_chunk.report.inspect import load_output
    from kebab_chunk.report.report import NO_CHARTS, charts_available, render_report

    try:
        _check_target(args.html)
        data = load_output(args.output)
        other = load_output(args.compare) if args.compare else None
        _write(args.html, render_report(data, other, top=args.top))
    except (KebabError, UsageError) as exc:
        return _fail(exc)
    print(f"kebab-chunk: wrote report of {args.output} to {args.html}")
    if not charts_available():
        sys.stderr.write(f"kebab-chunk: {NO_CHARTS}\n")
    return EXIT_OK


# --- view ------------------------------------------------------------------------------------


def add_view_parser(subparsers: Any) -> argparse.ArgumentParser:
    from kebab_chunk.cli._options import add_old_spelling, add_policy_arguments

    p: argparse.ArgumentParser = subparsers.add_parser(
        "view",
        help="write an HTML page showing a document with its chunks highlighted from their spans",
        description="Draw a document with each chunk's source span highlighted, from the "
        "spans alone (a visual proof that spans are exact). Exit status 1 when a span does "
        "not fit the text it indexes.",
    )
    p.add_argument("file", metavar="FILE", help="the source document")
    add_old_spelling(
        p,
        "--chunker",
        p.add_argument(
            "--label", metavar="LABEL", help="chunker label (default: the media type's default)"
        ),
    )
    p.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    p.add_argument(
        "--root",
        help="make source_uri relative to this directory, the corpus root (default: the "
        "path as given)",
    )
    p.add_argument(
        "--from-output",
        metavar="OUTPUT",
        help="draw the chunks a pipeline run wrote for this file instead of chunking it now "
        "(give --root the corpus directory of that run; default: chunk it now)",
    )
    add_policy_arguments(p)
    return p


def _default_label(media_type: str) -> str:
    from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE

    labels = DEFAULT_LABELS_BY_MEDIA_TYPE.get(media_type)
    if not labels:
        raise UsageError(
            f"there is no default chunker for {media_type}; pass --label LABEL "
            "(see 'kebab-chunk labels')"
        )
    return labels[0]


def _chunks_from_output(output: str, source_uri: str, label: str) -> list[Any]:
    import pyarrow.compute as pc

    from kebab_chunk.output.finished import open_output
    from kebab_chunk.output.reader import read_chunks
    from kebab_chunk.output.schema import row_to_chunk

    path, _ = open_output(output, "--from-output")  # a finished, whole output, or one sentence
    try:
        table = read_chunks(path)
    except (FileNotFoundError, OSError) as exc:
        raise UsageError(f"cannot read the chunks of {output} ({exc})") from None
    mask = pc.and_(
        pc.equal(table["source_uri"], source_uri), pc.equal(table["chunker_version"], label)
    )
    rows = table.filter(mask).to_pylist()
    if not rows:
        raise UsageError(
            f"{output} has no {label} chunks with source_uri {source_uri!r}; check --label "
            "and give --root the corpus directory of that run"
        )
    return [row_to_chunk(r) for r in rows]


def cmd_view(args: argparse.Namespace) -> int:
    from kebab_chunk.chunkers.registry import get_chunker
    from kebab_chunk.cli._options import policy_from_args
    from kebab_chunk.parsers import parse_document
    from kebab_chunk.report.view import render_view

    try:
        _check_target(args.html)
        raw = read_input(args.file)
        uri = source_uri_for(args.file, args.root)
        doc = parse_document(raw, uri)
        label = args.label or _default_label(doc.media_type)
        if args.from_output:
            get_chunker(label)  # an unknown label is one clear sentence
            chunks = _chunks_from_output(args.from_output, uri, label)
        else:
            chunks = get_chunker(label).chunk(doc, policy_from_args(args))
        result = render_view(doc, raw, chunks, chunker=label)
        _write(args.html, result.html)
    except (KebabError, UsageError) as exc:
        return _fail(exc)
    print(
        f"kebab-chunk: wrote {args.html}: {result.chunks} {label} chunks of {uri} "
        f"on {result.canvases} canvas{'es' if result.canvases != 1 else ''}"
    )
    if result.problems:
        sys.stderr.write(
            f"kebab-chunk: {len(result.problems)} span(s) do not fit the text they index, "
            f"e.g. {result.problems[0]}; see the top of {args.html}.\n"
        )
        return EXIT_FAILED
    return EXIT_OK
