"""A transparent share (`lspMux.server`, `--server-path`): the one server's own `initialize`
answer and its extension methods reach the clients untouched, both ways; and a server that
cannot start fails `initialize` with what it wrote to stderr. A daemon in-process, clients on
its socket, tests/servers/scripted.py as the server (a real process)."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lspmux.config.loader import load_config
from lspmux.daemon.address import Address
from lspmux.daemon.server import Daemon
from tests.e2e.daemon_harness import SCRIPTED, RawClient
from tests.polling import eventually

EXTENSIONS = {"hoverActions": True, "joinLines": True, "scriptedStatus": {"level": 2}}


@pytest_asyncio.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[Daemon]:
    """A daemon whose configuration names the scripted server (for `.fault` files), so that a
    client may ask for it by path: `lspMux.server` = python, `args` = [scripted.py, MODE]."""
    runtime = Path(tempfile.mkdtemp(prefix="lmxp-", dir="/tmp"))
    config_file = tmp_path / "config.toml"
    config_file.write_text(
        f"[servers.scripted]\ncommand = [{json.dumps(sys.executable)}, "
        f'{json.dumps(str(SCRIPTED))}, "ext"]\nfile_types = [".fault"]\n'
        'client_may_set = ["args"]\n'
    )
    address = Address("unix", path=str(runtime / "lspmux" / "lspmux.sock"))
    running = Daemon(address, lambda _root: load_config(None, [config_file], user_config=None))
    await running.start()
    try:
        yield running
    finally:
        await running.close()
        shutil.rmtree(runtime, ignore_errors=True)


def initialize(root: Path, mode: str | None, msg_id: int = 1) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if mode is not None:
        options = {"lspMux": {"server": sys.executable, "args": [str(SCRIPTED), mode]}}
    return {
        "capabilities": {"window": {"workDoneProgress": True}},
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "initializationOptions": options,
    }


async def connect(daemon: Daemon) -> RawClient:
    reader, writer = await asyncio.open_unix_connection(daemon.address.path)
    return RawClient(reader, writer)


async def test_the_servers_own_initialize_answer_reaches_every_client(
    daemon: Daemon, tmp_path: Path
) -> None:
    first, second = await connect(daemon), await connect(daemon)
    try:
        answers = [
            await client.request(1, "initialize", initialize(tmp_path, "ext"), timeout=30)
            for client in (first, second)
        ]
        for answer in answers:
            result = answer["result"]
            assert result["serverInfo"] == {"name": "scripted-ext", "version": "7.1"}
            capabilities = result["capabilities"]
            assert capabilities["experimental"] == EXTENSIONS
            assert capabilities["hoverProvider"] is True
            assert capabilities["textDocumentSync"] == 2  # the server's own, not lspmux's
            assert capabilities["positionEncoding"] == "utf-16"  # what lspmux negotiated
        assert len(daemon.pool.backends) == 1  # one server for both
        for client in (first, second):
            client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

        # client → server: a request of a method lspmux does not know, without a document
        echo = await first.request(2, "scripted/echo", {"x": [1, 2]})
        assert echo["result"] == {"echo": {"x": [1, 2]}}

        # client → server notification; server → client notification (to every client) and
        # request (to one client), whose answer goes back to the server
        first.send({"jsonrpc": "2.0", "method": "scripted/poke", "params": {"n": 3}})
        asked = await wait_request(first, "scripted/ask")
        assert asked["params"] == {"question": "ready?"}
        first.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"yes": True}})
        answered = await first.wait_notification(lambda m: m["method"] == "scripted/answered")
        assert answered["params"] == {"answer": {"yes": True}}
        for client in (first, second):
            poked = await client.wait_notification(lambda m: m["method"] == "scripted/poked")
            assert poked["params"] == {"n": 3}

        # lspmux's own methods still work beside the server's
        status = await first.request(3, "lspmux/diagnosticStatus", {"uris": []})
        assert "error" not in status, status
    finally:
        await first.close()
        await second.close()


async def wait_request(client: RawClient, method: str, timeout: float = 10) -> dict[str, Any]:
    """The next server→client request `method` (notifications read meanwhile are kept)."""
    from tests.e2e.daemon_harness import read_message

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        msg = await read_message(client.reader, max(deadline - loop.time(), 0.1))
        if msg.get("method") == method and "id" in msg:
            return msg
        if "method" in msg and "id" in msg:
            client.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif "method" in msg:
            client.notifications.append(msg)


async def test_routing_by_file_type_still_announces_lspmux(daemon: Daemon, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.fault").write_text("x\n")
    client = await connect(daemon)
    try:
        answer = await client.request(1, "initialize", initialize(workspace, None), timeout=30)
        assert answer["result"]["serverInfo"]["name"] == "lspmux"
    finally:
        await client.close()


async def test_a_server_that_cannot_start_fails_initialize_with_its_stderr(
    daemon: Daemon, tmp_path: Path
) -> None:
    client = await connect(daemon)
    try:
        answer = await client.request(1, "initialize", initialize(tmp_path, "die"), timeout=30)
    finally:
        await client.close()
    message = answer["error"]["message"]
    assert "could not start" in message and "exited with code 1" in message, message
    assert "error: Unknown binary 'rust-analyzer'" in message  # the server's own words
    assert "rustup component add rust-analyzer" in message  # and what to do


async def initialize_routed(tmp_path: Path, servers: str, files: list[str]) -> dict[str, Any]:
    """The answer to `initialize` of a client routed by file type, on a workspace of `files`,
    by a daemon configured with `servers` (nothing cached of them)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name in files:
        (workspace / name).write_text("x\n")
    config_file = tmp_path / "config.toml"
    config_file.write_text(servers)
    runtime = Path(tempfile.mkdtemp(prefix="lmxp-", dir="/tmp"))
    address = Address("unix", path=str(runtime / "lspmux" / "lspmux.sock"))
    running = Daemon(address, lambda root: load_config(root, [config_file], user_config=None))
    await running.start()
    try:
        client = await connect(running)
        answer = await client.request(1, "initialize", initialize(workspace, None), timeout=30)
        await client.close()
    finally:
        await running.close()
        shutil.rmtree(runtime, ignore_errors=True)
    return answer


async def test_routing_fails_initialize_when_every_needed_server_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing known of it
    servers = (
        f"[servers.broken]\ncommand = [{json.dumps(sys.executable)}, "
        f'{json.dumps(str(SCRIPTED))}, "die"]\nfile_types = [".fault"]\n'
    )
    answer = await initialize_routed(tmp_path, servers, ["a.fault"])
    message = answer["error"]["message"]
    assert "broken" in message and "Unknown binary" in message


async def test_routing_fails_initialize_when_no_needed_server_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    servers = '[servers.ghost]\ncommand = ["lspmux-no-such-server"]\nfile_types = [".zzz"]\n'
    answer = await initialize_routed(tmp_path, servers, ["a.zzz"])
    message = answer["error"]["message"]
    assert "ghost, for a.zzz: `lspmux-no-such-server` not found" in message, message
    assert "Install one" in message


async def test_routing_initializes_when_some_needed_server_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    servers = (
        '[servers.ghost]\ncommand = ["lspmux-no-such-server"]\nfile_types = [".zzz"]\n'
        f"[servers.scripted]\ncommand = [{json.dumps(sys.executable)}, "
        f'{json.dumps(str(SCRIPTED))}, "ext"]\nfile_types = [".fault"]\n'
    )
    answer = await initialize_routed(tmp_path, servers, ["a.zzz", "b.fault"])
    assert answer["result"]["serverInfo"]["name"] == "lspmux"


def test_what_lspmux_puts_into_the_servers_answer() -> None:
    """The server's answer as sent, but for the encoding lspmux negotiated with this client,
    its own diagnosticProvider, and what `except_features` turns off."""
    from types import SimpleNamespace

    from lspmux.config.model import ServerConfig
    from lspmux.session.announce import passed_through

    own = {
        "capabilities": {
            "positionEncoding": "utf-8",
            "hoverProvider": True,
            "renameProvider": True,
            "diagnosticProvider": {"interFileDependencies": False},
            "experimental": EXTENSIONS,
        },
        "serverInfo": {"name": "srv", "version": "1"},
        "offsetEncoding": "utf-8",
    }
    backend = SimpleNamespace(initialize_result=own, capabilities=own["capabilities"])
    server = ServerConfig(name="srv", command=("srv",), except_features=("rename",))
    pushed = SimpleNamespace(encoding="utf-16", pull_diagnostics=False)
    result, capabilities = passed_through(pushed, server, backend)  # type: ignore[arg-type]
    assert result["serverInfo"] == own["serverInfo"]
    assert result["capabilities"] is capabilities
    assert capabilities == {
        "positionEncoding": "utf-16",
        "hoverProvider": True,
        "experimental": EXTENSIONS,
    }
    assert result["offsetEncoding"] == "utf-16"
    pulled = SimpleNamespace(encoding="utf-8", pull_diagnostics=True)
    _, capabilities = passed_through(pulled, server, backend)  # type: ignore[arg-type]
    assert capabilities["diagnosticProvider"]["identifier"] == "lspmux"
    assert capabilities["positionEncoding"] == "utf-8"
    assert own["capabilities"]["renameProvider"] is True  # the backend's copy is untouched


async def test_a_server_that_gave_up_gets_a_fresh_start_from_a_new_client(
    daemon: Daemon,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """After the crash limit a backend is not restarted; a client that connects later (the
    user installed the missing component) starts it again instead of hearing the old news."""
    monkeypatch.setattr("lspmux.backends.backend.CRASH_LIMIT", 1)  # give up at once
    caplog.set_level(logging.INFO, "lspmux.backend")
    for _ in range(2):
        client = await connect(daemon)
        try:
            answer = await client.request(1, "initialize", initialize(tmp_path, "die"), 30)
        finally:
            await client.close()
        assert "Unknown binary" in answer["error"]["message"]
        await eventually(
            lambda: [b.state for b in daemon.pool.backends.values()] == ["failed"],
            "the backend gave up",
        )
    starts = [r for r in caplog.records if "started pid" in r.getMessage()]
    assert len(starts) == 2, [r.getMessage() for r in caplog.records]


async def test_a_server_kept_off_in_an_untrusted_workspace_is_not_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restricted mode keeps some servers off where the workspace is not trusted: initialize
    does not fail for them as if nothing were installed (the first request says why)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # nothing trusted
    servers = (
        f"[servers.guarded]\ncommand = [{json.dumps(sys.executable)}, "
        f'{json.dumps(str(SCRIPTED))}, "ext"]\nfile_types = [".fault"]\n'
        "untrusted = { disabled = true }\n"
        '[servers.ghost]\ncommand = ["lspmux-no-such-server"]\nfile_types = [".zzz"]\n'
    )
    answer = await initialize_routed(tmp_path, servers, ["a.fault", "b.zzz"])
    assert answer["result"]["serverInfo"]["name"] == "lspmux", answer
