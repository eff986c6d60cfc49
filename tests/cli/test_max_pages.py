"""``parse`` and ``chunk`` take the parse limits of ``run``: ``--max-pages`` and friends.

Without them a PDF over the default 2,000 pages could only be processed by ``run``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fpdf
import pypdf
import pytest

from kebab_chunk.cli import main
from kebab_chunk.parsers.base import DEFAULT_LIMITS

#: A different line per page: a line repeated on most pages is a running footer to pdf-text-v2.
TOPICS = ("install", "configure", "schedule", "monitor", "upgrade")


def _pdf_with_text(pages: int) -> bytes:
    pdf = fpdf.FPDF()
    pdf.set_font("helvetica", size=12)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(text=f"Page {number} of the manual: {TOPICS[number - 1]}.")
    return bytes(pdf.output())


def _blank_pdf(pages: int) -> bytes:
    """Cheap: one blank page object repeated (each a shallow copy in the page tree)."""
    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def five_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("max-pages") / "five.pdf"
    path.write_bytes(_pdf_with_text(5))
    return path


@pytest.fixture(scope="module")
def over_default(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("max-pages") / "manual.pdf"
    path.write_bytes(_blank_pdf(DEFAULT_LIMITS.max_pages + 1))
    return path


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kebab-chunk: ") and lines[0].endswith("."), err
    return lines[0]


@pytest.mark.parametrize("command", ["parse", "chunk"])
def test_a_small_max_pages_refuses_the_pdf_naming_the_option(
    command: str, five_pages: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--label", "pdf-page-v1"] if command == "chunk" else []
    status = main([command, str(five_pages), *extra, "--max-pages", "3"])
    out, err = capsys.readouterr()
    assert status == (2 if command == "parse" else 1)
    assert out == ""
    sentence = _one_sentence(err)
    assert "5 pages" in sentence and "--max-pages" in sentence, sentence


def test_parse_within_max_pages_works(five_pages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(five_pages), "--max-pages", "10"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [b["text"] for b in doc["blocks"]] == [
        f"Page {n} of the manual: {topic}." for n, topic in enumerate(TOPICS, 1)
    ]


def test_chunk_within_max_pages_works(five_pages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunk", str(five_pages), "--label", "pdf-page-v1", "--max-pages", "5"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 5


def test_the_default_refuses_a_pdf_over_2000_pages(
    over_default: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["parse", str(over_default)]) == 2
    sentence = _one_sentence(capsys.readouterr().err)
    assert f"{DEFAULT_LIMITS.max_pages + 1} pages" in sentence and "--max-pages" in sentence


@pytest.mark.parametrize("command", ["parse", "chunk"])
def test_a_raised_max_pages_reads_a_pdf_over_2000_pages(
    command: str, over_default: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--label", "pdf-page-v1"] if command == "chunk" else []
    assert main([command, str(over_default), *extra, "--max-pages", "3000"]) == 0
    out, err = capsys.readouterr()
    if command == "parse":
        doc = json.loads(out)  # blank pages give no block, one warning each, and are counted
        assert doc["metadata"]["page_count"] == DEFAULT_LIMITS.max_pages + 1
        assert len(doc["warnings"]) == DEFAULT_LIMITS.max_pages + 1
    assert "max-pages" not in err


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--max-pages", "0"),
        ("--max-pages", "-5"),
        ("--max-blocks", "0"),
        ("--max-nesting", "0"),
        ("--parse-timeout-s", "0"),
        ("--parse-timeout-s", "nan"),
    ],
)
@pytest.mark.parametrize("command", ["parse", "chunk"])
def test_a_limit_that_is_not_positive_is_one_sentence_and_exit_2(
    command: str, option: str, value: str, five_pages: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--label", "pdf-page-v1"] if command == "chunk" else []
    assert main([command, str(five_pages), *extra, option, value]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    shown = str(float(value)) if option == "--parse-timeout-s" else value
    assert _one_sentence(err) == f"kebab-chunk: {option} must be > 0, got {shown}."


def test_a_limit_that_is_not_a_number_is_one_sentence_and_exit_2(
    five_pages: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["parse", str(five_pages), "--max-pages", "many"])
    assert exited.value.code == 2
    assert "--max-pages" in _one_sentence(capsys.readouterr().err)
