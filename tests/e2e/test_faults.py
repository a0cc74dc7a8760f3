"""Faults: hanging, crashing and babbling servers (tests/servers/scripted.py, a server that
misbehaves on purpose), a real server killed with SIGKILL, cancellation, and a client sending
malformed frames."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Proxy, eventually, proxy_env, sources

SCRIPTED = Path(__file__).resolve().parent.parent / "servers" / "scripted.py"


def scripted_config(mode: str, log: Path, *, timeout: float = 30) -> str:
    return f"""
[servers.scripted]
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "{mode}"]
file_types = [".fault"]
root_markers = [".git"]
request_timeout = {timeout}
env = {{ SCRIPTED_LOG = {json.dumps(str(log))} }}
settings = {{ scripted = {{ answer = "42" }} }}
"""


async def open_scripted(
    proxy_factory: Any, tmp_path: Path, mode: str, *, timeout: float = 30, extra: str = ""
) -> tuple[Proxy, str, Path]:
    """A proxy whose only server for `.fault` files is the scripted one in `mode`, with
    a.fault open: (proxy, the document's uri, the log of what the server received)."""
    log = tmp_path / "scripted.jsonl"
    proxy = await proxy_factory(config=scripted_config(mode, log, timeout=timeout) + extra)
    (proxy.workspace / "a.fault").write_text("hello\n")
    return proxy, proxy.open("a.fault", "plaintext"), log


def received(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


async def hover(proxy: Proxy, uri: str, timeout: float = 30) -> Any:
    return await asyncio.wait_for(
        proxy.client.text_document_hover_async(
            t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(0, 0))
        ),
        timeout,
    )


async def test_hanging_server_times_out_with_an_error_and_a_cancel(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, log = await open_scripted(proxy_factory, tmp_path, "hang", timeout=1.5)
    started = time.monotonic()
    with pytest.raises(JsonRpcException) as info:
        await hover(proxy, uri)
    assert time.monotonic() - started < 20
    assert "scripted" in str(info.value) and "1.5s" in str(info.value)

    def hover_cancelled() -> bool:  # the cancel is written to the server right after the error
        hover_ids = [m["id"] for m in received(log) if m.get("method") == "textDocument/hover"]
        cancels = [m["params"]["id"] for m in received(log) if m.get("method") == "$/cancelRequest"]
        return bool(hover_ids) and hover_ids[0] in cancels

    await eventually(hover_cancelled, "a $/cancelRequest for the timed-out hover")


async def test_client_cancel_reaches_the_server_and_answers_at_once(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, log = await open_scripted(proxy_factory, tmp_path, "hang")
    params = t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(0, 0))
    future = proxy.client.protocol.send_request("textDocument/hover", params, msg_id="cancel-me")
    await eventually(
        lambda: any(m.get("method") == "textDocument/hover" for m in received(log)),
        "the hover reaching the server",
    )
    proxy.client.protocol.notify("$/cancelRequest", t.CancelParams(id="cancel-me"))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(asyncio.wrap_future(future), 5)
    assert "cancelled" in str(info.value)
    await eventually(
        lambda: any(m.get("method") == "$/cancelRequest" for m in received(log)),
        "the client's cancel reaching the server",
    )
    hover_id = next(m["id"] for m in received(log) if m.get("method") == "textDocument/hover")
    assert any(
        m.get("method") == "$/cancelRequest" and m["params"]["id"] == hover_id
        for m in received(log)
    )


async def test_server_to_client_requests_are_answered(proxy_factory: Any, tmp_path: Path) -> None:
    proxy, uri, _log = await open_scripted(proxy_factory, tmp_path, "ask")
    result = await hover(proxy, uri)
    # showMessageRequest went to the client (which picked the first action); the
    # configuration came from lspmux's settings for this server.
    assert result.contents.value == 'chose {"title": "yes"} configured ["42"]'
    assert any(m == t.WINDOW_SHOW_MESSAGE_REQUEST for m, _ in proxy.server_requests)


async def test_garbage_from_a_server_does_not_break_the_session(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, _log = await open_scripted(proxy_factory, tmp_path, "garbage")
    for _ in range(3):
        result = await hover(proxy, uri)
        assert result.contents.value == "scripted hover"


async def test_crashing_server_fails_fast_naming_the_server(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, log = await open_scripted(proxy_factory, tmp_path, "crash")
    started = time.monotonic()
    with pytest.raises(JsonRpcException) as info:
        await hover(proxy, uri)
    assert time.monotonic() - started < 10
    assert "scripted" in str(info.value)
    # It is restarted and given the open document again.
    opens = await eventually(
        lambda: [m for m in received(log) if m.get("method") == "textDocument/didOpen"][1:],
        "the document replayed to the restarted server",
    )
    assert opens[-1]["params"]["textDocument"]["text"] == "hello\n"
    # The user reads why, once, as a warning in the editor's log, in the server's own words.
    await eventually(
        lambda: [m for m in proxy.client.log_messages if "restarting" in m.message],
        "the restart in the editor's log",
    )
    restarts = [m for m in proxy.client.log_messages if "restarting" in m.message]
    assert len(restarts) == 1, [m.message for m in proxy.client.log_messages]
    assert restarts[0].type == t.MessageType.Warning
    assert restarts[0].message.startswith("lspmux: scripted exited with code 3")
    assert "its stderr ended with: scripted: crashing on purpose" in restarts[0].message


def _running(processes: list[psutil.Process], needle: str) -> list[psutil.Process]:
    """The processes whose command line holds `needle`. One that ended meanwhile does not
    count: psutil raises NoSuchProcess once it is reaped and ZombieProcess for the moment
    before (its command line is gone; reading it is a race every probe can lose)."""
    found = []
    for p in processes:
        try:
            if needle in " ".join(p.cmdline()):
                found.append(p)
        except psutil.Error:
            continue
    return found


def _server_pid(proxy: Proxy, needle: str) -> int:
    for p in _running(proxy.descendants(), needle):
        return p.pid
    raise AssertionError(f"no {needle} process under the proxy")


async def test_killed_server_restarts_with_the_edited_text(proxy: Proxy) -> None:
    uri = proxy.open("app.py", "python")
    await proxy.diagnostics_where(uri, lambda ds: "basedpyright" in sources(ds))
    # Edit before the kill: define the missing name.
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(17, 4), t.Position(17, 18)),
                text="renamed_before = 1",
            )
        ],
    )
    pid = _server_pid(proxy, "basedpyright")
    os.kill(pid, signal.SIGKILL)
    # Edit after the kill, while the server is down or restarting.
    proxy.change(
        uri,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(18, 0), t.Position(18, 0)),
                text="    after_kill = renamed_before\n",
            )
        ],
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            result = await asyncio.wait_for(
                proxy.client.text_document_hover_async(
                    t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(18, 6))
                ),
                30,
            )
        except JsonRpcException:
            result = None
        if result is not None and "after_kill" in result.contents.value:
            break
        assert time.monotonic() < deadline, f"no hover after restart: {result}"
        await asyncio.sleep(0.5)
    assert "Literal[1]" in result.contents.value  # renamed_before = 1, edited before the kill
    assert _server_pid(proxy, "basedpyright") != pid
    # Diagnostics follow the replayed text: the undefined name is gone.
    await proxy.diagnostics_where(
        uri,
        lambda ds: (
            "basedpyright" in sources(ds)
            and not any(str(d.code) == "reportUndefinedVariable" for d in ds)
        ),
    )


async def _raw_exchange(proc: asyncio.subprocess.Process, data: bytes, count: int) -> list[dict]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(data)
    await proc.stdin.drain()
    out = []
    for _ in range(count):
        header = await asyncio.wait_for(proc.stdout.readuntil(b"\r\n\r\n"), 20)
        length = int(header.split(b":")[1].split(b"\r\n")[0])
        out.append(json.loads(await proc.stdout.readexactly(length)))
    return out


async def _raw_proxy(workspace: Path, tmp_path: Path) -> asyncio.subprocess.Process:
    """`lspmux proxy` driven by raw bytes (for what a well-behaved LSP client cannot send)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "proxy",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=proxy_env(tmp_path),
        cwd=str(workspace),
    )


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_malformed_frames_get_errors_and_the_session_continues(
    workspace: Path, tmp_path: Path
) -> None:
    proc = await _raw_proxy(workspace, tmp_path)
    try:
        replies = await _raw_exchange(
            proc,
            _frame(b"{not json")
            + b"X-Junk: 1\r\n\r\n"  # a header block without Content-Length: skipped, logged
            + _frame(b'{"jsonrpc":"2.0","id":7}')
            + _frame(b"[1, 2]")
            + b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
            + _frame(
                b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
                b'{"processId":null,"capabilities":{}}}'
            ),
            3,
        )
        assert replies[0]["error"]["code"] == -32700 and replies[0]["id"] is None
        # {"id":7} has the shape of a response: logged and dropped, never answered under an
        # id of the client's own requests.
        assert replies[1]["error"]["code"] == -32600 and replies[1]["id"] is None
        assert replies[2]["id"] == 1 and "capabilities" in replies[2]["result"]
        replies = await _raw_exchange(
            proc,
            _frame(b'{"jsonrpc":"2.0","id":2,"method":"shutdown"}')
            + _frame(b'{"jsonrpc":"2.0","method":"exit"}'),
            1,
        )
        assert replies[0] == {"jsonrpc": "2.0", "id": 2, "result": None}
        assert await asyncio.wait_for(proc.wait(), 20) == 0
    finally:
        if proc.returncode is None:
            proc.kill()


async def test_requests_before_initialize_are_refused(workspace: Path, tmp_path: Path) -> None:
    proc = await _raw_proxy(workspace, tmp_path)
    try:
        replies = await _raw_exchange(
            proc,
            _frame(b'{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}'),
            1,
        )
        assert replies[0]["error"]["code"] == -32002
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        await asyncio.wait_for(proc.wait(), 20)


async def test_idle_server_stops_and_starts_again_on_demand(
    proxy_factory: Any, tmp_path: Path
) -> None:
    proxy, uri, log = await open_scripted(
        proxy_factory, tmp_path, "ask", extra="idle_timeout = 1\n"
    )
    assert "configured" in (await hover(proxy, uri)).contents.value
    first = _server_pid(proxy, "scripted.py")
    await eventually(  # unused for 1 s: shut down properly (shutdown, then exit)
        lambda: not _running(proxy.descendants(), "scripted.py"),
        "the idle server stopping",
    )
    methods = [m.get("method") for m in received(log)]
    assert "shutdown" in methods and "exit" in methods
    # Used again: started on demand, the open document replayed, the request answered.
    assert "configured" in (await hover(proxy, uri)).contents.value
    assert _server_pid(proxy, "scripted.py") != first
    opens = [m for m in received(log) if m.get("method") == "textDocument/didOpen"]
    assert len(opens) == 2


async def test_a_client_that_vanishes_leaves_no_server_behind(
    workspace: Path, tmp_path: Path
) -> None:
    proc = await _raw_proxy(workspace, tmp_path)
    text = (workspace / "hello.c").read_text()
    opened = {
        "jsonrpc": "2.0",
        "method": "textDocument/didOpen",
        "params": {
            "textDocument": {
                "uri": (workspace / "hello.c").as_uri(),
                "languageId": "c",
                "version": 1,
                "text": text,
            }
        },
    }
    await _raw_exchange(
        proc,
        _frame(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
            b'{"processId":null,"rootUri":"'
            + workspace.as_uri().encode()
            + b'","capabilities":{}}}'
        )
        + _frame(json.dumps(opened).encode()),
        1,
    )
    parent = psutil.Process(proc.pid)

    def children_with_clangd() -> list[psutil.Process] | None:
        children = parent.children(recursive=True)
        return children if _running(children, "clangd") else None

    children = await eventually(children_with_clangd, "clangd starting under the proxy")
    assert proc.stdin is not None
    proc.stdin.close()  # the editor crashed: no shutdown, no exit
    assert await asyncio.wait_for(proc.wait(), 30) != 0
    _gone, alive = psutil.wait_procs(children, timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


async def test_a_failing_server_contributes_nothing_and_the_others_answer(
    proxy_factory: Any, tmp_path: Path
) -> None:
    log = tmp_path / "scripted.jsonl"
    # A server that fails every definition request, beside basedpyright for .py files.
    config = scripted_config("fail", log).replace('file_types = [".fault"]', 'file_types = [".py"]')
    proxy = await proxy_factory(config=config)
    uri = proxy.open("app.py", "python")
    result = await proxy.client.text_document_definition_async(
        t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(line=15, character=16))
    )
    assert result  # basedpyright's answer; the failure contributed nothing
    first = result[0]
    target = first.target_range if hasattr(first, "target_range") else first.range
    assert target.start.line == 3
    asked = [m for m in received(log) if m.get("method") == "textDocument/definition"]
    assert len(asked) == 1  # the failing server really was asked, and failed
