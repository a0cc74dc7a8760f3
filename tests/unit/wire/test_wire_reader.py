"""The C reader (`_speedups.Reader`, `Connection.buffer_updated` with the speedups) does what
the Python's `Connection._buffer_updated` does, read for read.

Two connections, one read by the reader and one by the Python, get the same byte streams cut
into the same reads (through `get_buffer`, as a transport gives them): what they dispatch,
what their runs (`lane`) take, and what they write — message for message and write for write —
must be the same, for any stream (whole frames, partial ones, bad headers, large bodies read in
place, notifications, answers to pending requests). The cases the reader leaves to the Python
or writes otherwise are tested one by one: a read inside another's handling, a run that fails,
and the held writes the Python's `flush` writes (a large body, a closed transport, a peer over
`max_write_buffer`, a peer behind on `backpressure`), and a failure after a write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux import speedups
from lspmux.wire.connection import Connection
from lspmux.wire.framing import READ_SIZE, frame
from lspmux.wire.writes import BATCH
from tests.unit.wire.test_wire_connection import FakeTransport

pytestmark = pytest.mark.skipif(speedups.native is None, reason="the C speedups are not in use")


class Transport(FakeTransport):
    """The connection tests' transport, with each write recorded as it was made, and the
    queue it says it holds set by the test (`queued`)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.queued = 0

    def write(self, data: bytes) -> None:
        super().write(data)
        self.writes.append(bytes(data))

    def writelines(self, pieces: list[Any]) -> None:
        self.write(b"".join(bytes(p) for p in pieces))

    def get_write_buffer_size(self) -> int:
        return self.queued


class Side:
    """A connection that reads (by the reader or by the Python) and a second one its run and
    its handlers write to, with everything they did recorded."""

    def __init__(self, native: bool, **kwargs: Any) -> None:
        self.events: list[Any] = []
        self.out = Transport()
        self.other_out = Transport()
        self.conn = Connection(
            "reader",
            on_request=self._on_request,
            on_notification=lambda m: self.events.append(("note", m)),
            on_close=lambda exc: self.events.append(("closed", repr(exc))),
            **kwargs,
        )
        self.conn.connection_made(self.out)  # type: ignore[arg-type]
        self.other = Connection("other", on_request=print, on_notification=print)
        self.other.connection_made(self.other_out)  # type: ignore[arg-type]
        if not native:
            self.conn._reads = self.conn._buffer_updated
        assert (type(self.conn.buffer_updated) is speedups.native.Reader) is native  # type: ignore[union-attr]

    def _on_request(self, msg: dict[str, Any]) -> None:
        self.events.append(("request", msg))
        # an answer, and a message to the other connection: both held until the read ends
        self.conn.respond(msg["id"], "ok")
        self.other.notify("seen", msg["id"])

    def lane(self, items: list[Any], start: int) -> int:
        """A run: takes the messages marked `"lane"` from `start`, relays them to the other
        connection, and stops at the first other one."""
        at = start
        while at < len(items) and isinstance(items[at], bytes) and b'"lane"' in items[at]:
            self.events.append(("lane", bytes(items[at])))
            self.other.send_raw(items[at])
            at += 1
        return at

    def read(self, data: bytes, sizes: list[int]) -> None:
        """`data` as a transport reads it: into `get_buffer`, in reads of the given sizes."""
        at, k = 0, 0
        while at < len(data):
            buf = self.conn.get_buffer(-1)
            n = min(len(buf), len(data) - at, sizes[k % len(sizes)] if sizes else len(data))
            k += 1
            buf[:n] = data[at : at + n]
            at += n
            self.conn.buffer_updated(n)

    def record(self) -> tuple[Any, ...]:
        return self.events, self.out.writes, self.other_out.writes


MESSAGES = st.one_of(
    st.integers(0, 99).map(lambda i: {"jsonrpc": "2.0", "id": i, "method": "m", "params": {}}),
    st.integers(0, 99).map(lambda i: {"jsonrpc": "2.0", "method": "n", "params": [i]}),
    st.integers(0, 99).map(lambda i: {"jsonrpc": "2.0", "method": "lane", "id": i}),
    st.integers(0, 3).map(
        lambda k: {"jsonrpc": "2.0", "method": "n", "params": ["x" * 70_000 * k]}
    ),
)
PIECES = st.lists(
    st.one_of(
        MESSAGES.map(lambda m: frame(orjson.dumps(m))),
        st.just(b"Content-Type: x\r\n" + frame(b'{"jsonrpc":"2.0","method":"typed"}')),
        st.just(b"Content-Length: 3\r\n\r\n{{{"),
        st.just(b"Content-Lengthh: 2\r\n\r\n{}"),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(pieces=PIECES, sizes=st.lists(st.integers(1, 300_000), max_size=6), lane=st.booleans())
def test_the_reader_does_what_the_python_does(
    pieces: list[bytes], sizes: list[int], lane: bool
) -> None:
    data = b"".join(pieces)
    records = []
    for native in (True, False):
        side = Side(native)
        if lane:
            side.conn.lane = side.lane
        side.read(data, sizes)
        records.append(side.record())
    assert records[0] == records[1]


def test_one_write_per_connection_per_read() -> None:
    side = Side(True)
    side.conn.lane = side.lane
    reqs = [{"jsonrpc": "2.0", "id": i, "method": "m"} for i in range(3)]
    lanes = [{"jsonrpc": "2.0", "id": i, "method": "lane"} for i in range(3)]
    side.read(b"".join(frame(orjson.dumps(m)) for m in lanes + reqs), [])
    assert len(side.out.writes) == 1  # the three answers
    assert len(side.other_out.writes) == 1  # three relayed, three notifications
    assert side.other_out.writes[0].count(b"Content-Length") == 6
    assert BATCH.dirty is None


def test_a_read_inside_another_is_handled_in_that_read() -> None:
    side = Side(True)
    BATCH.dirty = []
    try:
        side.read(frame(b'{"jsonrpc":"2.0","id":1,"method":"m"}'), [])
        assert side.out.writes == []  # held: the outer read writes it
        held = BATCH.dirty
    finally:
        BATCH.dirty = None
    assert side.conn in held
    side.conn._flush()
    assert len(side.out.writes) == 1


def test_a_run_that_fails_is_turned_off_and_its_messages_dispatched(
    caplog: pytest.LogCaptureFixture,
) -> None:
    side = Side(True)

    def broken(items: list[Any], start: int) -> int:
        raise RuntimeError("broken run")

    side.conn.lane = broken
    side.read(frame(b'{"jsonrpc":"2.0","id":1,"method":"m"}'), [])
    assert side.conn.lane is None
    assert [e[0] for e in side.events] == ["request"]
    assert "the native lane failed" in caplog.text and "broken run" in caplog.text
    assert len(side.out.writes) == 1


def test_a_handler_that_raises_still_gets_the_writes_out(caplog: pytest.LogCaptureFixture) -> None:
    side = Side(True)

    def on_request(msg: dict[str, Any]) -> None:
        side.conn.respond(msg["id"], "first")
        raise ValueError("handler bug")

    side.conn.on_request = on_request
    side.read(frame(b'{"jsonrpc":"2.0","id":1,"method":"m"}'), [])
    assert "handler bug" in caplog.text
    assert len(side.out.writes) == 1 and b'"first"' in side.out.writes[0]
    assert BATCH.dirty is None


Setup = Callable[[Side], None]


def _large(side: Side) -> None:
    side.conn.on_request = lambda m: side.conn.respond(m["id"], "y" * 70_000)


def _closed(side: Side) -> None:
    side.out.closed = True


def _over_limit(side: Side) -> None:
    side.conn.max_write_buffer = 10
    side.out.queued = 11


def _behind(side: Side) -> None:
    side.conn.backpressure = 10
    side.out.queued = 11
    side.conn._reader = side.out  # type: ignore[assignment]


@pytest.mark.parametrize("setup", [_large, _closed, _over_limit, _behind])
def test_the_writes_the_python_writes_are_written_alike(setup: Setup) -> None:
    """Each case `flush_one` leaves to the Python (or, for a peer that falls behind, counts as
    `_check_queue` does): the same writes and the same state after two reads."""
    records = []
    for native in (True, False):
        side = Side(native)
        setup(side)
        body = b'{"jsonrpc":"2.0","id":1,"method":"m"}'
        side.read(frame(body) + frame(body.replace(b"1", b"2")), [len(frame(body))])
        congestion = side.conn._congestion
        records.append(
            (
                *side.record(),
                side.conn._held,
                side.out.closed,
                congestion is not None and congestion.written,
            )
        )
    assert records[0] == records[1]


def test_a_failure_after_the_write_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = Side(True)
    side.conn.backpressure = 10
    side.out.queued = 11

    def congest() -> None:
        raise RuntimeError("congest bug")

    monkeypatch.setattr(side.conn, "_congest", congest)
    with caplog.at_level(logging.ERROR):
        side.read(frame(b'{"jsonrpc":"2.0","id":1,"method":"m"}'), [])
    assert len(side.out.writes) == 1
    assert "reader: write failed" in caplog.text and "congest bug" in caplog.text
    assert side.conn._held == [] and side.conn._held_size == 0


def test_get_buffer_is_the_parsers_scratch_until_a_large_body_is_read_in_place() -> None:
    side = Side(True)
    first = side.conn.get_buffer(-1)
    assert len(first) == READ_SIZE and side.conn.get_buffer(-1) is first
    body = b'{"jsonrpc":"2.0","method":"n","params":["%s"]}' % (b"z" * 3 * READ_SIZE)
    stream = frame(body)
    side.read(stream[:READ_SIZE], [])
    big = side.conn.get_buffer(-1)
    assert big.obj is not first.obj  # the body's own buffer
    side.read(stream[READ_SIZE:], [])
    assert side.events == [("note", orjson.loads(body))]
    assert side.conn.get_buffer(-1) is first


def test_the_reader_takes_one_argument() -> None:
    side = Side(True)
    reads = side.conn.buffer_updated
    with pytest.raises(TypeError):
        reads()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        reads(1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        reads(nbytes=1)  # type: ignore[call-arg]
