"""The helper's frame reader: frames read ahead from one socket come back whole, in order,
however the bytes arrive (several frames in one read, one frame over many reads, a frame
larger than the read-ahead buffer), and a stream cut short ends without a frame."""

from __future__ import annotations

import random
import socket
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from kebab_chunk.runtime.helper import FrameReader
from kebab_chunk.runtime.protocol import HEADER


def _send_in_pieces(sock: socket.socket, data: bytes, cuts: list[int]) -> None:
    start = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        sock.sendall(data[start:cut])
        start = max(start, cut)
    sock.sendall(data[start:])
    sock.close()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.binary(max_size=300), max_size=12),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=20),
    st.integers(min_value=1, max_value=64),
)
def test_frames_come_back_whole_and_in_order(
    payloads: list[bytes], cuts: list[int], chunk: int
) -> None:
    ours, theirs = socket.socketpair()
    stream = b"".join(HEADER.pack(len(p)) + p for p in payloads)
    sender = threading.Thread(target=_send_in_pieces, args=(theirs, stream, cuts))
    sender.start()
    reader = FrameReader(ours, chunk=chunk)
    got = []
    while (frame := reader.next_frame()) is not None:
        got.append(frame)
    sender.join()
    ours.close()
    assert got == payloads


def test_a_frame_cut_short_ends_the_stream() -> None:
    ours, theirs = socket.socketpair()
    whole = b"a" * 100
    theirs.sendall(HEADER.pack(len(whole)) + whole + HEADER.pack(50) + b"short")
    theirs.close()
    reader = FrameReader(ours, chunk=16)
    assert reader.next_frame() == whole
    assert reader.next_frame() is None
    ours.close()


def test_a_frame_larger_than_the_buffer_many_times_over() -> None:
    ours, theirs = socket.socketpair()
    big = random.Random(3).randbytes(3 * 1024 * 1024)
    sender = threading.Thread(
        target=_send_in_pieces, args=(theirs, HEADER.pack(len(big)) + big + HEADER.pack(0), [])
    )
    sender.start()
    reader = FrameReader(ours, chunk=4096)
    assert reader.next_frame() == big
    assert reader.next_frame() == b""
    assert reader.next_frame() is None
    sender.join()
    ours.close()
