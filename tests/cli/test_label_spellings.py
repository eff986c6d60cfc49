"""Issue 32: one word for a label on the command line. ``run --labels``, ``chunk --label``,
``view --label`` and ``kebab-chunk labels`` are the names help shows; the old spellings
(``--chunkers``, ``--chunker``, ``kebab-chunk chunkers``) still work for the scripts that use
them, and help, usage lines and error sentences never show them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kebab_chunk.cli import _build_parser, main
from kebab_chunk.cli.run import parse_args

ROOT = Path(__file__).resolve().parents[2]
CORPUS = str(ROOT / "fixtures" / "corpus")
#: The old spellings as help would show them: an option, the command in the list of
#: commands or in the usage line's choices, or a reference to the command.
OLD_SPELLINGS = re.compile(
    r"--chunker|kebab-chunk chunkers|^\s+chunkers\s|[{,]chunkers[,}]", re.MULTILINE
)


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        status = main([*argv, "--help"])
    except SystemExit as exc:  # argparse's sub-commands exit; run returns the status
        status = int(exc.code or 0)
    assert status == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "new"),
    [((), "labels"), (("chunk",), "--label"), (("view",), "--label"), (("run",), "--labels")],
)
def test_help_shows_the_new_names_only(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], new: str
) -> None:
    text = _help(capsys, *argv)
    assert new in text
    assert not OLD_SPELLINGS.search(text), text


def test_labels_and_its_old_name_list_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["labels"]) == 0
    listed = capsys.readouterr().out
    assert "md-heading-v3\t" in listed
    assert main(["chunkers"]) == 0
    assert capsys.readouterr().out == listed


def test_chunk_takes_label_and_its_old_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    file = str(ROOT / "fixtures" / "markdown" / "headings.md")
    assert main(["chunk", file, "--label", "md-heading-v3"]) == 0
    records = capsys.readouterr().out
    assert '"chunker_version":"md-heading-v3"' in records
    assert main(["chunk", file, "--chunker", "md-heading-v3"]) == 0
    assert capsys.readouterr().out == records


def test_chunk_without_a_label_names_the_new_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["chunk", "README.md"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--label" in err and "--chunker" not in err


def test_chunk_refuses_the_label_given_twice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["chunk", "README.md", "--label", "md-heading-v3", "--chunker", "md-heading-v2"])
    assert "not allowed with argument --label" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--label", "--chunker"])
def test_view_takes_label_and_its_old_spelling(option: str) -> None:
    args = _build_parser().parse_args(["view", "a.md", option, "md-heading-v3", "--html", "o"])
    assert args.label == "md-heading-v3"
    assert _build_parser().parse_args(["view", "a.md", "--html", "o"]).label is None


def test_run_takes_labels_and_its_old_spelling(tmp_path: Path) -> None:
    argv = ["--input", CORPUS, "--output", str(tmp_path / "out")]
    new, _ = parse_args([*argv, "--labels", "md-heading-v3,hybrid-v4"])
    old, _ = parse_args([*argv, "--chunkers", "md-heading-v3,hybrid-v4"])
    assert new.labels == old.labels == ("md-heading-v3", "hybrid-v4")
    assert parse_args(argv)[0].labels is None


@pytest.mark.parametrize("option", ["--labels", "--chunkers"])
def test_an_empty_label_list_is_named_by_its_new_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    argv = ["run", "--input", CORPUS, "--output", str(tmp_path / "out"), option, " , "]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--labels is empty; name at least one chunker label" in err
    assert "--chunkers" not in err


def test_rechunk_hands_the_old_spelling_to_run() -> None:
    """rechunk checks run's options before it claims anything; the old spelling is one."""
    from kebab_chunk.cli.rechunk import _refuse_unknown_options

    _refuse_unknown_options(["--corpus", "c", "--runs", "r", "--chunkers", "md-heading-v3"])
    _refuse_unknown_options(["--corpus", "c", "--runs", "r", "--labels", "md-heading-v3"])


@pytest.mark.parametrize(
    ("given", "message"),
    [
        # Apache Beam's --label (Dataflow job labels) is not ours: a chunker label given
        # there would leave the run on the default labels, so it is refused.
        (["--label", "md-heading-v3"], "name chunker labels with --labels md-heading-v3"),
        (["--label=hybrid-v4,md-heading-v3"], "with --labels hybrid-v4,md-heading-v3"),
        # Beam's --labels spelling of job labels, from before ours took the name
        (["--labels", "team=search"], "give Apache Beam (Dataflow) job labels as --label"),
        (["--labels", '{"team": "search"}'], "looks like a job label"),
    ],
)
def test_chunker_labels_and_dataflow_job_labels_are_told_apart(
    tmp_path: Path, given: list[str], message: str
) -> None:
    from kebab_chunk.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(message)):
        parse_args(["--input", CORPUS, "--output", str(tmp_path / "out"), *given])


def test_a_dataflow_job_label_still_reaches_beam(tmp_path: Path) -> None:
    config, beam_args = parse_args(
        ["--input", CORPUS, "--output", str(tmp_path / "out"), "--label", "team=search"]
    )
    assert config.labels is None and beam_args == ["--label", "team=search"]
