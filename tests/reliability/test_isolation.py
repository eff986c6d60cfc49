"""Isolation of parser and chunker calls: time budget, memory guard, crash containment.

Each hostile call must become exactly one error row (source_uri, stage, error type,
message, content_hash) while every other document of the same run is processed normally.
The memory guard is proved twice: with a test double that asks for 4 GiB at once, and with
a real parser on a real hostile input (100,000 headings) under a small budget.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from kebab_chunk.beam import ChunkDocuments, ErrorRecord, ParseDocuments, RawDocument
from kebab_chunk.beam.parse import MEMORY_LIMIT, error_type_of, ran_out_of_memory
from kebab_chunk.chunkers import registry as chunker_registry
from kebab_chunk.chunkers.registry import get_chunker
from kebab_chunk.errors import ParseError
from kebab_chunk.model import ChunkPolicy
from kebab_chunk.model.ids import content_hash
from kebab_chunk.parsers.registry import ParserChoice, detect_media_type, parse_document
from kebab_chunk.runtime.helper import limit_memory
from tests.beam.helpers import QUIET, REPO, quiet_beam, records, subprocess_env
from tests.reliability.hostile import HOSTILE_LABEL, HOSTILE_ROW, greedy_parse

quiet_beam()
POLICY = ChunkPolicy()
MISTUNE = "md-mistune-v1"
GOOD = b"# Fine\n\nA normal document with one paragraph.\n"


def _raw(uri: str, raw: bytes) -> RawDocument:
    return RawDocument(uri, detect_media_type(uri, raw[:8]), content_hash(raw), raw)


def _key(e: ErrorRecord) -> tuple[object, ...]:
    return (e.source_uri, e.stage, e.error_type, e.content_hash, e.chunker_version)


def _headings(n: int) -> bytes:
    return "".join(f"# heading {i}\n" for i in range(n)).encode()


def test_memory_errors_are_recognised_through_wrapping_exceptions() -> None:
    try:
        try:
            raise MemoryError
        except MemoryError as inner:
            raise ParseError("x.pdf could not be read as a PDF") from inner
    except ParseError as wrapped:
        assert ran_out_of_memory(wrapped) and error_type_of(wrapped) == MEMORY_LIMIT
    assert error_type_of(ParseError("plain")) == "parse_error"
    assert error_type_of(ValueError("odd")) == "ValueError"


def test_limit_memory_caps_a_child_process() -> None:
    """The guard itself, in a throwaway interpreter: 4 GiB fails, 16 MiB still works."""
    code = (
        "from kebab_chunk.runtime.helper import limit_memory\n"
        "assert limit_memory(128)\n"
        "small = bytearray(16 * 1024 * 1024)\n"
        "try:\n"
        "    bytearray(4 * 1024 ** 3)\n"
        "except MemoryError:\n"
        "    print('refused')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True
    )
    assert done.stdout.strip() == "refused", done.stderr
    assert limit_memory(None) is False  # no guard asked for: nothing is changed


def test_a_parser_asking_for_too_much_memory_is_one_error_row() -> None:
    greedy = _raw("greedy.md", b"ALLOC everything")
    good = _raw("good.md", GOOD)
    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create([greedy, good])
            | ParseDocuments(timeout_s=60, parse_fn=greedy_parse, max_memory_mb=256)
        )
        assert_that(
            out["documents"], equal_to([parse_document(GOOD, "good.md")]), label="documents"
        )
        assert_that(
            out["errors"] | beam.Map(_key),
            equal_to([("greedy.md", "parse", MEMORY_LIMIT, greedy.content_hash, None)]),
            label="one memory_limit row",
        )


def test_a_real_parser_on_a_real_hostile_input_hits_the_memory_guard() -> None:
    """md-mistune-v1 needs a few hundred MB for 100,000 headings; 48 MB are not enough.

    Named explicitly: the default Markdown parser (md-pyromark-v1, a Rust extension) may
    instead abort its process when an allocation fails, which is a ``worker_crash`` row.
    """
    big = _raw("headings.md", _headings(100_000))
    good = _raw("good.md", GOOD)
    mistune = ParserChoice.from_versions([MISTUNE])
    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create([big, good])
            | ParseDocuments(timeout_s=120, max_memory_mb=48, parse_fn=mistune)
        )
        assert_that(
            out["documents"],
            equal_to([parse_document(GOOD, "good.md", parser_version=MISTUNE)]),
            label="documents",
        )
        assert_that(
            out["errors"] | beam.Map(_key),
            equal_to([("headings.md", "parse", MEMORY_LIMIT, big.content_hash, None)]),
            label="one memory_limit row",
        )


def test_chunkers_hang_crash_and_hoard_in_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(chunker_registry._BY_NAME, HOSTILE_LABEL, HOSTILE_ROW)
    docs = {
        name: parse_document(text.encode(), name)
        for name, text in [
            ("hang.md", "# T\n\nHANG here\n"),
            ("crash.md", "# T\n\nCRASH here\n"),
            ("greedy.md", "# T\n\nGREEDY here\n"),
            ("good.md", GOOD.decode()),
        ]
    }
    md = get_chunker("md-heading-v1")
    labels = ["md-heading-v1", HOSTILE_LABEL]
    with BeamTestPipeline() as p:
        out = (
            p
            | beam.Create(list(docs.values()))
            | ChunkDocuments(labels, POLICY, timeout_s=3, max_memory_mb=256)
        )
        # hang and crash lose the whole document (one error row); greedy only its label
        assert_that(
            out["chunks"],
            equal_to(records(md, docs["greedy.md"], POLICY) + records(md, docs["good.md"], POLICY)),
            label="chunks of the documents that survived",
        )
        assert_that(
            out["errors"] | beam.Map(_key),
            equal_to(
                [
                    ("hang.md", "chunk", "timeout", docs["hang.md"].content_hash, None),
                    ("crash.md", "chunk", "worker_crash", docs["crash.md"].content_hash, None),
                    (
                        "greedy.md",
                        "chunk",
                        MEMORY_LIMIT,
                        docs["greedy.md"].content_hash,
                        HOSTILE_LABEL,
                    ),
                ]
            ),
            label="one error row per hostile call",
        )
        assert_that(
            out["outcomes"] | beam.Map(lambda o: (o.source_uri, o.chunks_by_label)),
            equal_to(
                [
                    ("hang.md", ()),
                    ("crash.md", ()),
                    ("greedy.md", (("md-heading-v1", 1), (HOSTILE_LABEL, 0))),
                    ("good.md", (("md-heading-v1", 1), (HOSTILE_LABEL, 0))),
                ]
            ),
            label="one outcome per document",
        )


@pytest.mark.slow
def test_the_command_line_applies_the_guard_and_records_the_limits(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "headings.md").write_bytes(_headings(100_000))
    (corpus / "good.md").write_bytes(GOOD)
    output = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines.chunk_corpus",
            "--input",
            str(corpus),
            "--output",
            str(output),
            "--max-memory-mb=48",
            f"--parsers={MISTUNE}",  # see test_a_real_parser_on_a_real_hostile_input_...
            "--chunk-timeout-s=30",
            "--max-pages=10",
            "--max-blocks=500000",
            "--max-nesting=8",
            *QUIET,
        ],
        cwd=REPO,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["counts"]["errors_by_stage"] == {"parse": {MEMORY_LIMIT: 1}}
    assert manifest["accounting"]["documents_chunked"] == 1
    assert {k: manifest["options"][k] for k in ("max_memory_mb", "chunk_timeout_s")} == {
        "max_memory_mb": 48,
        "chunk_timeout_s": 30.0,
    }
    assert (manifest["options"]["max_pages"], manifest["options"]["max_blocks"]) == (10, 500000)
    assert manifest["options"]["max_nesting"] == 8
