"""The wire's C speedups (`lspmux/_speedups.c`: `split_frames`, `sniff_response`,
`rewrite_response_id`) give exactly what the Python they stand for gives, on any bytes — or
decline, and the Python answers.

Each is compared with its Python on generated inputs: frames cut by the C and by the Python
loop of `FrameParser.feed` (any chunking, any header, bad, large and partial frames), response
heads against `_SNIFF` (white space of every kind, ids of any length, `"jsonrpc"` anywhere),
ids rewritten against orjson. `tests/e2e/test_speedups_sanitized.py` runs `same_as_python`
under AddressSanitizer. The same modules' tests run again with the speedups off
(`tests/unit/test_speedups.py`).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lspmux.wire import framing, messages
from lspmux.wire.framing import _SIMPLE_HEADER, FrameParser
from lspmux.wire.header import FrameError

# -- split_frames -----------------------------------------------------------------------------


def split_reference(data: bytes, start: int, max_size: int) -> tuple[list[bytes], int]:
    """What `split_frames` stands for, in Python: the plain frames from `start`, and where the
    first other one starts."""
    bodies: list[bytes] = []
    pos = start
    while True:
        m = _SIMPLE_HEADER.match(data, pos)
        if m is None:
            return bodies, pos
        length = int(m.group(1))
        if length > max_size or len(data) - m.end() < length:
            return bodies, pos
        bodies.append(data[m.end() : m.end() + length])
        pos = m.end() + length


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


#: Frames as servers write them and as they should not: plain, with other headers, with a
#: bad or huge length, cut short, or bytes that are no frame at all.
FRAME_PIECES = st.lists(
    st.one_of(
        st.binary(max_size=30).map(frame),
        st.binary(max_size=30).map(lambda b: b"Content-Type: x\r\n" + frame(b)),
        st.binary(max_size=30).map(lambda b: b"content-length: %d\r\n\r\n" % len(b) + b),
        st.sampled_from(
            [
                b"Content-Length: 99999999999999999999\r\n\r\n",
                b"Content-Length: 9999999999999999999\r\n\r\n",
                b"Content-Length: 500\r\n\r\n{",
                b"Content-Length: \r\n\r\n",
                b"Content-Length: 1x\r\n\r\n",
                b"Content-Length: 2\r\n\r",
                b"Content-Length: 2\r\n",
                b"Content-Length: ",
                b"Content-Length: 0\r\n\r\n",
                b"Content-Length:  3\r\n\r\nabc",
                b"Content-Length: +3\r\n\r\nabc",
                b"Content-Length: 003\r\n\r\nabc",
                b"\r\n\r\n",
                b"junk",
            ]
        ),
        st.binary(max_size=5),
    ),
    max_size=12,
).map(b"".join)


@settings(max_examples=400)
@given(FRAME_PIECES, st.integers(0, 40), st.sampled_from([1, 10, 64, 1 << 20]))
@example(frame(b"{}") * 3, 0, 1 << 20)
@example(b"Content-Length: 9999999999999999999\r\n\r\n", 0, (1 << 63) - 1)
def test_split_frames_is_the_python_loop(
    native: Any, data: bytes, start: int, max_size: int
) -> None:
    start = min(start, len(data))
    assert native.split_frames(data, start, max_size) == split_reference(data, start, max_size)
    assert native.split_frames(bytearray(data), start, max_size) == split_reference(
        data, start, max_size
    )
    assert native.split_frames(memoryview(data), start, max_size) == split_reference(
        data, start, max_size
    )


def parse(chunks: list[bytes], max_size: int, *, split: bool) -> list[Any]:
    """What a parser gives for `chunks` fed one by one, with or without the C splitting."""
    saved = framing._split_frames
    framing._split_frames = saved if split else None
    try:
        parser = FrameParser(max_size)
        out: list[Any] = []
        for chunk in chunks:
            out += parser.feed(chunk)
        cut = [(f.detail, f.fatal) if isinstance(f, FrameError) else bytes(f) for f in out]
        return [*cut, parser.buffered]
    finally:
        framing._split_frames = saved


@settings(max_examples=300)
@given(FRAME_PIECES, st.lists(st.integers(1, 60), max_size=6), st.sampled_from([8, 1 << 20]))
def test_a_parser_gives_the_same_with_and_without_the_c_splitting(
    native: Any, data: bytes, cuts: list[int], max_size: int
) -> None:
    chunks, at = [], 0
    for cut in cuts:
        chunks.append(data[at : at + cut])
        at += cut
    chunks.append(data[at:])
    assert parse(chunks, max_size, split=True) == parse(chunks, max_size, split=False)


def test_the_parser_cuts_plain_frames_in_c(native: Any) -> None:
    assert framing._split_frames is native.split_frames
    bodies = [orjson.dumps({"jsonrpc": "2.0", "id": n, "result": None}) for n in range(500)]
    assert FrameParser().feed(b"".join(map(frame, bodies))) == bodies


# -- sniff_response ---------------------------------------------------------------------------

#: Response heads and near misses: every token `_SNIFF` reads, every white space `\s` takes.
HEAD_PIECES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                b"{",
                b'"jsonrpc"',
                b'"2.0"',
                b'"2.1"',
                b'"id"',
                b'"result"',
                b'"error"',
                b'"method"',
                b":",
                b",",
                b" ",
                b"\t",
                b"\n",
                b"\r",
                b"\v",
                b"\f",
                b"0",
                b"7",
                b"123456789012345678",
                b"1234567890123456789012",
                b"-1",
                b"null",
                b'"x"',
                b"}",
            ]
        ),
        st.binary(max_size=2),
    ),
    max_size=16,
).map(b"".join)


def same_as_python(mod: Any, data: bytes) -> None:
    """The C's answers for `data` (as a response body, and as a stream of frames) are the
    Python's, or a decline where the Python then answers. Also run under AddressSanitizer."""
    assert mod.sniff_response(data) == messages._sniff_response(data)
    assert mod.sniff_response(bytearray(data)) == messages._sniff_response(data)
    for max_size in (3, 1 << 20):
        assert mod.split_frames(data, 0, max_size) == split_reference(data, 0, max_size)
    sniffed = messages._sniff_response(data)
    offset = sniffed[1] if sniffed is not None else len(data) // 2
    for new_id in (0, 7, -3, 2**63 - 1, "c1", "é", 'a"b', 2**64):
        out = mod.rewrite_response_id(data, offset, new_id)
        assert out is None or out == messages._rewrite_response_id(data, offset, new_id)


@settings(max_examples=500)
@given(HEAD_PIECES.map(lambda head: head + b'{"a":1}}'))
@example(b'{"jsonrpc":"2.0","id":12,"result":null}')
@example(b'{ "id" :\v7\f,\n"jsonrpc" : "2.0" ,\r"error"\t: {}}')
@example(b'{"id":00012345678901234567890,"result":1}')
@example(b'{"jsonrpc":"2.0","id":1,"jsonrpc":"2.0","result":1}')
@example(b'{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":1}')
@example(b'{"id":1,"result"')
@example(b'{"id":1,"result" ')
def test_sniff_response_is_the_regular_expression(native: Any, body: bytes) -> None:
    same_as_python(native, body)


def test_the_wire_uses_the_c_sniff(native: Any) -> None:
    assert messages.sniff_response is native.sniff_response


# -- rewrite_response_id ----------------------------------------------------------------------


@settings(max_examples=300)
@given(
    st.binary(max_size=40),
    st.one_of(st.integers(), st.text(max_size=12), st.booleans()),
)
def test_rewrite_response_id_is_orjsons(native: Any, rest: bytes, new_id: Any) -> None:
    body = b'{"jsonrpc":"2.0","id":1,' + rest
    out = native.rewrite_response_id(body, 24, new_id)
    if out is not None:
        assert out == messages._rewrite_response_id(body, 24, new_id)
        assert type(new_id) is int or type(new_id) is str
    elif type(new_id) is int and -(2**63) <= new_id < 2**63:
        pytest.fail(f"a 64-bit int id was declined: {new_id}")


@pytest.mark.parametrize("new_id", [0, 1, -1, 2**63 - 1, -(2**63), "lspmux-3", "", " ~"])
def test_the_ids_clients_use_are_rewritten_in_c(native: Any, new_id: int | str) -> None:
    body = b'{"id":5,"jsonrpc":"2.0","result":[1,2]}'
    assert native.sniff_response(body) == (5, 24)
    out = native.rewrite_response_id(body, 24, new_id)
    assert out == messages._rewrite_response_id(body, 24, new_id)
    assert orjson.loads(out) == {"jsonrpc": "2.0", "id": new_id, "result": [1, 2]}


def test_an_offset_out_of_range_is_an_error_not_a_read(native: Any) -> None:
    with pytest.raises(ValueError, match="offset"):
        native.rewrite_response_id(b"{}", 3, 1)
    with pytest.raises(ValueError, match="offset"):
        native.rewrite_response_id(b"{}", -1, 1)
