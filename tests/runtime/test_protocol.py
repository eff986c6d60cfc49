"""What the worker and a helper send each other (kebab_chunk.runtime.protocol): a batch and a
reply come back as they were written, a result that cannot cross spoils nothing written
before it, and the progress record gives the last thing written (its note too), or
nothing before the first document."""

from __future__ import annotations

import os
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.runtime.protocol import (
    DONE,
    HEADER,
    RAISED_IN_TASK,
    REPLY,
    ProgressWriter,
    ReplyReader,
    ReplyWriter,
    decode_batch,
    decode_reply,
    encode_batch,
    progress_file,
    read_progress,
)
from tests.runtime.supervisor_tasks import Unreadable

_DOCUMENTS = st.lists(
    st.tuples(st.integers(min_value=0, max_value=2**62), st.binary(max_size=200)), max_size=20
)
_OUTCOMES = st.lists(
    st.tuples(
        st.sampled_from([DONE, RAISED_IN_TASK]),
        st.integers(min_value=0, max_value=5),
        st.binary(max_size=50),
        st.recursive(
            st.none() | st.integers() | st.text(max_size=20) | st.binary(max_size=50),
            lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=4),
            max_leaves=10,
        ),
    ),
    max_size=20,
)


@settings(max_examples=100, deadline=None)
@given(_DOCUMENTS)
def test_a_batch_comes_back_as_it_was_sent(documents: list[tuple[int, bytes]]) -> None:
    frame = encode_batch([seq for seq, _ in documents], [doc for _, doc in documents])
    (size,) = HEADER.unpack_from(frame)
    assert size == len(frame) - HEADER.size
    decoded = decode_batch(frame[HEADER.size :])
    assert [(seq, bytes(doc)) for seq, doc in decoded] == documents


@settings(max_examples=100, deadline=None)
@given(_OUTCOMES)
def test_a_reply_comes_back_as_it_was_written(outcomes: list[tuple[int, int, bytes, Any]]) -> None:
    reply = ReplyWriter()
    for outcome in outcomes:
        reply.add(*outcome)
    frame = bytes(reply.frame())
    (size,) = HEADER.unpack_from(frame)
    assert size == len(frame) - HEADER.size and frame[HEADER.size : HEADER.size + 1] == REPLY
    payload = frame[HEADER.size :]
    reader = ReplyReader(payload)
    decoded = [(o.status, o.stage, bytes(o.note), reader.load(o)) for o in decode_reply(payload)]
    assert decoded == outcomes


def test_a_body_that_cannot_be_pickled_leaves_the_reply_before_it_whole() -> None:
    reply = ReplyWriter()
    reply.add(DONE, 0, b"", ("first", "shared"))
    with pytest.raises(Exception, match="pickle"):
        reply.add(DONE, 1, b"note", ("shared", lambda: None))
    assert reply.broken and reply.count == 1
    payload = bytes(reply.frame())[HEADER.size :]
    (only,) = decode_reply(payload)
    assert ReplyReader(payload).load(only) == ("first", "shared")


def test_after_a_body_fails_to_load_the_reader_refuses_the_rest() -> None:
    reply = ReplyWriter()
    reply.add(DONE, 0, b"", Unreadable())
    reply.add(DONE, 0, b"", "fine")
    payload = bytes(reply.frame())[HEADER.size :]
    first, second = decode_reply(payload)
    reader = ReplyReader(payload)
    with pytest.raises(ValueError, match="cannot be rebuilt"):
        reader.load(first)
    assert reader.broken
    with pytest.raises(RuntimeError, match="could not be rebuilt"):
        reader.load(second)


def test_the_progress_record_holds_the_last_write_and_its_note() -> None:
    fd = progress_file()
    try:
        assert read_progress(fd, with_note=True) is None  # no document begun yet
        writer = ProgressWriter(fd)
        long_note = {"front_matter": "x" * 200_000}  # longer than the mapped part
        writer.write(7, 1, pickle.dumps(long_note))
        seen = read_progress(fd, with_note=True)
        assert seen is not None and (seen.seq, seen.stage, seen.note) == (7, 1, long_note)
        writer.write(8, 0)
        seen = read_progress(fd, with_note=True)
        assert seen is not None and (seen.seq, seen.stage, seen.note) == (8, 0, None)
        writer.write(8, 1, pickle.dumps("parsed 8"))
        seen = read_progress(fd, with_note=True)
        assert seen is not None and (seen.seq, seen.stage, seen.note) == (8, 1, "parsed 8")
        later = read_progress(fd, with_note=False)
        assert later is not None and later.note is None and later.started == seen.started
    finally:
        os.close(fd)
