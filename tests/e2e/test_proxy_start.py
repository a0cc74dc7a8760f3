"""`lspmux proxy`'s start (proxy.py, backends/adopt.py): the servers a workspace needs are
spawned as soon as the client's `initialize` is read, before the session and the backends are
loaded, and each backend takes over the process started for it — none is started twice, and a
process nobody takes is killed."""

from __future__ import annotations

import asyncio
import fcntl
import io
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lspmux.backends.adopt import Prespawned
from lspmux.backends.initialize import FIRST_ID, initialize_params, launch_message
from lspmux.backends.process import ServerProcess
from lspmux.config.loader import load_config
from lspmux.proxy import run_proxy
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message
from lspmux.wire.stdio import PIPE_SIZE
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
        params = {
            "processId": None,
            "rootUri": folder.as_uri(),
            "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
            "initializationOptions": {},  # none, as the backend reads it
        }
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
        # the pipes of the servers started at launch hold `PIPE_SIZE`, as the proxy's own
        # stdin and stdout where they are pipes (this client's event loop gives it socket
        # pairs: tests/unit/wire/test_wire_stdio.py widens pipes)
        for fd in (0, 1):
            assert pipe_size(proxy.proc.pid, fd) in (None, PIPE_SIZE)
        pids = re.findall(r"took over pid (\d+)", proxy.log.read_text())
        assert len(pids) == 2
        for pid in map(int, pids):
            assert pipe_size(pid, 0) == pipe_size(pid, 1) == PIPE_SIZE, pid
    finally:
        await proxy.stop()
    log = proxy.log.read_text()
    # Each was sent its initialize at launch, the same as its backend's: not sent twice, and
    # the answer was taken.
    assert "another initialize" not in log and "unknown request" not in log, log
    for server in ("basedpyright", "ruff"):
        taken = re.findall(rf"{server}\[ws\]: took over pid (\d+), started at launch", log)
        assert len(taken) == 1, log
        assert f"{server}[ws]: started pid" not in log, log  # not spawned a second time


def pipe_size(pid: int, fd: int) -> int | None:
    """The capacity of the pipe that is process `pid`'s `fd`, through /proc; None for another
    kind of file."""
    if not stat.S_ISFIFO(os.stat(f"/proc/{pid}/fd/{fd}").st_mode):
        return None
    end = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return fcntl.fcntl(end, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(end)


def _cat(folder: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """`cat`, and a process of it started as `lspmux proxy` starts a server at launch."""
    cat = shutil.which("cat")
    assert cat is not None
    early = subprocess.Popen(
        [cat], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=folder, start_new_session=True,
    )  # fmt: skip
    return cat, early


def _connection(on_message: Callable[[Message], object]) -> Connection:
    return Connection("cat", on_request=on_message, on_notification=on_message)


async def _end(proc: ServerProcess) -> None:
    """Kill `proc` and see it exit, then close its connection, as its backend does on the exit:
    a test that only kills it ends before the exit is seen, and its subprocess transport, its
    stdin still open, is collected after the test's loop closed ("Event loop is closed",
    reported in whichever later test the collection happens)."""
    proc.kill()
    assert await proc.wait(10)
    proc.conn.close()


async def test_a_backend_takes_the_process_started_for_exactly_its_start(tmp_path: Path) -> None:
    """`cat` echoes what it is sent: the adopted process's pipes work both ways, its exit is
    reported; a start that differs in argv, folder or environment spawns its own process."""
    cat, early = _cat(tmp_path)
    prespawned = Prespawned([([cat], tmp_path, {"A": "1"}, early, None)])
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
    await _end(other)
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


def _sent_at_launch(popen: subprocess.Popen[bytes], params: dict[str, Any]) -> dict[str, Any]:
    message = launch_message(params)
    assert message is not None and popen.stdin is not None
    popen.stdin.write(message)
    popen.stdin.flush()
    return {"jsonrpc": "2.0", "id": FIRST_ID, "method": "initialize", "params": params}


async def test_a_process_sent_its_initialize_at_launch_is_not_sent_it_again(
    tmp_path: Path,
) -> None:
    """`cat` echoes what it is sent: the `initialize` written at launch comes back once (held
    until the backend's connection waits for its answer), the backend's own is not written
    again, and what follows passes as usual."""
    cat, early = _cat(tmp_path)
    params = initialize_params(tmp_path, {"textDocument": {}}, {"a": [1, 2]})
    sent = _sent_at_launch(early, params)
    prespawned = Prespawned([([cat], tmp_path, {}, early, sent)])
    got: asyncio.Queue[Message] = asyncio.Queue()
    conn = _connection(got.put_nowait)
    proc = await prespawned.spawn(
        "cat", [cat], cwd=tmp_path, env={}, conn=conn, on_exit=lambda c: None, initialize=params
    )
    assert proc.pid == early.pid
    conn.request("initialize", params, lambda _reply: None)  # as the backend's start does
    conn.notify("hello/there", {"n": 1})
    echoed = await asyncio.wait_for(got.get(), 10)
    assert echoed == sent  # the one written at launch
    after = await asyncio.wait_for(got.get(), 10)
    assert after["method"] == "hello/there"  # not a second initialize
    await _end(proc)


async def test_a_process_sent_another_initialize_at_launch_is_killed(tmp_path: Path) -> None:
    """A backend whose `initialize` differs from what the process waiting for it was sent
    does not take it: the process is killed, and the backend gets one of its own."""
    cat, early = _cat(tmp_path)
    sent = _sent_at_launch(early, initialize_params(tmp_path, {}, None))
    prespawned = Prespawned([([cat], tmp_path, {}, early, sent)])
    other = initialize_params(tmp_path, {}, {"changed": True})
    proc = await prespawned.spawn(
        "cat", [cat], cwd=tmp_path, env={}, conn=_connection(print), on_exit=lambda c: None,
        initialize=other,
    )  # fmt: skip
    assert proc.pid != early.pid and early.returncode is not None and not prespawned.waiting
    await _end(proc)


def test_a_process_nobody_takes_is_killed(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    early = subprocess.Popen(
        [sleep, "600"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    prespawned = Prespawned([([sleep, "600"], tmp_path, {}, early, None)])
    prespawned.discard()
    assert early.returncode is not None and not prespawned.waiting


async def test_a_process_started_at_launch_that_no_backend_asks_for_is_killed_after_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process `main` spawned that no backend takes (here: a workspace that needs no server)
    is killed `untaken_after` the `initialize` answer, while the proxy serves on — not kept
    idle until the client leaves."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user configuration
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="lspmux-rt-"))  # short
    folder = tmp_path / "empty"
    folder.mkdir()
    sleep = shutil.which("sleep")
    assert sleep is not None
    early = subprocess.Popen(
        [sleep, "600"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=folder, start_new_session=True,
    )  # fmt: skip
    loop = asyncio.get_running_loop()
    exited = loop.run_in_executor(None, early.wait)  # the event waited on: the process's exit
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(open(stdin_r, "rb")))  # noqa: SIM115
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(open(stdout_w, "wb")))  # noqa: SIM115
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": folder.as_uri(), "capabilities": {}},
    }
    proxy = asyncio.ensure_future(
        run_proxy(
            lambda root: load_config(root or folder, []),
            first=frame(initialize),
            early=[([sleep, "600"], folder, {}, early, None)],
            untaken_after=0.05,
        )
    )
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        open(stdout_r, "rb"),  # noqa: SIM115
    )
    try:
        answer = await read_message(reader, 30)
        assert "capabilities" in answer["result"], answer
        assert await asyncio.wait_for(exited, 30) == -9  # SIGKILL, the proxy still serving
        assert not proxy.done()
    finally:
        with open(stdin_w, "wb") as client:
            client.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            client.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(proxy, 30) == 0
        if early.poll() is None:
            early.kill()
