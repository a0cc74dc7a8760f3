"""A server started at launch (`adopt`): what it wrote before its backend's connection waits
(the answer to the `initialize` sent at launch) is held, then passed on; its stdout is read in
place afterwards, as a spawned server's is. `cat` plays the server: it echoes what it is sent."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from lspmux.backends.adopt import _HeldStdout, _SentAtLaunch, adopt
from lspmux.wire.connection import Connection
from lspmux.wire.framing import encode
from lspmux.wire.messages import Message
from tests.polling import eventually


async def test_what_came_before_the_backend_waits_is_held_then_passed_and_read_in_place(
    tmp_path: Path,
) -> None:
    loop = asyncio.get_running_loop()
    requests: asyncio.Queue[Message] = asyncio.Queue()
    notes: asyncio.Queue[Message] = asyncio.Queue()
    conn = Connection("cat", on_request=requests.put_nowait, on_notification=notes.put_nowait)
    params: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
    sent: Message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    popen = subprocess.Popen(
        ["cat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        start_new_session=True,
    )
    assert popen.stdin is not None
    popen.stdin.write(encode(sent))  # at launch, before the event loop took the process
    popen.stdin.flush()
    exited: asyncio.Future[int | None] = loop.create_future()
    proc = await adopt("cat", popen, conn=conn, on_exit=exited.set_result, sent=sent)
    try:
        assert proc._stdout is not None
        out = proc._stdout.get_protocol()
        assert isinstance(out, _HeldStdout)
        await eventually(lambda: out.held, "cat's echo of the launch message, held", step=0.01)
        assert requests.empty()
        # The backend writes its initialize (not written again: it was sent at launch); its
        # connection waits for the answer now, and what was held is passed on.
        conn.request("initialize", params, lambda _m: None)
        echoed = await asyncio.wait_for(requests.get(), 10)
        assert echoed["method"] == "initialize" and echoed["params"] == params
        assert out.held is None
        assert not isinstance(conn._writer, _SentAtLaunch)  # written to as a spawned server
        conn.notify("ping", {"n": 1})  # written, echoed, read in place by the connection
        assert (await asyncio.wait_for(notes.get(), 10))["params"] == {"n": 1}
        assert isinstance(out, asyncio.BufferedProtocol)
        assert out.get_buffer(-1).obj is conn._parser.get_buffer(-1).obj
    finally:
        proc.kill()
        assert await proc.wait(10)


async def test_an_end_seen_while_held_comes_after_what_was_held(tmp_path: Path) -> None:
    """The server wrote a message and closed its stdout before its backend's connection
    waited: the message is still passed on first, then the end (the pending request fails,
    once)."""
    loop = asyncio.get_running_loop()
    requests: asyncio.Queue[Message] = asyncio.Queue()
    conn = Connection("gone", on_request=requests.put_nowait, on_notification=lambda _m: None)
    sent: Message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    early: Message = {"jsonrpc": "2.0", "id": 7, "method": "window/workDoneProgress/create"}
    write_and_exit = (
        f"import os, sys; sys.stdout.buffer.write({encode(early)!r}); sys.stdout.flush(); "
        "os.close(1); sys.stdin.read()"
    )
    popen = subprocess.Popen(
        [sys.executable, "-c", write_and_exit],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        start_new_session=True,
    )
    exited: asyncio.Future[int | None] = loop.create_future()
    proc = await adopt("gone", popen, conn=conn, on_exit=exited.set_result, sent=sent)
    try:
        assert proc._stdout is not None
        out = proc._stdout.get_protocol()
        assert isinstance(out, _HeldStdout)
        await eventually(lambda: out.lost is not None, "the end of stdout, held", step=0.01)
        assert bytes(out.held or b"") == encode(early) and requests.empty()
        answers: list[Message] = []
        conn.request("initialize", {}, answers.append)
        assert (await asyncio.wait_for(requests.get(), 10))["id"] == 7  # what was held, first
        await eventually(lambda: answers, "the pending initialize failed by the end")
        assert len(answers) == 1 and "error" in answers[0]
    finally:
        proc.kill()
        await asyncio.wait_for(exited, 10)
