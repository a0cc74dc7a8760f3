"""What makes two shared instances differ, and the settings that reach them, through a real
`lspmux server`: the first client's initializationOptions, its answers to
`workspace/configuration` and its `didChangeConfiguration` reach the server (as with the Rust
lspmux); a client with no settings joins, one with conflicting settings gets its own instance
and `lspmux status` says why; a client's environment (filtered by `pass_environment`) reaches
its servers and keys them. `lspmux proxy` passes the client's settings the same way.

The server is tests/servers/scripted.py in its `echo` mode (it answers a hover with what it
was told), and the real basedpyright and ruff for the environment.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import psutil

from tests.e2e.conftest import proxy_env
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    SCRIPTED,
    DaemonUnderTest,
    RawClient,
    daemon_fixture,
    received,
    scripted_server,
    wait_until,
)


async def connect(
    daemon: DaemonUnderTest,
    workspace: Path,
    options: Any,
    config_answer: Any,
    lspmux: dict[str, Any] | None = None,
) -> RawClient:
    raw = await daemon.raw_client()
    raw.answers["workspace/configuration"] = config_answer
    init: dict[str, Any] = dict(options or {})
    if lspmux is not None:
        init["lspMux"] = {"version": "1", "method": "connect", **lspmux}
    params: dict[str, Any] = {
        "processId": None,
        "rootUri": workspace.as_uri(),
        "capabilities": {"workspace": {"configuration": True}},
    }
    if init:
        params["initializationOptions"] = init
    reply = await raw.request(1, "initialize", params)
    assert "result" in reply, reply
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return raw


async def echo(raw: RawClient, uri: str, msg_id: int) -> dict[str, Any]:
    raw.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": ""}},
        }
    )
    reply = await raw.request(
        msg_id,
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
    )
    assert "result" in reply, reply
    seen: dict[str, Any] = json.loads(reply["result"]["contents"]["value"])
    return seen


def settings_changes(log: Path) -> list[Any]:
    return [
        m["params"]["settings"]
        for m in received(log)
        if m.get("method") == "workspace/didChangeConfiguration"
    ]


async def test_the_first_clients_settings_reach_a_shared_server(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "scripted.jsonl"
    await daemon.start("--config", str(daemon.config(scripted_server("echo", log))))
    uri = (workspace / "a.fault").as_uri()

    first = await connect(daemon, workspace, {"scripted": {"mode": "a"}}, [{"answer": "a"}])
    seen = await echo(first, uri, 2)
    assert seen["init"] == {"scripted": {"mode": "a"}}  # not None, as before
    assert seen["config"] == [{"answer": "a"}]  # not [null]: the client answered
    first.send(
        {
            "jsonrpc": "2.0",
            "method": "workspace/didChangeConfiguration",
            "params": {"settings": {"scripted": {"changed": "by a"}}},
        }
    )

    # the first client answers its server's requests from now on, as an editor does
    serving = asyncio.ensure_future(first.wait_notification(lambda _m: False, timeout=300))

    # a client that asks for no settings joins; the server keeps following the first one
    second = await connect(daemon, workspace, None, [{"answer": "b"}])
    second.send(
        {
            "jsonrpc": "2.0",
            "method": "workspace/didChangeConfiguration",
            "params": {"settings": {"scripted": {"changed": "by b"}}},
        }
    )
    joined = await echo(second, uri, 2)  # the server read b's notification before this hover
    assert joined["pid"] == seen["pid"]
    assert joined["config"] == [{"answer": "a"}]
    assert joined["changed"] == {"scripted": {"changed": "by a"}}
    assert settings_changes(log) == [{"scripted": {"changed": "by a"}}]
    assert not [m for m in second.asked if m["method"] == "workspace/configuration"]

    # a client whose initializationOptions conflict gets its own instance, and status says why
    third = await connect(daemon, workspace, {"scripted": {"mode": "c"}}, [{"answer": "c"}])
    other = await echo(third, uri, 2)
    assert other["pid"] != seen["pid"]
    assert other["init"] == {"scripted": {"mode": "c"}} and other["config"] == [{"answer": "c"}]
    status = daemon.status()
    rows = {i["pid"]: i for i in status["instances"]}
    assert rows[seen["pid"]]["why"] is None
    assert rows[seen["pid"]]["clients"] == ["client-1", "client-2"]
    assert rows[other["pid"]]["why"] == "initializationOptions differ from client-1's"
    assert rows[other["pid"]]["first_client"] == "client-3"
    text = daemon.run_cli("status", "--connect", daemon.address)
    assert "is another instance: initializationOptions differ from client-1's" in text.stdout

    # when the first client leaves, the next one's settings are followed
    serving.cancel()
    await first.close()
    await wait_gone(daemon, "client-1")
    after = await echo(second, uri, 3)
    assert after["config"] == [{"answer": "b"}]


async def wait_gone(daemon: DaemonUnderTest, client_id: str) -> None:
    def gone() -> bool:
        return all(c["id"] != client_id for c in daemon.status()["clients"])

    await wait_until(gone, what=f"{client_id} to leave")


async def test_a_named_server_gets_the_clients_arguments_and_environment(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    """A Rust lspmux client sends its whole environment and may give arguments: the server
    runs with them; `pass_environment` filters what reaches it and keys the instance."""
    log = tmp_path / "scripted.jsonl"
    config = daemon.config('pass_environment = ["*", "!WINDOWID"]\n')
    await daemon.start("--config", str(config))
    uri = (workspace / "a.fault").as_uri()
    env = {"SCRIPTED_LOG": str(log), "VIRTUAL_ENV": "/a/.venv", "WINDOWID": "1"}
    named = {"server": sys.executable, "args": [str(SCRIPTED), "echo"], "cwd": str(workspace)}
    a = await connect(daemon, workspace, None, None, {**named, "env": env})
    b = await connect(daemon, workspace, None, None, {**named, "env": {**env, "WINDOWID": "2"}})
    c = await connect(
        daemon, workspace, None, None, {**named, "env": {**env, "VIRTUAL_ENV": "/c/.venv"}}
    )
    seen_a = await echo(a, uri, 2)
    serving = asyncio.ensure_future(a.wait_notification(lambda _m: False, timeout=300))
    seen_b, seen_c = await echo(b, uri, 2), await echo(c, uri, 2)
    serving.cancel()
    assert seen_a["virtual_env"] == "/a/.venv" and seen_c["virtual_env"] == "/c/.venv"
    assert seen_a["pid"] == seen_b["pid"] != seen_c["pid"]  # WINDOWID is not passed
    environ = psutil.Process(seen_a["pid"]).environ()
    assert environ["VIRTUAL_ENV"] == "/a/.venv" and "WINDOWID" not in environ
    rows = {i["pid"]: i for i in daemon.status()["instances"]}
    assert rows[seen_c["pid"]]["why"] == "environment differs (VIRTUAL_ENV) from client-1's"
    assert rows[seen_a["pid"]]["command"] == [sys.executable, str(SCRIPTED), "echo"]


async def test_two_virtual_envs_get_two_real_servers_each_with_its_own(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path
) -> None:
    """`lspmux client --pass-env VIRTUAL_ENV` (routing by file type, no --server-path): two
    clients with different VIRTUAL_ENV get their own basedpyright and ruff, and each process
    holds its own client's value, never the other's."""
    await daemon.start()
    venvs = [tmp_path / "a" / ".venv", tmp_path / "b" / ".venv"]
    clients = []
    for venv in venvs:
        env = {**daemon.env, "VIRTUAL_ENV": str(venv)}
        clients.append(await daemon.client(workspace, "--pass-env", "VIRTUAL_ENV", env=env))
    for client in clients:
        client.open("app.py", "python")

    def servers(word: str) -> list[psutil.Process]:
        return daemon.backends(word)

    for word in ("basedpyright", "ruff"):
        await wait_until(lambda w=word: len(servers(w)) == 2, what=f"two {word} servers")
        held = sorted(p.environ().get("VIRTUAL_ENV", "") for p in servers(word))
        assert held == sorted(str(v) for v in venvs), word
    # a third client with the first one's environment shares the first one's servers
    third = await daemon.client(
        workspace, "--pass-env", "VIRTUAL_ENV", env={**daemon.env, "VIRTUAL_ENV": str(venvs[0])}
    )
    third.open("app.py", "python")

    def attached(server: str) -> int:
        return sum(len(i["clients"]) for i in daemon.status()["instances"] if i["server"] == server)

    await wait_until(lambda: attached("ruff") == 3, what="the third client attached")
    assert len(servers("basedpyright")) == 2 and len(servers("ruff")) == 2
    status = daemon.status()
    why = {i["why"] for i in status["instances"] if i["server"] == "ruff"}
    assert why == {None, "environment differs (VIRTUAL_ENV) from client-1's"}
    assert [c["env"] for c in status["clients"]] == [["VIRTUAL_ENV"]] * 3


async def test_lspmux_proxy_passes_the_clients_settings_too(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "scripted.jsonl"
    config = tmp_path / "config.toml"
    config.write_text(scripted_server("echo", log))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lspmux",
        "proxy",
        "--config",
        str(config),
        "--log-file",
        str(tmp_path / "proxy.log"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=proxy_env(tmp_path),
        cwd=str(workspace),
    )
    assert proc.stdin is not None and proc.stdout is not None
    raw = RawClient(proc.stdout, proc.stdin)
    try:
        raw.answers["workspace/configuration"] = [{"answer": "p"}]
        reply = await raw.request(
            1,
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {"workspace": {"configuration": True}},
                "initializationOptions": {"scripted": {"mode": "p"}},
            },
        )
        assert "result" in reply, reply
        raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = (workspace / "a.fault").as_uri()
        seen = await echo(raw, uri, 2)
        assert seen["init"] == {"scripted": {"mode": "p"}}
        assert seen["config"] == [{"answer": "p"}]
        raw.send(
            {
                "jsonrpc": "2.0",
                "method": "workspace/didChangeConfiguration",
                "params": {"settings": {"scripted": {"changed": "p"}}},
            }
        )
        again = await echo(raw, uri, 3)
        assert again["changed"] == {"scripted": {"changed": "p"}}
        await raw.request(4, "shutdown", None)
        raw.send({"jsonrpc": "2.0", "method": "exit"})
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_named_server_and_routing_by_file_type_share_one_instance(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    """`lspmux client --server-path ruff -- server` (the executable found on the client's PATH)
    and `lspmux client` (routing by file type over the configured `ruff server`) are the same
    server, root, argv, environment and settings: one ruff process."""
    await daemon.start()
    routed = await daemon.client(workspace)
    named = await daemon.client(workspace, "--server-path", "ruff", "--", "server")
    for client in (routed, named):
        client.open("app.py", "python")

    def ruff_clients() -> list[list[str]]:
        return [i["clients"] for i in daemon.status()["instances"] if i["server"] == "ruff"]

    await wait_until(lambda: ruff_clients() == [["client-1", "client-2"]], what="one shared ruff")
    assert len(daemon.backends("ruff")) == 1
