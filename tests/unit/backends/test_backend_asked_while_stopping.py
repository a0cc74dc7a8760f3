"""A backend asked to run while it stops (its idle time ran out just before a request came, as
CI once caught: the request was answered "not running (stopping)") waits for the stop to end,
then starts a new server, never one beside the old; stopped for good (lspmux exiting), it
starts nothing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from lspmux.wire.messages import Message
from tests.polling import eventually
from tests.unit.backends.helpers import SERVER_LOOP, NullHost

#: A server that answers `initialize` and `shutdown`, and on `exit` writes its pid to argv[1]
#: and lingers 0.5 s before it exits: the stop's wait is long enough to ask in.
LINGERING = (
    SERVER_LOOP
    + """
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}})
    elif msg.get("method") == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif msg.get("method") == "exit":
        break
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()}\\n")
time.sleep(0.5)
"""
)


def _backend(tmp_path: Path) -> tuple[Backend, Path]:
    exited = tmp_path / "exited"
    argv = [sys.executable, "-c", LINGERING, str(exited)]
    config = ServerConfig(name="lingering", command=tuple(argv))
    return Backend(config, tmp_path, argv, host=NullHost()), exited


async def test_asked_while_it_stops_it_waits_then_starts_a_new_server(tmp_path: Path) -> None:
    backend, exited = _backend(tmp_path)
    assert await backend.ensure_running()
    first = backend._proc
    stopping = asyncio.create_task(backend.stop("idle"))
    await eventually(lambda: exited.exists(), "the server told to exit")
    assert backend.state == "stopping"  # still waiting for the process to end
    assert await asyncio.wait_for(backend.ensure_running(), 20) is True
    assert stopping.done()  # the stop ended first
    assert backend.state == "running" and backend._proc is not None
    assert backend._proc is not first and first is not None and first.returncode is not None
    replies: list[Message] = []
    backend.request("shutdown", None, replies.append)  # a request now reaches the new server
    await eventually(lambda: bool(replies), "the answer")
    assert "error" not in replies[0]
    await backend.stop()


async def test_stopped_for_good_it_starts_nothing(tmp_path: Path) -> None:
    backend, exited = _backend(tmp_path)
    assert await backend.ensure_running()
    stopping = asyncio.create_task(backend.stop("lspmux is exiting", final=True))
    await eventually(lambda: exited.exists(), "the server told to exit")
    assert await asyncio.wait_for(backend.ensure_running(), 20) is False
    await stopping
    assert await backend.ensure_running() is False
    assert backend._proc is None and len(exited.read_text().split()) == 1
