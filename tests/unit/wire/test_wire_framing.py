"""FrameParser: bytes in any chunking → the same bodies; faults reported in-line, then recovery."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.wire.framing import (
    LARGE_BODY,
    MAX_HEADER,
    PLACE_AT_ONCE,
    FrameError,
    FrameParser,
    encode,
    frame,
)
from tests.profiles import examples


def feed_all(chunks: list[bytes]) -> list[bytes | FrameError]:
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    return out


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    chunks, prev = [], 0
    for p in points:
        chunks.append(data[prev:p])
        prev = p
    chunks.append(data[prev:])
    return chunks


bodies = st.lists(st.binary(min_size=0, max_size=200), min_size=1, max_size=8)


@given(bodies=bodies, cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=30))
def test_any_split_yields_the_same_bodies(bodies: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(frame(b) for b in bodies)
    assert feed_all(split_at(stream, cuts)) == bodies


@given(bodies=bodies)
def test_byte_by_byte(bodies: list[bytes]) -> None:
    stream = b"".join(frame(b) for b in bodies)
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    for i in range(len(stream)):
        out.extend(parser.feed(stream[i : i + 1]))
    assert out == bodies
    assert parser.buffered == 0


@pytest.mark.parametrize(
    "headers",
    [
        b"Content-Length: 2\r\n",
        b"content-length: 2\r\n",
        b"CONTENT-LENGTH:2\r\n",
        b"Content-Length:    2   \r\n",
        b"Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n",
        b"X-Unknown: whatever: with colons\r\nContent-Length: 2\r\nX-Other: 1\r\n",
    ],
    ids=["plain", "lower", "upper-nospace", "spaces", "type-after", "type-before", "unknown"],
)
def test_header_variants(headers: bytes) -> None:
    assert feed_all([headers + b"\r\n{}"]) == [b"{}"]


NEXT = frame(b'{"next":1}')


@pytest.mark.parametrize(
    ("bad", "detail"),
    [
        (b"Content-Type: x\r\n\r\n", "without Content-Length"),
        (b"Content-Length: -5\r\n\r\n", "negative Content-Length -5"),
        (b"Content-Length: abc\r\n\r\n", "not a number"),
        (b"Content-Length: 1.5\r\n\r\n", "not a number"),
        (b"Content-Length: \r\n\r\n", "not a number"),
        (b"garbage line\r\n\r\n", "malformed header line"),
    ],
)
def test_bad_header_is_reported_then_the_next_frame_is_read(bad: bytes, detail: str) -> None:
    out = feed_all([bad + NEXT])
    assert len(out) == 2
    assert isinstance(out[0], FrameError)
    assert detail in out[0].detail
    assert out[1] == b'{"next":1}'


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_recovery_is_independent_of_chunking(chunk: int) -> None:
    stream = b"Content-Length: x\r\n\r\n" + NEXT + b"X-Junk: 1\r\n\r\n" + NEXT
    chunks = [stream[i : i + chunk] for i in range(0, len(stream), chunk)]
    out = feed_all(chunks)
    assert [type(x) for x in out] == [FrameError, bytes, FrameError, bytes]


def test_zero_length_body() -> None:
    assert feed_all([b"Content-Length: 0\r\n\r\n" + NEXT]) == [b"", b'{"next":1}']


def test_header_block_that_never_ends() -> None:
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    junk = b"X" * 4096
    for _ in range(MAX_HEADER // len(junk) + 2):
        out.extend(parser.feed(junk))
    assert len(out) == 1 and isinstance(out[0], FrameError)
    assert str(MAX_HEADER) in out[0].detail
    assert parser.buffered < MAX_HEADER
    # the stream goes on: a fresh frame after the garbage is read (the header block that
    # carries the tail of the garbage is reported, the frame after it is whole).
    out = parser.feed(b"\r\n\r\n" + NEXT)
    assert out[-1] == b'{"next":1}'


def test_a_slow_header_is_not_garbage() -> None:
    parser = FrameParser()
    assert parser.feed(b"Content-Len") == []
    assert parser.feed(b"gth: 2\r\n") == []
    assert parser.feed(b"\r") == []
    assert parser.feed(b"\n{") == []
    assert parser.feed(b"}") == [b"{}"]


def test_huge_body_in_chunks() -> None:
    body = orjson.dumps({"items": [{"label": f"item{i}", "kind": 6} for i in range(100_000)]})
    assert len(body) > 2_500_000
    stream = frame(body) + NEXT
    step = 65_536
    out = feed_all([stream[i : i + step] for i in range(0, len(stream), step)])
    assert out == [body, b'{"next":1}']


def test_huge_body_in_one_chunk() -> None:
    body = b"x" * (8 * 1024 * 1024)
    assert feed_all([frame(body)]) == [body]


def test_encode_frames_orjson() -> None:
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"text": "héllo 😀"}}
    framed = encode(msg)
    (body,) = feed_all([framed])
    assert isinstance(body, bytes)
    assert orjson.loads(body) == msg
    head = framed[: framed.index(b"\r\n\r\n")]
    assert head == b"Content-Length: %d" % len(body)


def test_content_length_counts_bytes_not_characters() -> None:
    body = '{"t":"😀😀"}'.encode()
    assert len(body) != len(body.decode())
    assert feed_all([frame(body) + NEXT]) == [body, b'{"next":1}']


def test_frame_error_equality_and_repr() -> None:
    assert FrameError("a") == FrameError("a")
    assert FrameError("a") != FrameError("b")
    assert FrameError("a") != "a"
    assert repr(FrameError("a")) == "FrameError('a')"


@pytest.mark.parametrize(
    "bad",
    [
        b"Content-Type: x\r\n\r\n",
        b"Content-Length: abc\r\n\r\n",
        b"Content-Length: -1\r\n\r\n",
        b"X-Junk: 1\r\n\r\n",
    ],
)
def test_the_body_of_a_bad_frame_does_not_desynchronise_the_stream(bad: bytes) -> None:
    """A bad header usually comes with a body; it runs into the next header
    (`{...}Content-Length: 10`). Every frame after it must still be read."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"x"}'
    out = feed_all([bad + body + NEXT + NEXT + NEXT])
    assert [x for x in out if isinstance(x, bytes)] == [b'{"next":1}'] * 3
    assert all(isinstance(x, FrameError) for x in out[:-3])


garbage = st.binary(max_size=300).filter(lambda b: b"content-length:" not in b.lower())


@given(garbage=garbage, bodies=bodies, cuts=st.lists(st.integers(0, 3000), max_size=10))
def test_good_frames_after_garbage_are_all_read(
    garbage: bytes, bodies: list[bytes], cuts: list[int]
) -> None:
    stream = b"X-Bad: header\r\n\r\n" + garbage + b"".join(frame(b) for b in bodies)
    out = feed_all(split_at(stream, cuts))
    got = [x for x in out if isinstance(x, bytes)]
    assert got[-len(bodies) :] == bodies


# -- the maximum message size and lengths that are no lengths ---------------------------------


@pytest.mark.parametrize(
    "length",
    [
        b"1000000000000",  # 10^12
        b"9223372036854775808",  # 2^63
        b"65",  # over this parser's limit
    ],
)
@pytest.mark.parametrize("header", [b"Content-Length: %s\r\n\r\n", b"content-length:%s\r\n\r\n"])
def test_a_length_over_the_maximum_is_fatal_at_once(length: bytes, header: bytes) -> None:
    parser = FrameParser(max_size=64)
    out = parser.feed(header % length + b"x" * 100)
    assert len(out) == 1 and isinstance(out[0], FrameError) and out[0].fatal
    assert "maximum message size" in out[0].detail
    # nothing more is read or kept: the body cannot be skipped, the stream must be closed
    assert parser.feed(b"y" * 1_000_000 + NEXT) == []
    assert parser.buffered == 0


def test_a_message_of_exactly_the_maximum_size_is_read() -> None:
    parser = FrameParser(max_size=10)
    assert parser.feed(frame(b"0123456789") + NEXT) == [b"0123456789", b'{"next":1}']


def test_a_streamed_body_over_the_maximum_is_not_gathered() -> None:
    parser = FrameParser(max_size=1024 * 1024)
    out = parser.feed(b"Content-Length: 1000000000000\r\n\r\n")
    assert len(out) == 1 and isinstance(out[0], FrameError) and out[0].fatal
    for _ in range(64):  # 64 MiB streamed after it: none of it is held
        assert parser.feed(b"z" * (1024 * 1024)) == []
    assert parser.buffered == 0


def test_the_resynchronised_length_is_checked_too() -> None:
    parser = FrameParser(max_size=100)
    out = parser.feed(b'Content-Length: x\r\n\r\n{"id":1}Content-Length: 5000\r\n\r\n')
    faults = [x for x in out if isinstance(x, FrameError)]
    assert len(faults) == len(out) and [f.fatal for f in faults][-1] is True
    assert not any(f.fatal for f in faults[:-1])


@pytest.mark.parametrize(
    "junk",
    [b"+5", b"5_0", b"0x10", b"\xd9\xa3", b"1 2", b"--1", b"9" * 20, b"7" * 4301],  # no lengths
)
def test_junk_lengths_are_skipped_not_fatal(junk: bytes) -> None:
    out = feed_all([b"Content-Length: %s\r\n\r\n" % junk + NEXT])
    assert isinstance(out[0], FrameError) and not out[0].fatal
    assert out[-1] == b'{"next":1}'


def test_the_process_wide_maximum_applies_to_new_parsers() -> None:
    from lspmux.wire import framing

    before = framing.MAX_MESSAGE_SIZE
    assert before == framing.DEFAULT_MAX_MESSAGE_SIZE == 64 * 1024 * 1024
    try:
        framing.set_max_message_size(8)
        assert FrameParser().max_size == 8
        with pytest.raises(ValueError, match="positive"):
            framing.set_max_message_size(0)
    finally:
        framing.set_max_message_size(before)
    assert FrameParser().max_size == before


# -- reading in place (asyncio.BufferedProtocol) ------------------------------------------------


def read_in_place(stream: bytes, sizes: list[int]) -> list[bytes | FrameError]:
    """What a transport does with get_buffer/buffer_updated: each read fills at most what the
    buffer offers (and at most the next size asked for)."""
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    pos, i = 0, 0
    while pos < len(stream):
        buf = parser.get_buffer(-1)
        assert len(buf) > 0
        size = max(1, sizes[i % len(sizes)]) if sizes else 1 << 30
        if len(buf) > LARGE_BODY:  # inside a large body: reads as large as a pipe's
            size = max(size, 65_536)
        # Any split, but at most about a thousand reads per stream: megabytes read a byte at
        # a time test nothing a small body read so does not, at a million loop turns.
        size = max(size, len(stream) // 1000)
        n = min(len(buf), len(stream) - pos, size)
        buf[:n] = stream[pos : pos + n]
        pos += n
        i += 1
        out.extend(bytes(b) if isinstance(b, bytearray) else b for b in parser.buffer_updated(n))
    return out


big_bodies = st.lists(
    st.one_of(
        st.binary(max_size=200),
        st.integers(LARGE_BODY - 10, LARGE_BODY * 3).map(lambda n: b"x" * n),
    ),
    min_size=1,
    max_size=5,
)


@settings(deadline=None, max_examples=examples(60))
@given(bodies=big_bodies, sizes=st.lists(st.integers(1, 300_000), max_size=8))
def test_reading_in_place_yields_what_feeding_does(bodies: list[bytes], sizes: list[int]) -> None:
    stream = b"".join(frame(b) for b in bodies)
    assert read_in_place(stream, sizes) == bodies


def test_a_large_body_read_in_place_is_the_buffer_it_was_read_into() -> None:
    """Once half of a large body has come, the rest is read straight into its buffer: no copy
    per read and no join at the end; the body is the bytearray the kernel wrote."""
    body = b"y" * (PLACE_AT_ONCE + 1)
    stream = frame(body) + NEXT
    end = len(frame(body))
    parser = FrameParser()
    pos = 0
    while len(parser.get_buffer(-1)) < end - pos:  # scratch reads until half has come
        buf = parser.get_buffer(-1)
        n = min(len(buf), 65_536)
        buf[:n] = stream[pos : pos + n]
        pos += n
        assert parser.buffer_updated(n) == []
    assert pos >= len(body) // 2
    rest = parser.get_buffer(-1)
    assert len(rest) == end - pos  # exactly the rest of this body
    rest[:] = stream[pos:end]
    (got,) = parser.buffer_updated(len(rest))
    assert isinstance(got, bytearray) and got == body
    tail = parser.get_buffer(-1)
    tail[: len(NEXT)] = NEXT
    assert parser.buffer_updated(len(NEXT)) == [b'{"next":1}']


def test_a_body_up_to_place_at_once_is_read_in_place_from_its_first_read() -> None:
    """A 2.5 MB answer: after the read with its header, the rest goes straight into its
    buffer (its first half is not gathered and copied again)."""
    body = b"z" * (PLACE_AT_ONCE // 2)
    stream = frame(body) + NEXT
    end = len(frame(body))
    parser = FrameParser()
    first = parser.get_buffer(-1)
    first[:65_536] = stream[:65_536]
    assert parser.buffer_updated(65_536) == []
    rest = parser.get_buffer(-1)
    assert len(rest) == end - 65_536  # exactly the rest of this body
    rest[:] = stream[65_536:end]
    (got,) = parser.buffer_updated(len(rest))
    assert isinstance(got, bytearray) and got == body


def test_announcing_a_large_body_commits_no_memory_for_it() -> None:
    """Before: the whole announced size was allocated (and zeroed: committed) at the header,
    so 30 bytes made lspmux hold 64 MiB. Now a peer holds at most twice what it sent."""
    parser = FrameParser()
    header = b"Content-Length: %d\r\n\r\n" % (60 * 1024 * 1024)
    sent = header + b"x" * (1024 * 1024)
    for i in range(0, len(sent), 65_536):
        chunk = sent[i : i + 65_536]
        buf = parser.get_buffer(-1)
        buf[: len(chunk)] = chunk
        assert parser.buffer_updated(len(chunk)) == []
    assert len(parser.get_buffer(-1)) <= 2 * len(sent)  # a scratch buffer, no 60 MiB one
    assert parser.buffered <= len(sent)
