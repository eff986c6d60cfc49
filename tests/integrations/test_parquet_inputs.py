"""The pipeline's own output, read back with pandas or pyarrow, goes straight into every adapter.

Parquet spans carry every span kind's fields (null where unused), pandas gives numpy arrays
for list columns and a categorical ``chunker_version``; none of it may need converting by
hand before ``to_langchain_documents`` / ``to_llama_index_nodes`` / ``to_beam_rag_chunk``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from kebab_chunk.integrations._common import as_records
from kebab_chunk.integrations.beam_rag import chunk_from_beam_rag_chunk, to_beam_rag_chunk
from kebab_chunk.integrations.langchain import (
    chunk_from_langchain_document,
    to_langchain_document,
    to_langchain_documents,
)
from kebab_chunk.integrations.llamaindex import (
    chunk_from_llama_index_node,
    to_llama_index_node,
    to_llama_index_nodes,
)
from kebab_chunk.model import Chunk

pytestmark = pytest.mark.slow


def _beam_many(chunks: Any, **options: Any) -> list[Any]:
    return [to_beam_rag_chunk(record, **options) for record in as_records(chunks)]


#: convert many, convert one, back to the record
Adapter = tuple[Callable[..., list[Any]], Callable[..., Any], Callable[[Any], Chunk]]
ADAPTERS: dict[str, Adapter] = {
    "langchain": (to_langchain_documents, to_langchain_document, chunk_from_langchain_document),
    "llamaindex": (to_llama_index_nodes, to_llama_index_node, chunk_from_llama_index_node),
    "beam_rag": (_beam_many, to_beam_rag_chunk, chunk_from_beam_rag_chunk),
}


def _frame(pipeline_out: Path) -> pd.DataFrame:
    frame = pd.read_parquet(pipeline_out / "chunks")
    # What the user hit: numpy arrays in list cells, a categorical label column.
    assert isinstance(frame["chunker_version"].dtype, pd.CategoricalDtype)
    assert type(frame["source_spans"].iloc[0]).__module__ == "numpy"
    return frame.sort_values("chunk_id", ignore_index=True)


def test_parquet_rows_carry_null_span_fields(parquet_rows: list[dict[str, Any]]) -> None:
    spans = [span for row in parquet_rows for span in row["source_spans"]]
    assert any(s["kind"] == "lines" and s["page"] is None for s in spans)
    assert any(s["kind"] == "page" and s["line_start"] is None for s in spans)
    assert any(s["kind"] == "element" and s["line_start"] is None for s in spans)


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_pyarrow_rows_convert_to_the_exact_records(
    adapter: str, parquet_rows: list[dict[str, Any]], pipeline_records: list[Chunk]
) -> None:
    many, _one, back = ADAPTERS[adapter]
    converted = many(parquet_rows)
    assert [back(item) for item in converted] == pipeline_records


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_pandas_frame_converts_to_the_exact_records(
    adapter: str, pipeline_out: Path, pipeline_records: list[Chunk]
) -> None:
    many, one, back = ADAPTERS[adapter]
    frame = _frame(pipeline_out)
    assert [back(item) for item in many(frame)] == pipeline_records
    # ...and so do its rows, as dicts and as Series.
    assert [back(item) for item in many(frame.to_dict("records"))] == pipeline_records
    assert [back(one(row)) for _, row in frame.iterrows()] == pipeline_records


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_pyarrow_tables_batches_and_datasets_convert(
    adapter: str, pipeline_out: Path, pipeline_records: list[Chunk]
) -> None:
    many, _one, back = ADAPTERS[adapter]
    dataset = pads.dataset(pipeline_out / "chunks", format="parquet", partitioning="hive")
    table = dataset.to_table().sort_by("chunk_id")
    assert [back(item) for item in many(table)] == pipeline_records
    [batch] = table.combine_chunks().to_batches()
    assert [back(item) for item in many(batch)] == pipeline_records
    from_dataset = sorted((back(item) for item in many(dataset)), key=lambda c: c.chunk_id)
    assert from_dataset == pipeline_records


def test_langchain_documents_from_a_frame_equal_those_from_records(
    pipeline_out: Path, pipeline_records: list[Chunk]
) -> None:
    frame = _frame(pipeline_out)
    for mode in ("full", "flat"):
        assert to_langchain_documents(frame, metadata=mode) == to_langchain_documents(
            pipeline_records, metadata=mode
        )


def test_extra_columns_are_ignored(
    parquet_rows: list[dict[str, Any]], pipeline_records: list[Chunk]
) -> None:
    # A query result with a score or an index column still converts.
    rows = [{**row, "score": 0.5, "__index_level_0__": i} for i, row in enumerate(parquet_rows)]
    assert [chunk_from_langchain_document(d) for d in to_langchain_documents(rows)] == (
        pipeline_records
    )


def test_a_part_file_read_alone_has_no_label_and_says_how_to_read_it(pipeline_out: Path) -> None:
    part = next((pipeline_out / "chunks").glob("chunker_version=md-heading-v3/*.parquet"))
    rows = pq.read_table(part).to_pylist()
    assert "chunker_version" not in rows[0]
    for many, _one, _back in ADAPTERS.values():
        with pytest.raises(ValueError, match=r"no chunker_version column.*read the whole chunks"):
            many(rows)


def test_a_row_that_is_not_a_record_is_refused_in_one_sentence(
    parquet_rows: list[dict[str, Any]],
) -> None:
    row = {k: v for k, v in parquet_rows[0].items() if k != "text"}
    lacks = r"^a row is not a chunk record: it lacks the field\(s\) text; pass Chunk records"
    with pytest.raises(ValueError, match=lacks) as missing:
        to_langchain_document(row)
    assert "\n" not in str(missing.value)
    bad = {**parquet_rows[0], "position": -1}
    with pytest.raises(ValueError, match=r"^a row is not a chunk record: position: ") as invalid:
        to_llama_index_node(bad)
    assert "\n" not in str(invalid.value)


def test_one_record_where_several_are_expected_is_refused(
    pipeline_records: list[Chunk], parquet_rows: list[dict[str, Any]]
) -> None:
    for single in (pipeline_records[0], parquet_rows[0], "text"):
        with pytest.raises(TypeError, match="wrap a single record in a list"):
            to_langchain_documents(single)


def test_importing_the_adapters_imports_neither_pandas_nor_numpy() -> None:
    code = (
        "import sys\n"
        "import kebab_chunk.integrations.langchain, kebab_chunk.integrations.llamaindex\n"
        "print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
