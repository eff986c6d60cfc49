"""What a new user meets on the command line: help that shows every default and no internal
references, one sentence for a missing file-system extra, a tokenizer that would change
chunk ids and nothing else refused, and Beam's INFO log kept off the terminal.
"""

from __future__ import annotations

import argparse
import ast
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kebab_chunk.chunkers.registry import get_chunker, registered_labels
from kebab_chunk.cli import _build_parser, main
from kebab_chunk.cli._options import check_filesystems, check_tokenizer_use, configure_logging
from kebab_chunk.errors import UsageError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.parsers import parse_document

ROOT = Path(__file__).resolve().parents[2]

#: How the project's own notes are cited internally; none of it may reach a user.
INTERNAL = re.compile(
    r"\b(seeds?|issues?)\s*#?\d+|\bDESIGN\b|§\s*\d|decisions\.md|see decisions", re.IGNORECASE
)


# --- help --------------------------------------------------------------------------------


def _sub_command_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    from kebab_chunk.cli import rechunk, run

    top = _build_parser()
    yield "kebab-chunk", top
    (sub,) = (a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        if name not in ("run", "rechunk"):  # placeholders; their own parsers follow
            yield name, parser
    yield "run", run._arg_parser()
    yield "rechunk", rechunk._arg_parser()


def _option_help(help_text: str, option: str) -> str:
    """The help block of one option in ``--help`` output (up to the next option)."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(option)}\b", line))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if re.match(r"\s{1,4}-", line) or not line.startswith(" "):
            break
        block.append(line)
    return " ".join(" ".join(block).split())


def test_every_option_with_a_value_shows_its_default_in_help() -> None:
    """``chunk --help`` used to show no defaults at all (--target-tokens, --overlap-tokens)."""
    missing = []
    for name, parser in _sub_command_parsers():
        text = parser.format_help()
        required_groups = [g for g in parser._mutually_exclusive_groups if g.required]
        for action in parser._actions:
            if action.help is argparse.SUPPRESS:
                continue  # an old spelling: help shows the option's name, with its default
            required = action.required or any(action in g._group_actions for g in required_groups)
            if not action.option_strings or action.nargs == 0 or required:
                continue  # positionals, flags and required options have no default to show
            block = _option_help(text, action.option_strings[0])
            # A value must appear as given; "none" (None, an empty list) is said in words.
            value = action.default
            shown = "default" in block and (not value or str(value) in block)
            if not shown:
                missing.append(f"{name} {action.option_strings[0]}: {block}")
    assert not missing, "\n".join(missing)


def test_chunk_help_names_the_policy_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["chunk", "--help"])
    text = capsys.readouterr().out
    defaults = ChunkPolicy()
    assert f"(default: {defaults.target_tokens})" in _option_help(text, "--target-tokens")
    assert f"(default: {defaults.overlap_tokens})" in _option_help(text, "--overlap-tokens")
    assert "bytes-3 (default)" in _option_help(text, "--tokenizer")


def _unwrapped(text: str) -> str:
    """Help text with argparse's line wrapping undone (it breaks labels at hyphens)."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


def test_help_names_the_default_labels_and_parsers_in_force() -> None:
    """``run --help`` still named the v1 labels after the defaults moved to v2."""
    from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE
    from kebab_chunk.parsers.registry import DEFAULT_PARSER_VERSIONS

    helps = {name: _unwrapped(parser.format_help()) for name, parser in _sub_command_parsers()}
    shown = _unwrapped(_option_help(_sub_command_parsers_help("run"), "--labels"))
    for labels in DEFAULT_LABELS_BY_MEDIA_TYPE.values():
        for label in labels:
            assert f"{label} for" in shown
    assert "md-heading-v3 for Markdown and plain text" in shown
    assert "hybrid-v4 for HTML, CSV, TSV, DOCX and docling JSON" in shown
    for name in ("run", "chunk", "parse", "rechunk"):
        text = helps[name]
        if "--parsers" not in text:
            continue
        for version in ("md-pyromark-v1", "pdf-text-v3", "html-v3", "docling-json-v2"):
            assert version == DEFAULT_PARSER_VERSIONS[_media_of(version)]
            assert f"{version} for" in text, name
    assert not any("v1 for PDF" in text or "hybrid-v1 for" in text for text in helps.values())


def _sub_command_parsers_help(name: str) -> str:
    return next(p.format_help() for n, p in _sub_command_parsers() if n == name)


def _media_of(version: str) -> str:
    from kebab_chunk.parsers.registry import parser_versions

    return parser_versions()[version][0]


def test_no_help_text_names_internal_references() -> None:
    for name, parser in _sub_command_parsers():
        text = parser.format_help()
        assert not INTERNAL.search(text), f"{name}: {INTERNAL.search(text)}"


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_message_in_the_package_names_internal_references() -> None:
    """Every string the package may show (errors, warnings, help), docstrings aside."""
    hits = []
    for path in sorted((ROOT / "kebab_chunk").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and INTERNAL.search(node.value)
            ):
                hits.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:80]!r}")
    assert not hits, "\n".join(hits)


# --- a tokenizer no chunker uses -----------------------------------------------------------


def test_every_chunker_says_which_tokenizers_it_uses() -> None:
    for label in registered_labels():
        used = get_chunker(label).uses_tokenizers
        assert used is None or (isinstance(used, frozenset) and "bytes-3" in used), label


@pytest.mark.parametrize("label", registered_labels())
def test_uses_tokenizers_tells_the_truth(label: str) -> None:
    """A chunker that says it ignores a tokenizer gives the same chunks apart from ids."""
    chunker = get_chunker(label)
    byte_policy = ChunkPolicy(target_tokens=64, overlap_tokens=8)
    bpe_policy = ChunkPolicy(target_tokens=64, overlap_tokens=8, tokenizer="tiktoken:cl100k_base")
    paths = ["fixtures/corpus/guides/configuration.md", "fixtures/pdf/three-page-en.pdf"]
    differs = False
    for path in paths:
        doc = parse_document((ROOT / path).read_bytes(), path)
        if not chunker.accepts(doc):
            continue
        a, b = chunker.chunk(doc, byte_policy), chunker.chunk(doc, bpe_policy)
        shape = [(c.text, c.source_spans, c.token_estimate) for c in a]
        if shape != [(c.text, c.source_spans, c.token_estimate) for c in b]:
            differs = True
        assert {c.chunk_id for c in a}.isdisjoint({c.chunk_id for c in b})  # ids always move
    uses_bpe = chunker.uses_tokenizers is None
    assert differs == uses_bpe, (label, chunker.uses_tokenizers)


def test_chunk_refuses_a_tokenizer_the_chunker_ignores(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["chunk", "README.md", "--label", "md-heading-v1", "--tokenizer", "cl100k_base"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("kebab-chunk: ")
    assert "md-heading-v1" in err and "chunk id" in err and "hybrid-v1" in err, err


def test_chunk_accepts_a_tokenizer_the_chunker_uses(capsys: pytest.CaptureFixture[str]) -> None:
    path = "fixtures/corpus/guides/configuration.md"
    assert main(["chunk", path, "--label", "md-header-chars-v1", "--tokenizer", "chars"]) == 0
    assert capsys.readouterr().out.strip()


def test_run_refuses_when_every_label_ignores_the_tokenizer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from kebab_chunk.cli.run import main as run_main

    argv = ["--input", str(ROOT / "fixtures" / "corpus"), "--output", str(tmp_path / "out")]
    argv += ["--labels", "md-heading-v1,pdf-page-v1", "--tokenizer", "cl100k_base"]
    assert run_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "tiktoken:cl100k_base" in err, err
    assert "md-heading-v1, pdf-page-v1" in err
    assert not (tmp_path / "out").exists()


def test_run_warns_when_only_some_labels_ignore_the_tokenizer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from kebab_chunk.cli.run import parse_args

    argv = ["--input", str(ROOT / "fixtures" / "corpus"), "--output", str(tmp_path / "out")]
    config, _ = parse_args([*argv, "--tokenizer", "cl100k_base"])  # default labels: all count
    assert config.policy.tokenizer == "tiktoken:cl100k_base"
    assert capsys.readouterr().err == ""
    labels = ["--labels", "md-heading-v1,pdf-page-v1,hybrid-v1"]
    parse_args([*argv, *labels, "--tokenizer", "cl100k_base"])
    err = capsys.readouterr().err.strip()
    assert err.startswith("kebab-chunk run: warning: --tokenizer tiktoken:cl100k_base"), err
    assert "md-heading-v1, pdf-page-v1" in err and "hybrid-v1" not in err
    parse_args([*argv, "--labels", "hybrid-v1,hierarchical-v1", "--tokenizer", "o200k_base"])
    parse_args(argv)
    assert capsys.readouterr().err == ""


def test_check_tokenizer_use_is_silent_for_the_default() -> None:
    assert check_tokenizer_use(["md-heading-v1"], "bytes-3") is None
    assert check_tokenizer_use(["md-header-chars-v1"], "chars") is None
    with pytest.raises(UsageError, match="md-header-chars-v1"):
        check_tokenizer_use(["md-header-chars-v1"], "hf:all-MiniLM-L6-v2")


# --- file systems that are not installed ----------------------------------------------------


@pytest.fixture
def only_local_filesystem(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without apache-beam[gcp] or [aws], whatever this one has."""
    from apache_beam.io.filesystem import FileSystem
    from apache_beam.io.localfilesystem import LocalFileSystem

    monkeypatch.setattr(FileSystem, "get_all_subclasses", staticmethod(lambda: [LocalFileSystem]))


@pytest.mark.parametrize(
    ("option", "path", "extra"),
    [
        ("--input", "gs://bucket/corpus", "pip install 'kebab-chunk[gcs]'"),
        ("--output", "s3://bucket/chunks", "pip install 'kebab-chunk[s3]'"),
    ],
)
def test_a_missing_filesystem_extra_is_one_sentence_naming_it(
    only_local_filesystem: None,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    option: str,
    path: str,
    extra: str,
) -> None:
    from kebab_chunk.cli.run import main as run_main

    given = {"--input": str(ROOT / "fixtures" / "corpus"), "--output": str(tmp_path / "out")}
    given[option] = path
    assert run_main([arg for pair in given.items() for arg in pair]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{option} {path!r}" in err and extra in err, err
    assert "unexpected" not in err and "Unable to get filesystem" not in err


def test_check_filesystems_covers_every_path_option(only_local_filesystem: None) -> None:
    check_filesystems({"--input": ["/data/a", "docs"], "--previous": None})
    with pytest.raises(UsageError, match=r"--previous 'gs://b/old'.*kebab-chunk\[gcs\]"):
        check_filesystems({"--input": ["/data/a"], "--previous": "gs://b/old"})
    with pytest.raises(UsageError, match="no Apache Beam file system reads"):
        check_filesystems({"--input": "ftp://host/corpus"})


# --- logs --------------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """Root handlers and levels as they were; Beam's logger at its default (other test
    modules quieten it)."""
    root, beam = logging.getLogger(), logging.getLogger("apache_beam")
    handlers, level, beam_level = list(root.handlers), root.level, beam.level
    beam.setLevel(logging.NOTSET)
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    beam.setLevel(beam_level)


def test_info_records_stay_off_the_terminal_unless_verbose(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    beam_log = logging.getLogger("apache_beam.runners.portability.fn_api_runner")
    configure_logging(verbose=False)
    beam_log.info("Running stage 12 of 40")
    beam_log.warning("a real problem")
    err = capsys.readouterr().err
    assert "Running stage" not in err and "a real problem" in err
    configure_logging(verbose=True)
    beam_log.info("Running stage 13 of 40")
    assert "Running stage 13 of 40" in capsys.readouterr().err
    names = [h.get_name() for h in logging.getLogger().handlers]
    assert names.count("kebab-chunk") == 1  # configured twice, installed once


def test_verbose_and_debug_may_go_anywhere(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--verbose", "labels"]) == 0
    assert main(["labels", "--verbose"]) == 0
    assert "md-heading-v1" in capsys.readouterr().out


# --- typos -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "typo", "meant"),
    [
        # run: before "--output is required", and Beam's options are candidates too
        (["run", "--input", "fixtures/corpus", "--ouput", "out/x"], "--ouput", "--output"),
        (
            ["run", "--input", "fixtures/corpus", "--output", "o", "--runer=X"],
            "--runer",
            "--runner",
        ),
        (["rechunk", "--corpus", "fixtures/corpus", "--rnus", "r"], "--rnus", "--runs"),
        (["rechunk", "--corpsu", "c", "--runs", "r"], "--corpsu", "--corpus"),
        (
            ["rechunk", "--corpus", "c", "--runs", "r", "--taget-tokens=9"],
            "--taget-tokens",
            "--target-tokens",
        ),
        (["chunk", "README.md", "--lable", "md-heading-v2"], "--lable", "--label"),
        # close to an old spelling: the name help shows is suggested
        (["chunk", "README.md", "--chuner", "md-heading-v2"], "--chuner", "--label"),
        (["run", "--input", "fixtures/corpus", "--chunkrs", "x"], "--chunkrs", "--labels"),
        (["rechunk", "--corpus", "c", "--runs", "r", "--lables=x"], "--lables", "--labels"),
        (["diff", "a", "b", "--jsno"], "--jsno", "--json"),
    ],
)
def test_an_unknown_option_close_to_a_known_one_is_named_with_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], typo: str, meant: str
) -> None:
    """Issue 29.17: a typo is reported as the typo, with the option meant, exit 2; never as
    a missing required option."""
    try:
        status = main(argv)
    except SystemExit as exc:  # the sub-commands' parser exits with the status
        status = int(exc.code or 0)
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"unknown option '{typo}'; did you mean '{meant}'?" in err
    assert "required" not in err
