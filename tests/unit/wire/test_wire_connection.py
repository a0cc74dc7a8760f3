"""Connection over an in-memory transport: exactly one completion per request, dispatch, errors.

The transport is a test double with the four methods `Connection` uses (write, is_closing,
close, get_write_buffer_size), on a virtual clock (tests/unit/wire/conftest.py): a timeout's
timer fires at once, and a sleep shows what a timer did or did not do by then. The tests over
a real socket pair run in real time (`real_clock`) and wait for events.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from lspmux.errors import InvalidRequest, JsonRpcError, ParseError, RequestFailed
from lspmux.wire import backpressure
from lspmux.wire.connection import Connection
from lspmux.wire.framing import FrameParser, frame
from lspmux.wire.messages import Message
from tests.polling import eventually


class FakeTransport:
    """Records what the connection writes; can pretend the peer does not read."""

    def __init__(self, *, stalled: bool = False) -> None:
        self.written = bytearray()
        self.closed = False
        self.stalled = stalled
        self._parser = FrameParser()
        self.messages: list[Message] = []

    def write(self, data: bytes) -> None:
        self.written += data
        for body in self._parser.feed(data):
            assert isinstance(body, bytes)
            self.messages.append(orjson.loads(body))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = self.aborted = True

    aborted = False

    def get_write_buffer_size(self) -> int:
        return len(self.written) if self.stalled else 0


class Peer:
    """A Connection on a FakeTransport, with everything it dispatches recorded."""

    def __init__(self, **kwargs: Any) -> None:
        self.requests: list[Message] = []
        self.notifications: list[Message] = []
        self.closes: list[BaseException | None] = []
        self.transport = FakeTransport(stalled=kwargs.pop("stalled", False))
        self.conn = Connection(
            "peer-x",
            on_request=self.requests.append,
            on_notification=self.notifications.append,
            on_close=self.closes.append,
            **kwargs,
        )
        self.conn.connection_made(self.transport)  # type: ignore[arg-type]

    def receive(self, msg: Message | bytes) -> None:
        body = msg if isinstance(msg, bytes) else orjson.dumps(msg)
        self.conn.data_received(frame(body))

    @property
    def sent(self) -> list[Message]:
        return self.transport.messages


class Completions:
    def __init__(self) -> None:
        self.calls: list[Message] = []

    def __call__(self, msg: Message) -> None:
        self.calls.append(msg)


# -- requests: exactly one completion -------------------------------------------------------------


async def test_response_completes_the_request_once() -> None:
    p = Peer()
    done = Completions()
    msg_id = p.conn.request("textDocument/hover", {"x": 1}, done, timeout=5)
    assert p.sent == [
        {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": {"x": 1}}
    ]
    assert p.conn.pending_count == 1
    p.receive({"jsonrpc": "2.0", "id": msg_id, "result": {"contents": "hi"}})
    p.receive({"jsonrpc": "2.0", "id": msg_id, "result": "again"})  # a duplicate: ignored
    assert done.calls == [{"jsonrpc": "2.0", "id": msg_id, "result": {"contents": "hi"}}]
    assert p.conn.pending_count == 0
    await asyncio.sleep(0)


async def test_ids_are_distinct_and_responses_may_come_out_of_order() -> None:
    p = Peer()
    done = [Completions() for _ in range(3)]
    ids = [p.conn.request("m", None, d) for d in done]
    assert len(set(ids)) == 3
    for i in reversed(ids):
        p.receive({"jsonrpc": "2.0", "id": i, "result": i})
    assert [d.calls[0]["result"] for d in done] == ids


async def test_error_response_completes_the_request() -> None:
    p = Peer()
    done = Completions()
    msg_id = p.conn.request("m", None, done)
    err = {"code": -32601, "message": "nope"}
    p.receive({"jsonrpc": "2.0", "id": msg_id, "error": err})
    assert done.calls == [{"jsonrpc": "2.0", "id": msg_id, "error": err}]


async def test_timeout_completes_with_an_error_and_cancels_at_the_peer() -> None:
    p = Peer()
    done = Completions()
    msg_id = p.conn.request("textDocument/definition", {}, done, timeout=0.01)
    await asyncio.sleep(0.05)
    assert len(done.calls) == 1
    err = done.calls[0]["error"]
    assert err["code"] == RequestFailed.CODE
    assert "peer-x" in err["message"] and "textDocument/definition" in err["message"]
    assert {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}} in p.sent
    # the late answer finds nothing pending: still exactly one completion
    p.receive({"jsonrpc": "2.0", "id": msg_id, "result": None})
    assert len(done.calls) == 1
    assert p.conn.pending_count == 0


async def test_a_response_before_the_timeout_cancels_the_timer() -> None:
    p = Peer()
    done = Completions()
    msg_id = p.conn.request("m", None, done, timeout=0.02)
    p.receive({"jsonrpc": "2.0", "id": msg_id, "result": 1})
    await asyncio.sleep(0.05)
    assert len(done.calls) == 1 and done.calls[0]["result"] == 1
    assert not any(m.get("method") == "$/cancelRequest" for m in p.sent)


async def test_close_fails_every_pending_request_naming_the_peer() -> None:
    p = Peer()
    done = [Completions() for _ in range(3)]
    for i, d in enumerate(done):
        p.conn.request(f"method/{i}", None, d, timeout=0.05)
    p.conn.connection_lost(None)
    for i, d in enumerate(done):
        assert len(d.calls) == 1
        err = d.calls[0]["error"]
        assert err["code"] == RequestFailed.CODE
        assert "peer-x closed the connection" in err["message"]
        assert f"method/{i}" in err["message"]
    assert p.transport.closed
    assert p.closes == [None]
    await asyncio.sleep(0.08)  # the timers were cancelled: no second completion
    assert all(len(d.calls) == 1 for d in done)


async def test_eof_closes_and_close_is_idempotent() -> None:
    p = Peer()
    done = Completions()
    p.conn.request("m", None, done)
    assert p.conn.eof_received() is None
    p.conn.close(None)
    p.conn.connection_lost(None)
    assert p.conn.closed
    assert len(done.calls) == 1
    assert p.closes == [None]


async def test_request_on_a_closed_connection_completes_at_once() -> None:
    p = Peer()
    p.conn.close()
    done = Completions()
    p.conn.request("m", None, done, timeout=1)
    assert len(done.calls) == 1
    assert "not running" in done.calls[0]["error"]["message"]
    assert p.conn.pending_count == 0


async def test_fail_all_gives_the_reason() -> None:
    p = Peer()
    done = Completions()
    p.conn.request("workspace/symbol", None, done)
    p.conn.fail_all("peer-x crashed")
    assert done.calls[0]["error"]["message"] == "peer-x crashed before answering workspace/symbol"
    assert not p.conn.closed


async def test_cancel_sends_cancel_request_only_for_pending_ids() -> None:
    p = Peer()
    msg_id = p.conn.request("m", None, Completions())
    assert p.conn.cancel(msg_id)
    assert p.sent[-1] == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}
    assert not p.conn.cancel(msg_id + 100)


async def test_call_returns_the_result_or_raises() -> None:
    p = Peer()
    task = asyncio.ensure_future(p.conn.call("m", {"a": 1}, timeout=1))
    await asyncio.sleep(0)
    p.receive({"jsonrpc": "2.0", "id": p.sent[-1]["id"], "result": [1, 2]})
    assert await task == [1, 2]
    task = asyncio.ensure_future(p.conn.call("m"))
    await asyncio.sleep(0)
    p.receive(
        {"jsonrpc": "2.0", "id": p.sent[-1]["id"], "error": {"code": -32001, "message": "bad"}}
    )
    with pytest.raises(JsonRpcError) as info:
        await task
    assert info.value.CODE == -32001 and info.value.message == "bad"


# -- raw responses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":%d,"result":{"items":[1,2,3]}}',
        b'{"id":%d,"jsonrpc":"2.0","result":null}',
        b'{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":"m"}}',
    ],
)
async def test_raw_callback_gets_the_sniffed_body(body: bytes) -> None:
    p = Peer()
    done = Completions()
    raws: list[tuple[bytes, int]] = []
    msg_id = p.conn.request("m", None, done, timeout=0.02, raw=lambda b, o: raws.append((b, o)))
    full = body % msg_id
    p.receive(full)
    assert done.calls == []
    assert len(raws) == 1
    got, offset = raws[0]
    assert got == full
    assert got[offset:].startswith((b'"result"', b'"error"'))
    await asyncio.sleep(0.05)  # the timer was cancelled
    assert done.calls == [] and len(raws) == 1


async def test_a_large_answer_read_in_place_reaches_its_raw_handler_uncopied() -> None:
    """A 2.5 MB answer is read by the transport into its own buffer (`get_buffer`), and that
    buffer is what the raw handler gets: no copy of it on the way (a `bytes()` of it was one)."""
    p = Peer()
    done = Completions()
    raws: list[tuple[bytes, int]] = []
    msg_id = p.conn.request("m", None, done, raw=lambda b, o: raws.append((b, o)))
    body = b'{"jsonrpc":"2.0","id":%d,"result":"%s"}' % (msg_id, b"x" * 2_500_000)
    stream = frame(body)
    buffers = []
    at = 0
    while at < len(stream):  # reads of at most 64 KiB, as a pipe gives them
        buf = p.conn.get_buffer(-1)
        buffers.append(buf.obj)
        n = min(len(buf), 65_536, len(stream) - at)
        buf[:n] = stream[at : at + n]
        at += n
        p.conn.buffer_updated(n)
    assert done.calls == []
    ((got, offset),) = raws
    assert got == body and got[offset:].startswith(b'"result"')
    assert any(got is b for b in buffers)  # the very buffer the reads went into


async def test_raw_request_with_an_unsniffable_response_gets_the_dict() -> None:
    p = Peer()
    done = Completions()
    raws: list[tuple[bytes, int]] = []
    msg_id = p.conn.request("m", None, done, raw=lambda b, o: raws.append((b, o)))
    p.receive(b'{"result":42,"jsonrpc":"2.0","id":%d}' % msg_id)  # result first: no sniff
    assert raws == []
    assert done.calls == [{"result": 42, "jsonrpc": "2.0", "id": msg_id}]


# -- incoming requests and notifications -------------------------------------------------------------


async def test_requests_and_notifications_go_to_their_handlers() -> None:
    p = Peer()
    req = {"jsonrpc": "2.0", "id": 1, "method": "workspace/configuration", "params": {}}
    req_s = {"jsonrpc": "2.0", "id": "s1", "method": "window/showMessageRequest"}
    note = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3}}
    for m in (req, note, req_s):
        p.receive(m)
    assert p.requests == [req, req_s]
    assert p.notifications == [note]
    assert p.sent == []


async def test_many_messages_in_one_chunk_in_order() -> None:
    p = Peer()
    msgs = [{"jsonrpc": "2.0", "method": f"n/{i}"} for i in range(50)]
    p.conn.data_received(b"".join(frame(orjson.dumps(m)) for m in msgs))
    assert p.notifications == msgs


# -- bad input ---------------------------------------------------------------------------------------


async def test_bad_json_gets_a_parse_error_and_the_connection_lives_on() -> None:
    p = Peer()
    p.receive(b"{not json")
    assert len(p.sent) == 1
    assert p.sent[0]["id"] is None and p.sent[0]["error"]["code"] == ParseError.CODE
    p.receive({"jsonrpc": "2.0", "method": "still/alive"})
    assert p.notifications[-1]["method"] == "still/alive"
    assert not p.conn.closed


@pytest.mark.parametrize(
    ("body", "reply_id"),
    [
        (b"[1, 2]", None),
        # a method that is no string: the id can still be read, and its sender waits for it
        (b'{"jsonrpc":"2.0","id":"x","method":5}', "x"),
        # another protocol version is not served
        (b'{"jsonrpc":"1.0","id":9,"method":"initialize","params":{}}', 9),
        (b'{"jsonrpc":"2.0","method":"m","params":3}', None),
        (b'{"jsonrpc":"2.0"}', None),
        # a request with a readable id and method: its sender waits for that id
        (b'{"jsonrpc":"2.0","id":4,"method":"m","params":3}', 4),
    ],
)
async def test_invalid_messages_get_invalid_request_with_their_id(
    body: bytes, reply_id: Any
) -> None:
    p = Peer()
    p.receive(body)
    assert len(p.sent) == 1
    assert p.sent[0]["id"] == reply_id
    assert p.sent[0]["error"]["code"] == InvalidRequest.CODE
    assert p.requests == [] and p.notifications == []


@pytest.mark.parametrize(
    "body", [b'{"jsonrpc":"2.0","id":7}', b'{"jsonrpc":"2.0","id":1,"params":{}}']
)
async def test_an_invalid_response_is_dropped_not_answered(body: bytes) -> None:
    """Answering a response-shaped message would put an error under an id the peer uses for
    its own requests."""
    p = Peer()
    p.receive(body)
    assert p.sent == [] and p.requests == [] and p.notifications == []
    assert not p.conn.closed


async def test_no_error_replies_when_reply_errors_is_off() -> None:
    p = Peer(reply_errors=False)
    p.receive(b"{not json")
    p.receive(b'{"jsonrpc":"2.0","id":7}')
    assert p.sent == []
    assert not p.conn.closed


async def test_a_peer_error_with_id_null_is_not_echoed_back() -> None:
    """A peer that could not read one of our messages answers with an error and id null; that
    is logged, not sent back (two peers doing so would ping-pong forever)."""
    p = Peer()
    p.receive({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}})
    assert p.sent == []


async def test_a_response_to_an_unknown_request_is_ignored() -> None:
    p = Peer()
    p.receive({"jsonrpc": "2.0", "id": 999, "result": None})
    p.receive({"jsonrpc": "2.0", "id": "str", "result": None})
    assert p.sent == [] and p.requests == [] and p.notifications == []


async def test_a_bad_frame_is_skipped() -> None:
    p = Peer()
    p.conn.data_received(b"X-Junk: 1\r\n\r\n" + frame(b'{"jsonrpc":"2.0","method":"ok"}'))
    assert [n["method"] for n in p.notifications] == ["ok"]
    assert p.sent == []


# -- outgoing ----------------------------------------------------------------------------------------


async def test_max_write_buffer_disconnects_a_peer_that_does_not_read() -> None:
    p = Peer(stalled=True, max_write_buffer=1000)
    done = Completions()
    p.conn.request("m", None, done)
    p.conn.notify("big", {"blob": "x" * 2000})  # one message of any size fits under the bound
    assert not p.conn.closed
    before = len(p.transport.written)
    p.conn.notify("next", None)  # the queue is past the bound: the peer is dropped instead
    assert p.conn.closed
    assert p.transport.aborted  # aborted, not closed: a close would wait for the queue
    assert len(p.transport.written) == before
    assert len(done.calls) == 1
    assert "peer-x was disconnected (not reading: " in done.calls[0]["error"]["message"]
    assert p.closes == [None]
    p.conn.notify("after", None)  # dropped: the stream is closed
    assert len(p.transport.written) == before


async def test_a_reading_peer_is_not_disconnected() -> None:
    p = Peer(max_write_buffer=10)
    p.conn.notify("big", {"blob": "x" * 2000})
    assert not p.conn.closed


async def test_respond_and_respond_error() -> None:
    p = Peer()
    p.conn.respond(3, {"ok": True})
    p.conn.respond_error("s", RequestFailed("no"))
    assert p.sent == [
        {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": "s", "error": {"code": RequestFailed.CODE, "message": "no"}},
    ]


async def test_separate_writer_for_pipes() -> None:
    requests: list[Message] = []
    conn = Connection(
        "pipes", on_request=requests.append, on_notification=lambda m: None, duplex=False
    )
    reader, writer = FakeTransport(), FakeTransport()
    conn.connection_made(reader)  # type: ignore[arg-type]
    conn.notify("dropped")  # no writer yet
    conn.attach_writer(writer)  # type: ignore[arg-type]
    conn.notify("n")
    assert reader.written == b""
    assert writer.messages == [{"jsonrpc": "2.0", "method": "n"}]
    conn.close()
    assert reader.closed and writer.closed


async def test_a_handler_that_raises_answers_with_an_error_and_the_connection_lives_on() -> None:
    def boom(msg: Message) -> None:
        raise KeyError("textDocument")  # e.g. Session._did_open on a didOpen without params

    conn = Connection("peer-x", on_request=boom, on_notification=boom)
    transport = FakeTransport()
    conn.connection_made(transport)  # type: ignore[arg-type]
    conn.data_received(frame(b'{"jsonrpc":"2.0","method":"textDocument/didOpen"}'))
    conn.data_received(frame(b'{"jsonrpc":"2.0","id":4,"method":"textDocument/hover"}'))
    assert not conn.closed
    assert transport.messages[-1]["id"] == 4
    assert transport.messages[-1]["error"]["code"] == -32603


# -- limits on real sockets --------------------------------------------------------------------


async def _socket_pair(**kwargs: Any) -> tuple[Peer, asyncio.Transport, Any]:
    """A Connection on one end of a real socket pair; the other end is a raw socket the test
    reads from (or not)."""
    import socket

    ours, theirs = socket.socketpair()
    peer = Peer.__new__(Peer)
    peer.requests, peer.notifications, peer.closes = [], [], []
    loop = asyncio.get_running_loop()
    transport, conn = await loop.create_connection(
        lambda: Connection(
            "peer-x",
            on_request=peer.requests.append,
            on_notification=peer.notifications.append,
            on_close=peer.closes.append,
            **kwargs,
        ),
        sock=ours,
    )
    peer.conn = conn
    theirs.setblocking(False)
    return peer, transport, theirs


@pytest.mark.real_clock
async def test_a_peer_that_stops_reading_is_aborted_and_its_queue_released() -> None:
    limit = 4 * 1024 * 1024
    peer, transport, theirs = await _socket_pair(max_write_buffer=limit)
    blob = {"blob": "x" * (1024 * 1024)}
    sent = 0
    while not peer.conn.closed:
        peer.conn.notify("flood", blob)  # the other end never reads
        sent += 1
        assert sent < 200, "never disconnected"
        assert transport.get_write_buffer_size() <= limit + 2 * 1024 * 1024
    await eventually(lambda: peer.closes, "the connection's close", timeout=5)
    assert transport.is_closing()
    assert transport.get_write_buffer_size() == 0  # the queued megabytes are gone
    assert peer.closes == [None]
    # the other end sees the socket really closed (end of stream after what the kernel held)
    loop = asyncio.get_running_loop()
    got = 0
    while True:
        data = await asyncio.wait_for(loop.sock_recv(theirs, 1 << 20), 5)
        if not data:
            break
        got += len(data)
    assert got < sent * (1024 * 1024)
    theirs.close()


@pytest.mark.real_clock
@pytest.mark.parametrize("length", [b"1000000000000", b"9223372036854775808", b"70000"])
async def test_an_oversized_message_gets_an_error_and_the_connection_closes(length: bytes) -> None:
    peer, transport, theirs = await _socket_pair(max_message_size=65536)
    done = Completions()
    peer.conn.request("m", None, done)
    peer.conn.data_received(b"Content-Length: " + length + b"\r\n\r\n" + b"x" * 100_000)
    assert peer.conn.closed and transport.is_closing()
    assert len(done.calls) == 1 and "error" in done.calls[0]
    loop = asyncio.get_running_loop()
    received = b""
    while True:
        data = await asyncio.wait_for(loop.sock_recv(theirs, 1 << 16), 5)
        if not data:
            break
        received += data
    replies = [orjson.loads(b) for b in FrameParser().feed(received) if isinstance(b, bytes)]
    assert replies[-1]["id"] is None and replies[-1]["error"]["code"] == InvalidRequest.CODE
    assert (
        "maximum message size" in replies[-1]["error"]["message"]
        or "digits" in (replies[-1]["error"]["message"])
    )
    theirs.close()


async def test_a_length_of_thousands_of_digits_is_a_bad_frame_and_the_stream_goes_on() -> None:
    p = Peer()
    junk = b"Content-Length: " + b"7" * 4301 + b"\r\n\r\n"
    p.conn.data_received(junk + frame(b'{"jsonrpc":"2.0","method":"ok"}'))
    assert not p.conn.closed
    assert [n["method"] for n in p.notifications] == ["ok"]


@pytest.mark.real_clock
async def test_backpressure_stops_reading_a_peer_that_does_not_read_then_drops_it() -> None:
    peer, transport, theirs = await _socket_pair(backpressure=64 * 1024, stuck_after=0.5)
    loop = asyncio.get_running_loop()
    peer.conn.notify("big", {"blob": "x" * (4 * 1024 * 1024)})  # it does not read this
    await loop.sock_sendall(theirs, frame(b'{"jsonrpc":"2.0","id":1,"method":"more"}'))
    stuck_at = loop.time()
    assert not transport.is_reading()  # its requests wait while its answers pile up
    await eventually(lambda: peer.conn.closed, "the stuck peer dropped", timeout=5, step=0.01)
    assert loop.time() - stuck_at >= 0.5 - 0.05  # after `stuck_after`, not before
    assert peer.requests == []  # never read
    assert peer.closes == [None]
    assert transport.get_write_buffer_size() == 0
    theirs.close()


@pytest.mark.real_clock
@pytest.mark.parametrize("size", [8 * 1024, 4 * 1024 * 1024])  # write() and writelines()
async def test_a_transport_that_never_pauses_still_holds_back_a_peer_that_reads_late(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue is counted by the connection, not left to the transport's pause_writing
    (which CPython 3.12/3.13's writelines never calls): with a transport that never pauses,
    a peer behind on its answers is still not read from, and is read again once it drains."""
    peer, transport, theirs = await _socket_pair(backpressure=4 * 1024, stuck_after=5)
    monkeypatch.setattr(peer.conn, "pause_writing", lambda: None)  # the transport's word lost
    loop = asyncio.get_running_loop()
    sent = 0
    while not peer.conn.congested and sent * size < 32 * 1024 * 1024:  # past any socket buffer
        peer.conn.notify("big", {"blob": "x" * size})  # it does not read these yet
        sent += 1
    assert peer.conn.congested, f"{transport.get_write_buffer_size()} bytes queued, not behind"
    assert not transport.is_reading()  # behind: its requests wait
    await loop.sock_sendall(theirs, frame(b'{"jsonrpc":"2.0","id":1,"method":"more"}'))
    got = 0
    while got < sent * size:  # now it reads everything it was sent
        got += len(await asyncio.wait_for(loop.sock_recv(theirs, 1 << 20), 5))
    await eventually(lambda: peer.requests, "the request read once the peer drained")
    assert not peer.conn.congested and not peer.conn.closed
    theirs.close()


@pytest.mark.real_clock
async def test_a_peer_that_stopped_reading_is_reported_once_to_its_owner() -> None:
    """`on_congested`: the owner hears when the peer, behind on its queue, took none of it
    (the daemon then cancels the peer's work at the servers), once, not at every write."""
    behind: list[float] = []
    loop = asyncio.get_running_loop()
    peer, _transport, theirs = await _socket_pair(
        backpressure=64 * 1024, stuck_after=5, on_congested=lambda: behind.append(loop.time())
    )
    assert not peer.conn.congested and behind == []
    peer.conn.notify("big", {"blob": "x" * (4 * 1024 * 1024)})  # it does not read this
    fell_behind = loop.time()
    peer.conn.notify("more", {"blob": "x" * (1024 * 1024)})
    assert peer.conn.congested and behind == []  # not yet: a peer behind may be reading
    assert not peer.conn.not_reading
    await eventually(lambda: behind, "the owner told", timeout=5, step=0.005)
    assert peer.conn.not_reading
    assert behind[0] - fell_behind >= backpressure.QUIET - 0.005
    peer.conn.notify("more", {"blob": "x" * (1024 * 1024)})
    await asyncio.sleep(3 * backpressure.DRAIN_POLL)
    assert len(behind) == 1 and peer.conn.congested
    theirs.close()


@pytest.mark.real_clock
async def test_a_peer_behind_that_reads_is_not_reported_to_its_owner() -> None:
    """A client that asked for much at once reads its answers more slowly than lspmux writes
    them: it is behind, not stuck. Its requests wait while it is (backpressure), but its work
    at the servers is not cancelled."""
    behind: list[bool] = []
    peer, transport, theirs = await _socket_pair(
        backpressure=64 * 1024, stuck_after=5, on_congested=lambda: behind.append(True)
    )
    loop = asyncio.get_running_loop()
    sent = 0
    for _ in range(64):  # answers keep coming while it reads
        peer.conn.notify("answer", {"blob": "x" * (128 * 1024)})
        sent += 128 * 1024
    assert peer.conn.congested and not transport.is_reading()
    got = 0
    while got < sent:  # it reads, a little at a time, as a busy client does
        got += len(await asyncio.wait_for(loop.sock_recv(theirs, 16 * 1024), 5))
        if got % (1024 * 1024) < 16 * 1024 and got < sent // 2:
            peer.conn.notify("answer", {"blob": "x" * (128 * 1024)})
            sent += 128 * 1024
        await asyncio.sleep(0.0005)
    await eventually(lambda: not peer.conn.congested, "read again", timeout=5, step=0.005)
    assert behind == [] and transport.is_reading() and not peer.conn.closed
    theirs.close()


@pytest.mark.real_clock
async def test_backpressure_lets_a_peer_that_reads_go_on() -> None:
    peer, transport, theirs = await _socket_pair(backpressure=64 * 1024, stuck_after=5)
    loop = asyncio.get_running_loop()
    peer.conn.notify("big", {"blob": "x" * (4 * 1024 * 1024)})
    await loop.sock_sendall(theirs, frame(b'{"jsonrpc":"2.0","id":1,"method":"more"}'))
    got = 0
    while got < 4 * 1024 * 1024:  # it reads its answer: reading from it resumes
        got += len(await asyncio.wait_for(loop.sock_recv(theirs, 1 << 20), 5))
    await eventually(lambda: peer.requests, "its request read", timeout=5, step=0.01)
    assert [r["method"] for r in peer.requests] == ["more"]
    assert transport.is_reading() and not peer.conn.closed
    theirs.close()


@pytest.mark.real_clock
async def test_a_peer_owed_an_answer_is_not_read_until_it_is_sent() -> None:
    """Bytes being prepared for a peer (an answer fitted off the loop) count like bytes queued
    unread: over the backpressure, its next requests wait; they are read once it is paid."""
    peer, transport, theirs = await _socket_pair(backpressure=64 * 1024, stuck_after=5)
    loop = asyncio.get_running_loop()
    peer.conn.owe(1024 * 1024)
    await loop.sock_sendall(theirs, frame(b'{"jsonrpc":"2.0","id":1,"method":"more"}'))
    assert not transport.is_reading()  # so the request waits in the socket
    assert peer.requests == []
    peer.conn.owe(-1024 * 1024)
    assert transport.is_reading()
    await eventually(lambda: peer.requests, "its request read", timeout=5, step=0.01)
    assert [r["method"] for r in peer.requests] == ["more"]
    assert not peer.conn.closed  # owing is no fault of the peer's: no disconnection
    theirs.close()


# -- timeouts: one deadline sweep per connection ------------------------------------------------


async def test_a_shorter_timeout_after_a_longer_one_still_fires_on_time() -> None:
    p = Peer()
    slow, fast = Completions(), Completions()
    p.conn.request("slow/method", None, slow, timeout=60)
    p.conn.request("fast/method", None, fast, timeout=0.1)
    await asyncio.sleep(0.6)
    assert len(fast.calls) == 1 and "within 0.1s" in fast.calls[0]["error"]["message"]
    assert slow.calls == []  # still waiting
    assert p.conn.pending_count == 1
    assert any(m.get("method") == "$/cancelRequest" for m in p.sent)


async def test_answered_requests_leave_no_timer_behind() -> None:
    p = Peer()
    done = Completions()
    for i in range(3000):
        msg_id = p.conn.request("m", None, done, timeout=30)
        p.receive({"jsonrpc": "2.0", "id": msg_id, "result": i})
    assert len(done.calls) == 3000 and p.conn.pending_count == 0
    assert len(p.conn._deadlines) < 2048  # the heap is compacted, not one entry per request


# -- forward: the caller's own pending record (the session's fast lane) -------------------------


class Record:
    """A pending record of the caller's own, as the fast lane's FastExchange is."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.timeout: float | None = None
        self.deadline = 0.0
        self.messages: list[Message] = []
        self.raws: list[tuple[bytes, int]] = []

    def callback(self, msg: Message) -> None:
        self.messages.append(msg)

    def raw(self, body: bytes, offset: int) -> None:
        self.raws.append((body, offset))


async def test_forward_sends_the_records_method_and_gives_it_the_raw_answer() -> None:
    p = Peer()
    record = Record("textDocument/hover")
    msg_id = p.conn.forward(record, {"x": 1}, 5.0)
    assert p.sent == [
        {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": {"x": 1}}
    ]
    assert record.timeout == 5.0 and record.deadline > 0
    body = b'{"jsonrpc":"2.0","id":%d,"result":{"contents":"hi"}}' % msg_id
    p.receive(body)
    p.receive(body)  # a duplicate: ignored
    assert record.raws == [(body, body.index(b'"result"'))]
    assert record.messages == []
    assert p.conn.pending_count == 0


async def test_forward_times_out_once_with_an_error_naming_the_peer() -> None:
    p = Peer()
    record = Record("textDocument/hover")
    msg_id = p.conn.forward(record, None, 0.01)
    await eventually(lambda: record.messages, "the timeout", timeout=5, step=0.01)
    assert record.raws == []
    [msg] = record.messages
    assert msg["id"] == msg_id
    assert "peer-x did not answer textDocument/hover within 0.01s" in msg["error"]["message"]
    assert {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}} in p.sent


async def test_forward_on_a_closed_connection_or_unencodable_params_completes_at_once() -> None:
    p = Peer()
    bad = Record("m")
    p.conn.forward(bad, {"x": object()}, None)
    assert "params cannot be encoded" in bad.messages[0]["error"]["message"]
    p.conn.close()
    closed = Record("m")
    p.conn.forward(closed, None, None)
    assert [m["error"]["message"] for m in closed.messages] == ["peer-x is not running"]
    assert p.conn.pending_count == 0
