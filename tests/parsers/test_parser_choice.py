"""ParserChoice: which parser version reads each media type in a run (--parsers)."""

from __future__ import annotations

import pickle

import pytest

from kebab_chunk.parsers.registry import (
    DEFAULT_PARSER_VERSIONS,
    ParserChoice,
    UnknownParserVersionError,
    get_parser,
    parser_versions,
    supported_media_types,
)

MARKDOWN = b"# Title\n\nSome text.\n\n- a\n- b\n"


def test_each_default_version_is_the_version_its_parser_reports() -> None:
    assert sorted(DEFAULT_PARSER_VERSIONS) == supported_media_types()
    for media_type, version in DEFAULT_PARSER_VERSIONS.items():
        assert get_parser(media_type).version == version
        assert media_type in parser_versions()[version]


def test_default_choice_parses_markdown_with_pyromark() -> None:
    choice = ParserChoice.from_option(None)
    assert choice.version_for("text/markdown") == "md-pyromark-v1"
    assert choice(MARKDOWN, "a.md").parser_version == "md-pyromark-v1"
    assert choice.effective() == DEFAULT_PARSER_VERSIONS


def test_a_named_version_replaces_the_default_only_for_its_media_types() -> None:
    choice = ParserChoice.from_option(" md-mistune-v1 , ")
    assert choice.version_for("text/markdown") == "md-mistune-v1"
    assert choice.version_for("application/pdf") == "pdf-text-v3"
    assert choice(MARKDOWN, "a.md").parser_version == "md-mistune-v1"
    assert choice(b"plain words\n", "a.txt").parser_version == "text-plain-v2"
    assert choice.effective()["text/markdown"] == "md-mistune-v1"


def test_both_markdown_parsers_give_the_same_blocks_here() -> None:
    """Same blocks (kind, text, ids, spans) means the same chunk ids under either default."""
    mistune = ParserChoice.from_option("md-mistune-v1")(MARKDOWN, "a.md")
    pyromark = ParserChoice()(MARKDOWN, "a.md")
    assert mistune.blocks == pyromark.blocks


def test_choice_survives_pickling_for_workers() -> None:
    choice = ParserChoice.from_option("md-mistune-v1,csv-v1")
    assert pickle.loads(pickle.dumps(choice)) == choice


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("md-nope-v9", "registered parser versions are"),
        ("md-mistune-v1,md-pyromark-v1", "name only one of them"),
        (" , ", "--parsers is empty"),
    ],
)
def test_bad_parser_option_is_one_sentence(value: str, needle: str) -> None:
    with pytest.raises(UnknownParserVersionError) as raised:
        ParserChoice.from_option(value)
    message = str(raised.value)
    assert needle in message and "\n" not in message and message.endswith(".")
