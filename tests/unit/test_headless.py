"""The headless client (`lspmux.headless.HeadlessClient`) over a real socket: it reads frames
with the one framer (a bad header is skipped, not a crash), keeps what was published, and its
requests are answered or fail when the peer leaves."""

from __future__ import annotations

import asyncio
import socket

import orjson
import pytest

from lspmux.headless import HeadlessClient, LspError, ReportError
from lspmux.wire.framing import FrameError, FrameParser, encode
from tests.polling import eventually


async def _pair() -> tuple[HeadlessClient, socket.socket]:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    theirs.setblocking(False)
    return HeadlessClient(reader=reader, writer=writer), theirs


async def _read_message(sock: socket.socket, parser: FrameParser) -> dict[str, object]:
    loop = asyncio.get_running_loop()
    while True:
        data = await asyncio.wait_for(loop.sock_recv(sock, 1 << 16), 5)
        assert data, "the client closed the connection"
        items = parser.feed(data)
        if items:
            assert not isinstance(items[0], FrameError)
            return orjson.loads(items[0])  # type: ignore[no-any-return]


async def test_a_bad_header_is_skipped_and_what_follows_is_read() -> None:
    client, theirs = await _pair()
    loop = asyncio.get_running_loop()
    publish = {
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": "file:///a.py", "diagnostics": [{"message": "m"}]},
    }
    # a length `int()` would take (and a plain reader would then misread everything after)
    await loop.sock_sendall(theirs, b"Content-Length: 1_0\r\n\r\n{}" + encode(publish))
    await eventually(lambda: "file:///a.py" in client.diagnostics, "the publish read")
    assert client.diagnostics["file:///a.py"] == [{"message": "m"}]
    assert not client.closed
    client._reader.cancel()
    theirs.close()


async def test_requests_are_answered_and_fail_when_the_peer_leaves() -> None:
    client, theirs = await _pair()
    loop = asyncio.get_running_loop()
    parser = FrameParser()
    asked = asyncio.ensure_future(client.request("hover", {"x": 1}, timeout=5))
    msg = await _read_message(theirs, parser)
    assert msg["method"] == "hover" and msg["params"] == {"x": 1}
    await loop.sock_sendall(theirs, encode({"jsonrpc": "2.0", "id": msg["id"], "result": 42}))
    assert await asyncio.wait_for(asked, 5) == 42

    refused = asyncio.ensure_future(client.request("bad", None, timeout=5))
    msg = await _read_message(theirs, parser)
    error = {"code": -32601, "message": "no such method"}
    await loop.sock_sendall(theirs, encode({"jsonrpc": "2.0", "id": msg["id"], "error": error}))
    with pytest.raises(LspError, match="no such method") as caught:
        await asyncio.wait_for(refused, 5)
    assert caught.value.code == -32601

    pending = asyncio.ensure_future(client.request("never", None, timeout=5))
    await _read_message(theirs, parser)
    theirs.close()
    with pytest.raises(ReportError, match="exited before answering"):
        await asyncio.wait_for(pending, 5)
    assert client.closed
