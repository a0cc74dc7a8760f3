"""Sharing backends through the daemon: `lspmux server` with real `lspmux client` shims, raw
socket clients, and the real basedpyright and clangd behind them.

What is checked: clients on one workspace share exactly one backend process; their request ids
collide and each gets its own answers; each sees diagnostics for its own text; cancel and
disconnects stay per client; the daemon starts once from two shims; the Rust lspmux `lspMux`
handshake; the token on TCP; private socket and folder; status, reload and instance_timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Proxy
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    SCRIPTED,
    DaemonUnderTest,
    daemon_fixture,
    frame,
    free_port,
    read_message,
    received,
    scripted_server,
    tcp_listening,
    wait_until,
)

#: app.py positions and a piece of basedpyright's hover that only that position gives.
HOVERS: list[tuple[int, int, str]] = [
    (0, 7, "(module) os"),
    (3, 7, "class Greeter"),
    (6, 9, "__init__"),
    (9, 9, "(method) def greet("),
    (10, 9, "message: str"),
    (14, 5, "def main() -> None"),
    (15, 5, "greeter: Greeter"),
    (16, 5, "def print("),
]


def hover_text(result: Any) -> str:
    contents = (result or {}).get("contents") if isinstance(result, dict) else None
    if isinstance(contents, dict):
        return str(contents.get("value", ""))
    return json.dumps(contents)


async def hover_with_id(proxy: Proxy, uri: str, line: int, col: int, msg_id: int) -> str:
    params = t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line, col))
    result = await asyncio.wait_for(
        proxy.client.protocol.send_request_async("textDocument/hover", params, msg_id=msg_id), 60
    )
    value = result.contents.value if result is not None else ""
    return str(value)


def undefined_names(diags: list[t.Diagnostic]) -> set[str]:
    """basedpyright's (pushed) undefined names."""
    return {
        d.message.split('"')[1]
        for d in diags
        if str(d.code) == "reportUndefinedVariable" and '"' in d.message
    }


def ruff_undefined(diags: list[t.Diagnostic]) -> set[str]:
    """ruff's (pulled) undefined names."""
    return {d.message.split("`")[1] for d in diags if str(d.code) == "F821" and "`" in d.message}


# -- sharing -------------------------------------------------------------------------------------


async def test_clients_share_one_backend_and_ids_collide(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    clients = [await daemon.client(workspace) for _ in range(2)]
    uris = [c.open("app.py", "python") for c in clients]

    async def ask_all(group: list[Proxy], msg_id: int) -> None:
        # Every client uses the same request id at once, each at its own position.
        answers = await asyncio.gather(
            *(
                hover_with_id(c, uri, *HOVERS[i][:2], msg_id=msg_id)
                for i, (c, uri) in enumerate(zip(group, uris, strict=True))
            )
        )
        for i, answer in enumerate(answers):
            assert HOVERS[i][2] in answer, f"client {i} got {answer!r}; all: {answers}"
            for j, (_l, _c, other) in enumerate(HOVERS):
                if j != i:
                    assert other not in answer, f"client {i} got client {j}'s answer {answer!r}"

    await ask_all(clients, 1)
    assert len(daemon.backends("basedpyright")) == 1
    for _ in range(6):
        clients.append(await daemon.client(workspace))
        uris.append(clients[-1].open("app.py", "python"))
    await ask_all(clients, 2)
    assert len(daemon.backends("basedpyright")) == 1
    status = daemon.status()
    [instance] = [i for i in status["instances"] if i["server"] == "basedpyright"]
    assert len(instance["clients"]) == 8
    assert instance["open_documents"] == 1
    assert len(status["clients"]) == 8


async def test_each_client_sees_diagnostics_for_its_own_text(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    a = await daemon.client(workspace)
    b = await daemon.client(workspace)
    bystander = await daemon.client(workspace)  # on the same backend, without app.py open
    (workspace / "other.py").write_text("x: int = 1\n")
    bystander.open("other.py", "python")
    uri_a = a.open("app.py", "python")
    uri_b = b.open("app.py", "python")
    for c, uri in ((a, uri_a), (b, uri_b)):
        await c.diagnostics_where(
            uri,
            lambda ds: (
                undefined_names(ds) == {"undefined_name"}
                and ruff_undefined(ds) == {"undefined_name"}
            ),
        )
    # A renames the undefined name in its buffer; B keeps the file as it is.
    a.change(
        uri_a,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(17, 4), t.Position(17, 18)), text="only_in_a"
            )
        ],
    )
    await a.diagnostics_where(
        uri_a,
        lambda ds: undefined_names(ds) == {"only_in_a"} and ruff_undefined(ds) == {"only_in_a"},
    )
    # B saves: ruff is pulled for B, which must be about B's text, not the text A left.
    b.client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri_b)))
    await asyncio.sleep(1.0)  # B would have received A's diagnostics by now
    assert undefined_names(b.client.diagnostics[uri_b]) == {"undefined_name"}
    assert ruff_undefined(b.client.diagnostics[uri_b]) == {"undefined_name"}
    # Now B edits its own text: B sees its names, A keeps its own.
    b.change(
        uri_b,
        [
            t.TextDocumentContentChangePartial(
                range=t.Range(t.Position(17, 4), t.Position(17, 18)), text="only_in_b"
            )
        ],
    )
    await b.diagnostics_where(uri_b, lambda ds: undefined_names(ds) == {"only_in_b"})
    await asyncio.sleep(1.0)
    assert undefined_names(a.client.diagnostics[uri_a]) == {"only_in_a"}
    assert len(daemon.backends("basedpyright")) == 1
    assert uri_a not in bystander.client.diagnostics  # only to the clients holding it
    # A client arriving later uses what ruff registered dynamically before it came.
    late = await daemon.client(workspace)
    uri = late.open("app.py", "python", text="x  =  [1,2 ,3]\n")
    edits = await late.client.text_document_formatting_async(
        t.DocumentFormattingParams(t.TextDocumentIdentifier(uri), t.FormattingOptions(4, True))
    )
    assert edits and any("[1, 2, 3]" in e.new_text for e in edits)


async def test_cancel_and_a_killed_client_stay_with_their_client(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "scripted.jsonl"
    await daemon.start("--config", str(daemon.config(scripted_server("hang", log))))
    (workspace / "a.fault").write_text("hello\n")
    a = await daemon.client(workspace)
    b = await daemon.client(workspace)
    c = await daemon.client(workspace)
    uris = [p.open("a.fault", "plaintext") for p in (a, b, c)]
    params = [t.HoverParams(t.TextDocumentIdentifier(u), t.Position(0, 0)) for u in uris]

    def hover_ids() -> list[int]:
        return [m["id"] for m in received(log) if m.get("method") == "textDocument/hover"]

    # The same id from three clients; the server sees three different ids.
    fut_a = a.client.protocol.send_request("textDocument/hover", params[0], msg_id=7)
    await wait_until(lambda: len(hover_ids()) == 1, what="A's hover at the server")
    fut_b = b.client.protocol.send_request("textDocument/hover", params[1], msg_id=7)
    await wait_until(lambda: len(hover_ids()) == 2, what="B's hover at the server")
    fut_c = c.client.protocol.send_request("textDocument/hover", params[2], msg_id=7)
    await wait_until(lambda: len(hover_ids()) == 3, what="C's hover at the server")
    id_a, id_b, id_c = hover_ids()
    assert len({id_a, id_b, id_c}) == 3

    def cancelled() -> list[int]:
        return [m["params"]["id"] for m in received(log) if m.get("method") == "$/cancelRequest"]

    # A cancels: the cancel reaches the server with A's id only; A gets its error at once.
    a.client.protocol.notify("$/cancelRequest", t.CancelParams(id=7))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(asyncio.wrap_future(fut_a), 10)
    await wait_until(lambda: id_a in cancelled(), what="A's cancel at the server")
    assert cancelled() == [id_a]
    assert not fut_b.done()

    # B's shim is killed mid-request: the daemon cancels B's request, C is undisturbed.
    assert b.client._server is not None
    os.kill(b.client._server.pid, signal.SIGKILL)
    await wait_until(lambda: id_b in cancelled(), what="B's request cancelled after its death")
    assert id_c not in cancelled()
    assert not fut_c.done()
    (workspace / "b.c").write_text("int twice(int x) { return 2 * x; }\n")
    uri = c.open("b.c", "c")
    hover = await c.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(0, 5))
    )
    assert hover is not None and "twice" in hover.contents.value
    c.client.protocol.notify("$/cancelRequest", t.CancelParams(id=7))
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(asyncio.wrap_future(fut_c), 10)
    assert daemon.proc is not None and daemon.proc.poll() is None
    await wait_until(lambda: len(daemon.status()["clients"]) == 2, what="B gone from status")


# -- starting the daemon -----------------------------------------------------------------------


def daemons_for(daemon: DaemonUnderTest) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "lspmux server" in cmd and str(daemon.socket) in cmd:
            found.append(proc)
    return found


async def test_two_shims_autostart_exactly_one_daemon(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    assert not daemon.socket.exists()
    a, b = await asyncio.gather(daemon.client(workspace), daemon.client(workspace))
    assert len(daemons_for(daemon)) == 1
    assert stat.S_IMODE(daemon.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.socket.parent.stat().st_mode) == 0o700
    uris = [p.open("hello.c", "c") for p in (a, b)]
    for p, uri in zip((a, b), uris, strict=True):
        hover = await p.client.text_document_hover_async(
            t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
        )
        assert hover is not None and "int add(int a, int b)" in hover.contents.value
    assert len(daemon.backends("clangd")) == 1
    # A daemon started by hand for the same socket refuses, and leaves the socket alone.
    out = daemon.run_cli("server", "--listen", daemon.address)
    assert out.returncode != 0 and "already" in out.stderr
    assert daemon.socket.exists()
    assert len(daemons_for(daemon)) == 1


async def test_the_daemon_refuses_a_folder_others_can_open(daemon: DaemonUnderTest) -> None:
    folder = daemon.socket.parent
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    out = daemon.run_cli("server", "--listen", daemon.address)
    assert out.returncode != 0
    assert "0777" in out.stderr and "chmod 700" in out.stderr
    assert not daemon.socket.exists()
    out = daemon.run_cli("status", "--connect", daemon.address)
    assert out.returncode != 0


# -- the Rust lspmux protocol -------------------------------------------------------------------


async def test_lspmux_handshake_from_a_raw_socket(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "scripted.jsonl"
    await daemon.start("--config", str(daemon.config(scripted_server("ask", log))))
    raw = await daemon.raw_client()
    reply = await raw.request(
        1,
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": {
                "lspMux": {
                    "version": "1",
                    "method": "connect",
                    "server": "clangd",
                    "args": [],
                    "cwd": str(workspace),
                }
            },
        },
    )
    assert "capabilities" in reply["result"], reply
    assert reply["result"]["capabilities"].get("hoverProvider")
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = (workspace / "hello.c").as_uri()
    raw.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "c",
                    "version": 1,
                    "text": (workspace / "hello.c").read_text(),
                }
            },
        }
    )
    hover = await raw.request(
        2,
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 5}},
    )
    assert "int add(int a, int b)" in json.dumps(hover["result"])
    diags = await raw.wait_notification(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"]["diagnostics"]
        )
    )
    assert any("totl" in d["message"] for d in diags["params"]["diagnostics"])
    assert len(daemon.backends("clangd")) == 1

    # Exactly the named server, for every file: the scripted one (allowed: it is configured)
    # serves a .c file too, and never sees the lspMux key.
    other = await daemon.raw_client()
    reply = await other.request(
        1,
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": {
                "keep": True,
                "lspMux": {
                    "version": "1",
                    "method": "connect",
                    "server": sys.executable,
                    "args": [str(SCRIPTED), "ask"],
                    "env": {"SCRIPTED_LOG": str(log)},
                    "cwd": str(workspace),
                },
            },
        },
    )
    assert "capabilities" in reply["result"], reply
    other.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    other.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": "x"}},
        }
    )
    hover = await other.request(
        2,
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    assert "chose" in json.dumps(hover["result"])  # the scripted server answered
    seen = received(log)
    assert seen and seen[0]["method"] == "initialize"
    assert "lspMux" not in log.read_text()
    assert "lspMux" not in daemon.log.read_text()

    # An executable the (untrusted) workspace ships is refused, saying what to do.
    shipped = workspace / "bin" / "server"
    shipped.parent.mkdir()
    shipped.write_text("#!/bin/sh\n")
    shipped.chmod(0o755)
    refused = await daemon.raw_client()
    reply = await refused.request(
        1,
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": {
                "lspMux": {"version": "1", "method": "connect", "server": str(shipped)}
            },
        },
    )
    assert f"lspmux trust {workspace}" in reply["error"]["message"]
    with pytest.raises(EOFError):
        await read_message(refused.reader, 10)


async def test_rust_compatible_command_line(daemon: DaemonUnderTest, workspace: Path) -> None:
    await daemon.start()
    # `lspmux --server-path clangd` (no subcommand) and `LSPMUX_SERVER=clangd lspmux client`.
    bare = await daemon.client(workspace, "--server-path", "clangd", command=())
    env = {**daemon.env, "LSPMUX_SERVER": "clangd"}
    shim = await daemon.client(workspace, env=env)
    (workspace / "notes.txt").write_text("not C at all\n")
    for p in (bare, shim):
        uri = p.open("hello.c", "c")
        hover = await p.client.text_document_hover_async(
            t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
        )
        assert hover is not None and "int add(int a, int b)" in hover.contents.value
    status = daemon.status()
    assert sorted(c["server"] for c in status["clients"]) == ["clangd", "clangd"]
    assert len(daemon.backends("clangd")) == 1
    # `lspmux status` exits 0 while the daemon answers; the table names the instance.
    out = daemon.run_cli("status", "--connect", daemon.address)
    assert out.returncode == 0 and "clangd" in out.stdout and "CLIENTS" in out.stdout


# -- TCP ----------------------------------------------------------------------------------------


async def test_tcp_needs_the_token(daemon: DaemonUnderTest, workspace: Path) -> None:
    """With a token file, the token admits anyone; the daemon's own user needs none (Linux:
    test_tcp_owner.py). Refusals are checked here from another user (nobody)."""
    port = free_port()
    address = f"tcp:127.0.0.1:{port}"
    # Refused: a non-loopback host.
    out = daemon.run_cli("server", "--listen", f"tcp:0.0.0.0:{port}")
    assert out.returncode != 0 and "loopback" in out.stderr

    token_file = daemon.tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    token_file.chmod(0o600)
    await daemon.start(
        "--listen",
        address,
        "--token-file",
        str(token_file),
        wait_for=Path(f"{daemon.runtime}/lspmux/tcp-127.0.0.1-{port}.pid"),
    )
    await wait_until(lambda: tcp_listening(port), what="the TCP listener")

    async def first_message(msg: dict[str, Any]) -> dict[str, Any]:
        """`msg` sent by another user (nobody), and the daemon's answer."""
        script = (
            "import socket, sys\n"
            "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10)\n"
            "s.sendall(sys.stdin.buffer.read())\n"
            "data = b''\n"
            "while chunk := s.recv(65536):\n"
            "    data += chunk\n"
            "sys.stdout.buffer.write(data.partition(b'\\r\\n\\r\\n')[2])\n"
        )
        other = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        # the system's Python: `nobody` cannot run a pyenv one that lives under root's home
        python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        out = subprocess.run(
            [*other, python, "-c", script, str(port)],
            input=frame(msg),
            capture_output=True,
            timeout=30,
            cwd="/",
        )
        assert out.returncode == 0, out.stderr
        return dict(json.loads(out.stdout))

    refused = await first_message({"jsonrpc": "2.0", "id": 1, "method": "lspmux/status"})
    assert "token" in refused["error"]["message"]
    wrong = await first_message(
        {"jsonrpc": "2.0", "id": 1, "method": "lspmux/status", "params": {"token": "nope"}}
    )
    assert "error" in wrong
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"capabilities": {}, "rootUri": workspace.as_uri()},
    }
    assert "error" in await first_message(init)
    ok = await first_message(
        {"jsonrpc": "2.0", "id": 1, "method": "lspmux/status", "params": {"token": "s3cret-token"}}
    )
    assert ok["result"]["address"] == address

    # The CLI: status with the token from the environment, or without (its own user), and a
    # shim client.
    env = {**daemon.env, "LSPMUX_TOKEN": "s3cret-token"}
    assert daemon.run_cli("status", "--connect", address).returncode == 0
    assert daemon.run_cli("status", "--connect", address, env=env).returncode == 0
    client = await daemon.client(workspace, "--connect", address, env=env, connect=False)
    uri = client.open("hello.c", "c")
    hover = await client.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
    )
    assert hover is not None and "int add" in hover.contents.value


# -- status, reload, instance_timeout ----------------------------------------------------------


async def test_reload_restarts_and_idle_instances_stop(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start("--config", str(daemon.config("instance_timeout = 1\n")))
    client = await daemon.client(workspace)
    uri = client.open("hello.c", "c")
    hover = await client.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
    )
    assert hover is not None
    [before] = daemon.backends("clangd")
    out = daemon.run_cli("reload", str(workspace), "--connect", daemon.address)
    assert out.returncode == 0 and "restarted clangd" in out.stdout, out.stdout + out.stderr
    [after] = daemon.backends("clangd")
    assert after.pid != before.pid
    hover = await client.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(2, 5))
    )
    assert hover is not None and "int add" in hover.contents.value  # the document was replayed
    await asyncio.wait_for(client.client.shutdown_session(), 20)
    await client.client.stop()
    await wait_until(lambda: not daemon.backends("clangd"), timeout=15, what="clangd stopped")
    assert daemon.status()["instances"] == []


# -- the benchmark script -----------------------------------------------------------------------


def test_bench_sharing_runs_and_prints_its_tables() -> None:
    """scripts/bench_sharing.py in a tiny mode (numbers mean nothing at this size)."""
    script = Path(__file__).resolve().parent.parent.parent / "scripts" / "bench_sharing.py"
    tiny = ["--clients", "2", "--requests", "5", "--startup-runs", "2", "--echo-rounds", "20"]
    out = subprocess.run(
        [sys.executable, str(script), *tiny, "--settle", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "LSPMUX_ADDRESS"},
    )
    assert out.returncode == 0, out.stderr
    assert "| daemon + servers, 2 clients |" in out.stdout
    assert "(1 server process)" in out.stdout
    assert "| `lspmux client` → daemon |" in out.stdout
    assert "added by the shim alone" in out.stdout
