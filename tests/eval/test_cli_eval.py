"""``kebab-chunk eval``: the table, JSON and HTML outputs, one-sentence errors with exit
status 2 for every bad input, and the defaults in ``--help``.

The model is replaced by the hashed bag-of-words embedder of ``test_run``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kebab_chunk.cli import eval as eval_cli
from kebab_chunk.cli import main
from kebab_chunk.cli.exits import EXIT_USAGE
from tests.eval.test_run import (
    ALPHA,
    BURN,
    PURR,
    HashEmbedder,
    make_dataset,
    ref,
    write_questions,
    write_typed,
)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Replace the model; records the --model value it was asked to load."""
    asked: list[str | None] = []

    def load(model: str | None) -> HashEmbedder:
        asked.append(model)
        return HashEmbedder()

    monkeypatch.setattr(eval_cli, "load_embedder", load)
    return asked


def _args(corpus: Path, questions: Path, *more: str) -> list[str]:
    return ["eval", "--corpus", str(corpus), "--questions", str(questions), *more]


def test_eval_prints_the_table_and_writes_json_and_html(
    tmp_path: Path, fake_model: list[str | None], capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, questions = make_dataset(tmp_path)
    status = main(
        _args(
            corpus,
            questions,
            "--setting",
            "md-heading-v1",
            "--setting",
            "hierarchical-v1:128:0",
            "--k",
            "1",
            "--json",
            str(tmp_path / "out.json"),
            "--html",
            str(tmp_path / "out.html"),
        )
    )
    out = capsys.readouterr()
    assert status == 0, out.err
    assert fake_model == [None]
    lines = out.out.splitlines()
    assert "model all-MiniLM-L6-v2" in lines[0]
    assert [line.split()[0] for line in lines[3:]] == ["md-heading-v1", "hierarchical-v1:128:0"]
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["k"] == 1 and data["questions"] == 2
    assert [s["recall"] for s in data["settings"]] == [1.0, 1.0]
    # alpha's answer is a whole paragraph chunk; beta is one chunk of 57 characters
    assert data["settings"][1]["precision"] == pytest.approx((1 + len(BURN) / 57) / 2)
    assert data["settings"][0]["precision"] == pytest.approx((len(PURR) / 75 + len(BURN) / 57) / 2)
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert "<svg" in page and "hierarchical-v1:128:0" in page


def test_model_option_is_passed_to_the_loader(
    tmp_path: Path, fake_model: list[str | None], capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, questions = make_dataset(tmp_path)
    args = _args(corpus, questions, "--setting", "md-heading-v1", "--model", "/models/x")
    assert main(args) == 0
    assert fake_model == ["/models/x"]
    assert "model /models/x" in capsys.readouterr().out


def _bad(tmp_path: Path) -> dict[str, list[str]]:
    corpus, questions = make_dataset(tmp_path)
    content, start, end = ref(ALPHA, PURR)
    shifted = write_questions(tmp_path / "s.csv", [("q", "alpha", [(content, start + 2, end)])])
    past = write_questions(
        tmp_path / "p.csv", [("q", "alpha", [("whiskers.\n", len(ALPHA) - 10, len(ALPHA) + 3)])]
    )
    orphan = write_questions(tmp_path / "o.csv", [("q", "gamma", [(content, start, end)])])
    ok = ["--setting", "md-heading-v1"]
    return {
        "unknown label": _args(corpus, questions, "--setting", "nope"),
        "bad setting": _args(corpus, questions, "--setting", "md-heading-v1:1:2:3"),
        "bad number": _args(corpus, questions, "--setting", "md-heading-v1:x"),
        "bad policy": _args(corpus, questions, "--setting", "md-heading-v1:32"),
        "twice": _args(corpus, questions, *ok, *ok),
        "no setting": _args(corpus, questions),
        "bad k": _args(corpus, questions, *ok, "--k", "0"),
        "bad tokenizer": _args(corpus, questions, *ok, "--tokenizer", "nope:nope"),
        "json dir": _args(corpus, questions, *ok, "--json", str(tmp_path / "no" / "x.json")),
        "html is dir": _args(corpus, questions, *ok, "--html", str(tmp_path)),
        "no questions": _args(corpus, tmp_path / "absent.csv", *ok),
        "no corpus": _args(tmp_path / "absent", questions, *ok),
        "reference": _args(corpus, shifted, *ok),
        "past the end": _args(corpus, past, *ok),
        "corpus_id": _args(corpus, orphan, *ok),
        "label/file": _args(corpus, questions, "--setting", "pdf-page-v1"),
        "types without column": _args(corpus, questions, *ok, "--types", "Single-Text"),
        "unknown type": _args(corpus, _typed(tmp_path, corpus), *ok, "--types", "Single Text"),
        "no type left": _args(corpus, _typed(tmp_path, corpus), *ok, "--exclude-types", _ALL),
    }


_ALL = "Single-Text,Contextual Anaphora"


def _typed(tmp_path: Path, corpus: Path) -> Path:
    """A typed questions file over make_dataset's corpus, one reference naming its file."""
    burn = {"content": BURN, "start_index": 0, "end_index": len(BURN), "corpus_id": "beta.md"}
    purr = dict(zip(("content", "start_index", "end_index"), ref(ALPHA, PURR), strict=True))
    return write_typed(
        tmp_path / "typed.csv",
        [
            ("Why do cats purr softly?", "alpha", [purr], "Single-Text"),
            ("What do rockets burn?", "alpha", [purr, burn], "Single-Text"),
            ("And the other one?", "beta", [burn], "Contextual Anaphora"),
        ],
    )


@pytest.mark.parametrize(
    "case",
    [
        "unknown label",
        "bad setting",
        "bad number",
        "bad policy",
        "twice",
        "no setting",
        "bad k",
        "bad tokenizer",
        "json dir",
        "html is dir",
        "no questions",
        "no corpus",
        "reference",
        "past the end",
        "corpus_id",
        "label/file",
        "types without column",
        "unknown type",
        "no type left",
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(
    tmp_path: Path,
    fake_model: list[str | None],
    capsys: pytest.CaptureFixture[str],
    case: str,
) -> None:
    try:
        status = main(_bad(tmp_path)[case])
    except SystemExit as exc:  # argparse's own errors (a missing option)
        status = int(str(exc.code))
    out = capsys.readouterr()
    assert status == EXIT_USAGE, out.err
    assert out.out == ""
    assert out.err.startswith("kebab-chunk: ") and out.err.endswith(".\n")
    assert out.err.count("\n") == 1, out.err
    assert "Traceback" not in out.err
    if case not in ("label/file",):  # checks before the model is loaded
        assert fake_model == []


def test_a_missing_eval_extra_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kebab_chunk.eval.bert", None)  # import fails
    corpus, questions = make_dataset(tmp_path)
    assert main(_args(corpus, questions, "--setting", "md-heading-v1")) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "eval extra" in err and err.count("\n") == 1


def test_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for default in (
        "chunks retrieved per question (default: 5)",
        "(default: bytes-3)",
        "(default: text)",
        "(default: all-MiniLM-L6-v2",
        "target 512, overlap 64",
        "(default: every type; Contextual Anaphora questions are reported by type only)",
        "'Contextual Anaphora' (default: none)",
    ):
        assert default in text, default


def test_the_packaged_model_finds_the_answers_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, questions = make_dataset(tmp_path)
    args = _args(corpus, questions, "--setting", "hierarchical-v1", "--k", "1", "--json")
    assert main([*args, str(tmp_path / "r.json")]) == 0, capsys.readouterr().err
    (setting,) = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["settings"]
    assert [q["retrieved"] for q in setting["per_question"]] == [[["alpha", 0]], [["beta", 0]]]
    assert setting["recall"] == 1.0


def test_types_select_questions_and_the_table_and_json_break_results_down_by_type(
    tmp_path: Path, fake_model: list[str | None], capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, _ = make_dataset(tmp_path)
    typed = _typed(tmp_path, corpus)
    out_json = tmp_path / "out.json"
    args = _args(corpus, typed, "--setting", "md-heading-v1", "--k", "2", "--json", str(out_json))
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Contextual Anaphora (1 question) set apart" in lines[0]
    assert lines[5].startswith("by question type")
    assert [line.split()[1] for line in lines[8:]] == ["Single-Text", "Contextual"]
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["questions"] == 3 and data["summarized_questions"] == 2
    (setting,) = data["settings"]
    assert setting["recall"] == 1.0 and setting["questions"] == 2  # k=2 finds both files
    assert sorted(setting["per_type"]) == ["Contextual Anaphora", "Single-Text"]
    assert main([*args, "--exclude-types", "Contextual Anaphora"]) == 0
    out = capsys.readouterr().out
    assert "set apart" not in out and "Contextual" not in out
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["questions"] == 2 and list(data["settings"][0]["per_type"]) == ["Single-Text"]
    assert main([*args, "--types", "Contextual Anaphora"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[3].split()[6:11] == ["-", "-", "-", "-", "-"]  # nothing left to summarise
    assert table[-1].split()[1:3] == ["Contextual", "Anaphora"]


def test_parsers_choose_how_the_corpus_is_read(
    tmp_path: Path, fake_model: list[str | None], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--parsers`` as in ``run``: html-v2 leaves a "SEE ALSO" link list out as navigation,
    html-v3 keeps it, so only html-v3's chunks can hold the reference."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    page = (
        "<h1>kc-label</h1><p>Create or retire a chunker label.</p>"
        '<h2>SEE ALSO</h2><p><a href="kc-config.html">kc-config(1)</a>, '
        '<a href="kc-run.html">kc-run(1)</a>, <a href="kc-diff.html">kc-diff(1)</a></p>'
    )
    (corpus / "label.html").write_text(page, encoding="utf-8")
    reference = {"content": "kc-config(1), kc-run(1), kc-diff(1)", "corpus_id": "label.html"}
    questions = tmp_path / "q.csv"
    questions.write_text(
        "question,references,corpus_id\n"
        f'"What else to read?","{json.dumps([reference]).replace(chr(34), chr(34) * 2)}",'
        "label.html\n",
        encoding="utf-8",
    )
    recall = {}
    for version in ("html-v2", "html-v3"):
        out = tmp_path / f"{version}.json"
        args = _args(corpus, questions, "--setting", "hybrid-v4", "--k", "10", "--json", str(out))
        assert main([*args, "--parsers", version]) == 0, capsys.readouterr().err
        recall[version] = json.loads(out.read_text(encoding="utf-8"))["settings"][0][
            "overlap_recall"
        ]
    assert recall == {"html-v2": 0.0, "html-v3": 1.0}
    assert main([*_args(corpus, questions, "--setting", "hybrid-v4"), "--parsers", "nope"]) == 2
    assert "no parser is registered as 'nope'" in capsys.readouterr().err
