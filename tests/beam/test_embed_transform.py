"""``EmbedTexts`` in a Beam job: every chunk gets its text's vector, each distinct text is
embedded once, on the in-memory runner and with two worker processes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from blake3 import blake3

from kebab_chunk.beam.embed import EmbedTexts
from kebab_chunk.sync import Embedder, callable_embedder
from tests.beam.runners import CONFIGS
from tests.sync.helpers import vector_of

LOG = "KEBAB_TEST_EMBED_LOG"


class _Logged:
    """A picklable factory of an embedder that appends each text it embeds to a file."""

    def __init__(self, log: Path) -> None:
        self.log = str(log)

    def __call__(self) -> Embedder:
        def embed(texts: Sequence[str]) -> list[list[float]]:
            with open(self.log, "a", encoding="utf-8") as f:
                f.writelines(json.dumps(t) + "\n" for t in texts)
            return [vector_of(t) for t in texts]

        return callable_embedder(embed, id="fake@1", dimensions=8)


@pytest.mark.parametrize("runner", ["in_memory", "multi_processing"])
def test_each_chunk_gets_its_vector_and_each_text_is_embedded_once(
    runner: str, tmp_path: Path
) -> None:
    texts = [f"text {i % 7}" for i in range(40)]  # 40 chunks, 7 distinct texts
    pairs = [(blake3(f"c{i}".encode()).hexdigest()[:32], t) for i, t in enumerate(texts)]
    log = tmp_path / "embedded.jsonl"
    out = tmp_path / "vectors"
    with beam.Pipeline(options=PipelineOptions(CONFIGS[runner])) as p:
        _ = (
            p
            | beam.Create(pairs)
            | EmbedTexts(_Logged(log), batch_size=3)
            | beam.Map(json.dumps)
            | beam.io.WriteToText(str(out))
        )
    got = {}
    for part in tmp_path.glob("vectors*"):
        for line in part.read_text().splitlines():
            chunk_id, vector = json.loads(line)
            got[chunk_id] = vector
    assert got.keys() == {c for c, _ in pairs}
    for chunk_id, text in pairs:
        assert got[chunk_id] == pytest.approx(vector_of(text))
    embedded = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(embedded) == sorted(set(texts))
