"""Every adapter refusal is one of the library's errors, in the group that says how to
handle it (kebab_chunk/errors.py): a wrong argument is a ConfigurationError, a record or row
that cannot be used is a DocumentError, and each is still the built-in type a caller of a
LangChain or LlamaIndex API would catch."""

from __future__ import annotations

import pytest

from kebab_chunk import MarkdownChunker
from kebab_chunk.errors import ConfigurationError, DocumentError, RecordError, WrongTypeError
from kebab_chunk.integrations._common import as_record, as_records, check_metadata_mode
from kebab_chunk.integrations._split import _utf8


def test_a_wrong_argument_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="metadata must be 'full'") as caught:
        check_metadata_mode("everything")
    assert isinstance(caught.value, ValueError)
    with pytest.raises(WrongTypeError) as wrong:
        list(as_records("one string"))
    assert isinstance(wrong.value, TypeError) and isinstance(wrong.value, ConfigurationError)
    with pytest.raises(WrongTypeError, match="text must be a str"):
        MarkdownChunker().chunk_document(b"# bytes")  # type: ignore[arg-type]


def test_a_record_that_cannot_be_used_is_a_document_error() -> None:
    (record,) = MarkdownChunker().chunk_records("# Title\n\nSome text.\n")
    row = record.model_dump(mode="json")
    del row["chunker_version"]  # a part file read on its own has no partition column
    with pytest.raises(RecordError, match="no chunker_version column") as caught:
        as_record(row)
    assert isinstance(caught.value, DocumentError) and isinstance(caught.value, ValueError)
    with pytest.raises(RecordError, match="unpaired surrogate"):
        _utf8("bad \ud800 text")
