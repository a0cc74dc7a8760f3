"""`lspmux proxy`'s start (proxy.py, backends/adopt.py): the servers a workspace needs are
spawned as soon as the client's `initialize` is read, before the session and the backends are
loaded, and each backend takes over the process started for it — none is started twice, and a
process nobody takes is killed."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lspmux.backends.adopt import Prespawned
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message
from tests.e2e.daemon_harness import frame, read_message
from tests.e2e.test_limits import RawProxy
from tests.tools import require_tool

WORKSPACE = Path(__file__).resolve().parents[1] / "data" / "workspace"


async def test_the_workspace_servers_start_at_launch_and_their_backends_take_them_over(
    tmp_path: Path,
) -> None:
    require_tool("basedpyright-langserver")
    require_tool("ruff")
    folder = tmp_path / "ws"
    folder.mkdir()
    for name in ("app.py", "pyproject.toml"):
        shutil.copy(WORKSPACE / name, folder)
    app = folder / "app.py"
    proxy = await RawProxy.start(tmp_path, folder, "--log-level", "debug")
    stdout = proxy.proc.stdout
    assert stdout is not None
    try:
        params = {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}}
        reply = await proxy.request(1, "initialize", params)
        assert "capabilities" in reply["result"], reply
        proxy.send_bytes(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        item = {"uri": app.as_uri(), "languageId": "python", "version": 1, "text": app.read_text()}
        proxy.send_bytes(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": item},
                }
            )
        )
        at = {"textDocument": {"uri": app.as_uri()}, "position": {"line": 15, "character": 14}}
        answer: Any = None
        for msg_id in range(2, 200):  # asked again at each empty answer, as a user would
            proxy.send_bytes(
                frame(
                    {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": at}
                )
            )
            while True:
                msg = await read_message(stdout, 60)
                if "method" in msg and "id" in msg:  # the servers' requests: answered with null
                    proxy.send_bytes(frame({"jsonrpc": "2.0", "id": msg["id"], "result": None}))
                elif msg.get("id") == msg_id:
                    answer = msg.get("result")
                    break
            if answer:
                break
        assert answer and "Greeter" in str(answer), answer
    finally:
        await proxy.stop()
    log = proxy.log.read_text()
    for server in ("basedpyright", "ruff"):
        taken = re.findall(rf"{server}\[ws\]: took over pid (\d+), started at launch", log)
        assert len(taken) == 1, log
        assert f"{server}[ws]: started pid" not in log, log  # not spawned a second time


def _connection(on_message: Callable[[Message], object]) -> Connection:
    return Connection("cat", on_request=on_message, on_notification=on_message)


async def test_a_backend_takes_the_process_started_for_exactly_its_start(tmp_path: Path) -> None:
    """`cat` echoes what it is sent: the adopted process's pipes work both ways, its exit is
    reported; a start that differs in argv, folder or environment spawns its own process."""
    cat = shutil.which("cat")
    assert cat is not None
    early = subprocess.Popen(
        [cat], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path, start_new_session=True,
    )  # fmt: skip
    prespawned = Prespawned([([cat], tmp_path, {"A": "1"}, early)])
    loop = asyncio.get_running_loop()
    received: asyncio.Future[Message] = loop.create_future()
    exited: asyncio.Future[int | None] = loop.create_future()
    other = await prespawned.spawn(
        "other",
        [cat],
        cwd=tmp_path,
        env={"A": "2"},
        conn=_connection(print),
        on_exit=lambda c: None,
    )
    assert other.pid != early.pid and prespawned.waiting  # another environment: its own process
    other.kill()
    conn = _connection(received.set_result)
    proc = await prespawned.spawn(
        "cat", [cat], cwd=tmp_path, env={"A": "1"}, conn=conn, on_exit=exited.set_result
    )
    assert proc.pid == early.pid and not prespawned.waiting
    conn.notify("hello/there", {"n": 1})
    echoed = await asyncio.wait_for(received, 10)
    assert echoed["method"] == "hello/there" and echoed["params"] == {"n": 1}
    proc.close_stdin()
    assert await asyncio.wait_for(exited, 10) == 0


def test_a_process_nobody_takes_is_killed(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    early = subprocess.Popen(
        [sleep, "600"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    prespawned = Prespawned([([sleep, "600"], tmp_path, {}, early)])
    prespawned.discard()
    assert early.returncode is not None and not prespawned.waiting
