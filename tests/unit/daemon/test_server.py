"""The daemon's pieces in-process (lspmux.daemon.server): the allow-list, the one-server
configuration of `lspMux`/`--server-path`, the handshake, instance_timeout, and the shared
pool's fan-out rules."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.config.loader import load_config
from lspmux.config.model import Config, ServerConfig
from lspmux.daemon.address import Address
from lspmux.daemon.server import AllowList, Daemon, DaemonError, match_server, one_server_config
from lspmux.routing.table import SERVER_DISPATCH
from tests.polling import eventually

SH = shutil.which("sh")


def config(text: str = "", tmp: Path | None = None) -> Config:
    extra = []
    if text:
        assert tmp is not None
        path = tmp / "c.toml"
        path.write_text(text)
        extra.append(path)
    return load_config(None, extra, user_config=None)


def test_allow_list_defaults_to_the_configured_commands(tmp_path: Path) -> None:
    allow = AllowList(config())
    assert allow.permits("clangd") and allow.permits("rust-analyzer")
    clangd = shutil.which("clangd")
    assert clangd is not None and allow.permits(clangd)  # its resolved path too
    assert allow.permits(os.path.realpath(clangd))
    assert not allow.permits("sh") and not allow.permits(SH or "/bin/sh")
    assert not allow.permits("/tmp/evil/clangd")  # a name match is not enough for a path
    refusal = allow.refusal("/bin/sh", "~/.config/lspmux/config.toml")
    assert "allowed_servers" in refusal and "/bin/sh" in refusal


def test_allow_list_from_the_config(tmp_path: Path) -> None:
    allow = AllowList(config('allowed_servers = ["sh"]\n', tmp_path))
    assert allow.permits("sh") and SH is not None and allow.permits(SH)
    assert not allow.permits("clangd")


def test_one_server_config_reuses_the_configured_entry(tmp_path: Path) -> None:
    base = config()
    match = match_server(base, "basedpyright-langserver")
    assert match is not None and match.name == "basedpyright"
    one = one_server_config(base, "basedpyright-langserver", [], {"X": "1"})
    [server] = one.servers.values()
    assert server.name == "basedpyright"
    assert server.command == ("basedpyright-langserver", "--stdio")  # its configured args
    assert server.settings == match.settings
    assert server.env == {"X": "1"}  # what pass_environment let through (admission.py)
    assert one.servers_for("/any/file.c") == [server]  # exactly that server, for every file
    assert one.linters_for("/any/file.py") == []
    other_args = one_server_config(base, "clangd", ["--log=verbose"], {})
    [variant] = other_args.servers.values()
    # the same name: its argv is in the instance key (backends/pool.py), not in its name
    assert variant.name == "clangd" and variant.command == ("clangd", "--log=verbose")
    unknown = one_server_config(base, "/opt/x/my-server", [], {})
    assert list(unknown.servers) == ["my-server"]


async def exchange(daemon: Daemon, payload: bytes) -> tuple[dict[str, Any] | None, bytes]:
    reader, writer = await asyncio.open_unix_connection(daemon.address.path)
    writer.write(payload)
    data = await asyncio.wait_for(reader.read(), 10)  # until the daemon closes
    writer.close()
    _head, _, body = data.partition(b"\r\n\r\n")
    return (json.loads(body) if body else None), data


def framed(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_status_is_answered_and_the_connection_closed(running: Daemon) -> None:
    reply, _ = await exchange(
        running, framed({"jsonrpc": "2.0", "id": 5, "method": "lspmux/status"})
    )
    assert reply is not None and reply["id"] == 5
    assert reply["result"]["pid"] == os.getpid()
    assert reply["result"]["instances"] == [] and reply["result"]["clients"] == []
    mode = os.stat(running.address.path).st_mode & 0o777
    assert mode == 0o600


async def test_agent_tools_run_only_when_the_command_line_passes_a_factory(
    running: Daemon,
) -> None:
    ask = framed({"jsonrpc": "2.0", "id": 3, "method": "lspmux/tool", "params": {"name": "x"}})
    reply, _ = await exchange(running, ask)
    assert reply is not None and "--private" in reply["error"]["message"]

    class Tools:  # what lspmux.agent.hosted provides: run a tool, ask the daemon
        def __init__(self, socket_path: str | None, query: Any) -> None:
            self.socket_path, self.query = socket_path, query

        async def run(self, params: dict[str, Any]) -> dict[str, Any]:
            status = await self.query("lspmux/status", {})
            return {"name": params["name"], "pid": status["pid"], "socket": self.socket_path}

        async def close(self) -> None:
            pass

    running.make_tools = Tools
    reply, _ = await exchange(running, ask)
    assert reply is not None
    assert reply["result"] == {"name": "x", "pid": os.getpid(), "socket": running.address.path}


async def test_the_first_message_must_be_initialize(running: Daemon) -> None:
    reply, _ = await exchange(
        running, framed({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover"})
    )
    assert reply is not None and "initialize" in reply["error"]["message"]
    body = b"{not json"
    reply, _ = await exchange(running, b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert reply is not None and reply["error"]["code"] == -32600


async def test_a_refused_server_gets_an_error_saying_what_to_do(
    running: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty trust database
    repo = tmp_path / "repo"
    (repo / "bin").mkdir(parents=True)
    shipped = repo / "bin" / "server"
    shipped.write_text("#!/bin/sh\n")
    shipped.chmod(0o755)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "capabilities": {},
            "rootUri": repo.as_uri(),
            "initializationOptions": {"lspMux": {"version": "1", "server": str(shipped)}},
        },
    }
    reply, _ = await exchange(running, framed(init))
    assert reply is not None and f"lspmux trust {repo}" in reply["error"]["message"]
    assert running.clients.info == {}


async def test_a_second_daemon_refuses_the_same_address(running: Daemon) -> None:
    other = Daemon(running.address, lambda _root: config())
    with pytest.raises(DaemonError, match="already running"):
        await other.start()
    assert os.path.exists(running.address.path)


async def test_tcp_is_loopback_only_and_needs_a_token_where_peers_are_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(DaemonError, match="loopback"):
        await Daemon(Address("tcp", host="0.0.0.0", port=1), lambda _r: config(), token="t").start()
    # Where the peer's uid cannot be told (not Linux), TCP needs a token (Linux: see
    # test_tcp_owner.py, its own user comes in without one).
    monkeypatch.setattr("lspmux.daemon.listen.peer_uid_checkable", lambda: False)
    with pytest.raises(DaemonError, match="token"):
        await Daemon(Address("tcp", host="127.0.0.1", port=1), lambda _r: config()).start()


async def test_instances_without_clients_stop_after_instance_timeout(
    running: Daemon, tmp_path: Path
) -> None:
    server = ServerConfig(name="scripted", command=(sys.executable, "-c", "pass"))
    backend = running.pool.get(server, tmp_path)
    assert backend is not None
    timeout = running.config.instance_timeout
    assert running.reap(1000.0) == []  # idle from now on
    assert running.reap(1000.0 + timeout - 1) == []
    assert running.reap(1000.0 + timeout) == [backend]
    assert running.pool.backends == {}
    await asyncio.sleep(0)
    assert backend.state == "stopped"


# -- the shared pool's fan-out -------------------------------------------------------------------


class FakeSession:
    def __init__(self, name: str) -> None:
        self.client_id = name
        self.last_active = 0.0
        self.inflight: dict[Any, Any] = {}
        self.notes: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []

    def backend_notification(self, backend: Backend, msg: dict[str, Any]) -> None:
        self.notes.append(msg)

    def backend_request(
        self, backend: Backend, msg: dict[str, Any], reply: Callable[[Any], None]
    ) -> None:
        self.requests.append(msg)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        pass


class FakeExchange:
    def __init__(self, backend: Backend, method: str = "textDocument/hover", at: int = 1) -> None:
        self.method = method
        self.targets = [(backend, at)]


def shared_backend(tmp_path: Path) -> tuple[Pool, Backend, FakeSession, FakeSession]:
    pool = Pool(shared=True, dispatch=SERVER_DISPATCH)
    backend = pool.get(ServerConfig(name="s", command=(sys.executable,)), tmp_path)
    assert backend is not None
    a, b = FakeSession("a"), FakeSession("b")
    pool.attach(backend, a)
    pool.attach(backend, b)
    return pool, backend, a, b


def test_diagnostics_go_only_to_the_sessions_holding_the_document(tmp_path: Path) -> None:
    pool, backend, a, b = shared_backend(tmp_path)
    uri = (tmp_path / "x.py").as_uri()
    backend.open_document(a, uri, "python", 1, "x = 1\n")
    publish = {
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": uri, "diagnostics": []},
    }
    pool.server_notification(backend, publish)
    assert a.notes == [publish] and b.notes == []
    elsewhere = {
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": (tmp_path / "closed.py").as_uri(), "diagnostics": []},
    }
    pool.server_notification(backend, elsewhere)  # nobody holds it: every session
    assert a.notes[-1] == elsewhere and b.notes == [elsewhere]


def test_backend_wide_progress_reaches_every_session(tmp_path: Path) -> None:
    pool, backend, a, b = shared_backend(tmp_path)
    answers: list[Any] = []
    create = {"id": 1, "method": "window/workDoneProgress/create", "params": {"token": "t"}}
    pool.server_request(backend, create, answers.append)
    assert answers == [None]  # answered once, by the pool
    assert a.requests == [create] and b.requests == [create]


def test_prompts_go_to_the_session_waiting_on_the_backend(tmp_path: Path) -> None:
    pool, backend, a, b = shared_backend(tmp_path)
    a.last_active, b.last_active = 1.0, 2.0
    edit = {"id": 2, "method": "workspace/applyEdit", "params": {}}
    pool.server_request(backend, edit, lambda _v: None)
    assert b.requests == [edit] and a.requests == []  # most recently active
    a.inflight["x"] = FakeExchange(backend)  # a's hover is in flight
    pool.server_request(backend, edit, lambda _v: None)
    assert a.requests == [edit]


def test_an_edit_goes_to_the_client_whose_command_the_server_runs(tmp_path: Path) -> None:
    """A has a slow request in flight at the server; B's executeCommand makes the server send
    applyEdit: B gets it (before, A did: it waited on the backend and was more recent)."""
    pool, backend, a, b = shared_backend(tmp_path)
    a.inflight["slow"] = FakeExchange(backend, "textDocument/references", at=7)
    b.inflight["cmd"] = FakeExchange(backend, "workspace/executeCommand", at=8)
    a.last_active, b.last_active = 3.0, 2.0
    edit = {"id": 9, "method": "workspace/applyEdit", "params": {}}
    pool.server_request(backend, edit, lambda _v: None)
    assert b.requests == [edit] and a.requests == []
    # two commands at once: the latest sent (the server's ids grow) is the one running
    a.inflight["cmd"] = FakeExchange(backend, "workspace/executeCommand", at=10)
    pool.server_request(backend, edit, lambda _v: None)
    assert a.requests == [edit]


async def test_a_client_that_does_not_read_is_disconnected_alone(tmp_path: Path) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="lmxu-", dir="/tmp"))
    address = Address("unix", path=str(runtime / "lspmux" / "lspmux.sock"))
    daemon = Daemon(address, lambda _root: config(), client_write_limit=64 * 1024)
    await daemon.start()
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"capabilities": {}, "rootUri": tmp_path.as_uri()},
    }
    try:
        _slow_r, slow_w = await asyncio.open_unix_connection(address.path)
        calm_r, calm_w = await asyncio.open_unix_connection(address.path)
        for w in (slow_w, calm_w):
            w.write(framed(init))
        await asyncio.wait_for(calm_r.readuntil(b"serverInfo"), 10)
        assert len(daemon.clients.info) == 2
        # The slow client sends request after request and never reads an answer.
        flood = b"".join(
            framed({"jsonrpc": "2.0", "id": i, "method": "lspmux/nothing"}) for i in range(1, 40000)
        )
        slow_w.write(flood)
        await eventually(
            lambda: len(daemon.clients.info) == 1,
            "the client that does not read disconnected",
            timeout=10,
            step=0.02,
        )
        # The other client is served as before.
        calm_w.write(framed({"jsonrpc": "2.0", "id": 99, "method": "lspmux/nothing"}))
        answer = await asyncio.wait_for(calm_r.readuntil(b'"id":99'), 10)
        assert answer
        slow_w.close()
        calm_w.close()
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)


async def test_a_port_in_use_is_an_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # where the TCP lock file goes

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        daemon = Daemon(Address("tcp", host="127.0.0.1", port=port), lambda _r: config(), token="t")
        with pytest.raises(DaemonError, match="cannot listen"):
            await daemon.start()


async def test_a_stale_socket_of_a_dead_daemon_is_replaced() -> None:
    import socket

    runtime = Path(tempfile.mkdtemp(prefix="lmxu-", dir="/tmp"))
    path = runtime / "lspmux" / "lspmux.sock"
    path.parent.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # a daemon that was killed: the file stays, nobody listens
    dead.close()
    daemon = Daemon(Address("unix", path=str(path)), lambda _root: config())
    try:
        await daemon.start()
        reply, _ = await exchange(
            daemon, framed({"jsonrpc": "2.0", "id": 1, "method": "lspmux/status"})
        )
        assert reply is not None and reply["result"]["pid"] == os.getpid()
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)
    assert not path.exists()
