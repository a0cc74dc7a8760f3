"""What a stranger can cost the daemon, and the small promises of its command line: bounded
TCP handshakes (size, number, time), junk lengths, `--listen` never deleting a file that is not
a socket, and `lspmux --connect ADDR status` never starting anything."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from lspmux.config.loader import load_config
from lspmux.config.model import Config
from lspmux.daemon import handshake as daemon_handshake
from lspmux.daemon.address import Address
from lspmux.daemon.server import Daemon, DaemonError
from tests.polling import eventually

# Read by name so that this file also runs (and fails for the right reasons) on older code.
MAX_TCP_HANDSHAKES: int = daemon_handshake.MAX_TCP_HANDSHAKES
TCP_HANDSHAKE_LIMIT: int = daemon_handshake.TCP_HANDSHAKE_LIMIT

TOKEN = "s3cret"
ROOT = Path(__file__).resolve().parents[3]


def framed(msg: dict[str, object]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest_asyncio.fixture
async def tcp_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Daemon]:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # where the TCP lock file goes
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    daemon = Daemon(
        Address("tcp", host="127.0.0.1", port=port),
        lambda _r: load_config(None, user_config=None),
        token=TOKEN,
    )
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.close()


async def closed_by_peer(reader: asyncio.StreamReader, timeout: float = 5) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), timeout) == b""
    except ConnectionResetError:
        return True


def held(daemon: Daemon) -> int:
    return sum(len(hs._buf) for hs in daemon.handshakes)


async def test_huge_first_frames_without_a_token_are_refused_before_their_body(
    tcp_daemon: Daemon,
) -> None:
    addr = tcp_daemon.address
    conns = [await asyncio.open_connection(addr.host, addr.port) for _ in range(8)]
    chunk = b"x" * (1024 * 1024)
    for _reader, writer in conns:
        writer.write(b"Content-Length: %d\r\n\r\n" % (16 * 1024 * 1024))
        writer.write(chunk)
    for reader, writer in conns:
        assert await closed_by_peer(reader)
        writer.close()
    assert held(tcp_daemon) == 0 and not tcp_daemon.handshakes


async def test_unauthenticated_tcp_handshakes_are_capped_in_number_and_size(
    tcp_daemon: Daemon,
) -> None:
    addr = tcp_daemon.address
    slow = []
    for _ in range(MAX_TCP_HANDSHAKES):  # strangers that announce a legal size, send half
        reader, writer = await asyncio.open_connection(addr.host, addr.port)
        writer.write(b"Content-Length: %d\r\n\r\n" % TCP_HANDSHAKE_LIMIT)
        writer.write(b"x" * (TCP_HANDSHAKE_LIMIT // 2))
        slow.append((reader, writer))
    await eventually(
        lambda: (
            len(tcp_daemon.handshakes) == MAX_TCP_HANDSHAKES
            and held(tcp_daemon) >= MAX_TCP_HANDSHAKES * TCP_HANDSHAKE_LIMIT // 2
        ),
        "every stranger's half frame held",
        timeout=5,
        step=0.02,
    )
    # one more is closed at once, whatever it sends
    reader, writer = await asyncio.open_connection(addr.host, addr.port)
    writer.write(b"Content-Length: 10\r\n\r\n")
    assert await closed_by_peer(reader)
    writer.close()
    assert len(tcp_daemon.handshakes) == MAX_TCP_HANDSHAKES
    assert held(tcp_daemon) <= MAX_TCP_HANDSHAKES * (TCP_HANDSHAKE_LIMIT + 64 * 1024)
    for _reader, w in slow:
        w.close()
    await eventually(lambda: not tcp_daemon.handshakes, "the strangers gone", step=0.02)
    # once they are gone, a client with the token gets its answer
    reader, writer = await asyncio.open_connection(addr.host, addr.port)
    status = {"jsonrpc": "2.0", "id": 1, "method": "lspmux/status", "params": {"token": TOKEN}}
    writer.write(framed(status))
    data = await asyncio.wait_for(reader.read(), 5)
    assert b'"pid"' in data
    writer.close()


async def test_a_slow_stranger_is_dropped_after_the_tcp_timeout(
    tcp_daemon: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(daemon_handshake, "TCP_HANDSHAKE_TIMEOUT", 0.3)
    reader, writer = await asyncio.open_connection(tcp_daemon.address.host, tcp_daemon.address.port)
    writer.write(b"Content-Len")
    assert await closed_by_peer(reader, 5)
    writer.close()
    assert not tcp_daemon.handshakes


@pytest.mark.parametrize(
    "length", [b"7" * 4301, b"1000000000000", b"9223372036854775808", b"-1", b"+5"]
)
async def test_a_junk_first_length_is_logged_and_the_daemon_lives_on(
    tcp_daemon: Daemon, length: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    addr = tcp_daemon.address
    with caplog.at_level(logging.WARNING, "lspmux.daemon"):
        reader, writer = await asyncio.open_connection(addr.host, addr.port)
        writer.write(b"Content-Length: " + length + b"\r\n\r\n{}")
        assert await closed_by_peer(reader)
        writer.close()
    assert "refused" in caplog.text and "Content-Length" in caplog.text
    reader, writer = await asyncio.open_connection(addr.host, addr.port)
    writer.write(framed({"jsonrpc": "2.0", "id": 2, "method": "lspmux/status", "params": {}}))
    data = await asyncio.wait_for(reader.read(), 5)
    assert b'"result"' in data  # answered (its own user needs no token): the daemon is alive
    writer.close()


# -- --listen never deletes what is not a socket ------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "folder", "link"])
async def test_listen_refuses_to_replace_what_is_not_a_socket(kind: str) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="lmxl-", dir="/tmp"))
    try:
        folder = runtime / "d"
        folder.mkdir(mode=0o700)
        path = folder / "precious"
        if kind == "file":
            path.write_text("my notes\n")
        elif kind == "folder":
            path.mkdir()
        else:
            (folder / "target").write_text("x")
            path.symlink_to(folder / "target")
        daemon = Daemon(Address("unix", path=str(path)), lambda _r: load_config(None))
        with pytest.raises(DaemonError, match=r"not a socket|symbolic link"):
            await daemon.start()
        daemon.lock.release()
        assert os.path.lexists(path)
        if kind == "file":
            assert path.read_text() == "my notes\n"
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


# -- `lspmux --connect ADDR status` -----------------------------------------------------------


def test_status_after_connect_options_never_starts_anything(tmp_path: Path) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="lmxs-", dir="/tmp"))
    sock = runtime / "lspmux" / "lspmux.sock"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "PYTHONPATH": str(ROOT)}
    env.pop("LSPMUX_ADDRESS", None)
    init = framed({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    try:
        for argv in (
            ["--connect", f"unix:{sock}", "status"],
            [f"--connect=unix:{sock}", "status", "--json"],
            ["status", "--connect", f"unix:{sock}"],
        ):
            proc = subprocess.run(
                [sys.executable, "-m", "lspmux", *argv],
                input=init,  # what an editor would send the Rust-compatible client
                capture_output=True,
                env=env,
                timeout=30,
                cwd=tmp_path,
            )
            assert proc.returncode == 1, proc.stderr
            assert b"no daemon answers" in proc.stderr
            if "--json" in argv:  # status's answer (no daemon: pid null), never a client's
                assert json.loads(proc.stdout)["pid"] is None, proc.stdout
            else:
                assert proc.stdout == b""
            assert not sock.exists() and not sock.with_name("lspmux.sock.pid").exists()
    finally:
        pidfile = sock.with_name("lspmux.sock.pid")
        if pidfile.exists() and pidfile.read_text().strip().isdigit():  # only on a failure
            os.kill(int(pidfile.read_text()), 15)
        shutil.rmtree(runtime, ignore_errors=True)


# -- the lspMux handshake: env, args and cwd --------------------------------------------------


def initialize(lspmux: dict[str, object]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "capabilities": {},
            "initializationOptions": {"lspMux": {"version": "1", **lspmux}},
        },
    }


@pytest.mark.parametrize(
    "options",
    [
        {"server": "ruff", "args": ["format", "/tmp/somewhere"]},
        {"server": "clangd", "env": {"PYTHONPATH": "/tmp/evil"}},
        {"server": "clangd", "env": {"NODE_OPTIONS": "--require evil.js"}},
    ],
)
async def test_with_allowed_servers_a_client_cannot_set_args_or_env_of_a_server(
    tmp_path: Path, options: dict[str, object]
) -> None:
    strict = tmp_path / "strict.toml"
    strict.write_text('allowed_servers = ["clangd", "ruff"]\n')
    runtime = Path(tempfile.mkdtemp(prefix="lmxs-", dir="/tmp"))
    daemon = Daemon(
        Address("unix", path=str(runtime / "lspmux" / "lspmux.sock")),
        lambda _r: load_config(None, [strict], user_config=None),
    )
    await daemon.start()
    try:
        reader, writer = await asyncio.open_unix_connection(daemon.address.path)
        writer.write(framed(initialize(options)))
        data = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        reply = json.loads(data.partition(b"\r\n\r\n")[2])
        assert "client_may_set" in reply["error"]["message"]
        assert daemon.clients.info == {}
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)


async def test_a_client_of_the_same_user_sets_args_env_and_cwd(
    running: Daemon, tmp_path: Path
) -> None:
    """As with the Rust lspmux: the cwd is kept (the last fallback for a root), the arguments
    and the environment go with the server; a root still comes from `initialize` first."""
    reader, writer = await asyncio.open_unix_connection(running.address.path)
    options = {
        "server": "clangd",
        "args": ["--background-index", "--clang-tidy"],
        "env": {"CC": "gcc"},
        "cwd": str(tmp_path),
    }
    writer.write(framed(initialize(options)))
    await asyncio.wait_for(reader.readuntil(b"serverInfo"), 10)
    [info] = running.clients.info.values()
    assert info.cwd == str(tmp_path) and info.args == ("--background-index", "--clang-tidy")
    assert info.env == ("CC",)
    [session] = running.clients.info
    assert session.roots == []
    [server] = session.config.servers.values()
    assert server.command[1:] == ("--background-index", "--clang-tidy")
    assert server.env["CC"] == "gcc"
    writer.close()


# -- the daemon reads project files under the same trust rules as the proxy -------------------


async def test_the_daemon_ignores_an_untrusted_project_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty trust database
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "lspmux.toml").write_text(
        '[servers.repo-server]\ncommand = ["./bin/evil"]\nfile_types = [".c"]\n'
        '[servers.clangd]\ncommand = ["./bin/evil-clangd"]\n'
    )
    runtime = Path(tempfile.mkdtemp(prefix="lmxr-", dir="/tmp"))
    daemon = Daemon(
        Address("unix", path=str(runtime / "lspmux" / "lspmux.sock")),
        lambda root: load_config(root, user_config=None),
    )
    await daemon.start()

    async def session_config() -> Config:
        reader, writer = await asyncio.open_unix_connection(daemon.address.path)
        init = {"capabilities": {}, "rootUri": repo.as_uri()}
        writer.write(framed({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        await asyncio.wait_for(reader.readuntil(b"serverInfo"), 10)
        session = next(s for s, info in daemon.clients.info.items() if s.state == "running")
        writer.close()
        await eventually(lambda: session not in daemon.clients.info, "the client gone", step=0.02)
        return session.config

    try:
        config = await session_config()
        assert "repo-server" not in config.servers
        assert config.servers["clangd"].command == ("clangd",)
        assert "lspmux trust" in (config.trust_notice or "")
        from lspmux import trust

        trust.command(repo)
        config = await session_config()
        assert config.servers["repo-server"].command == ("./bin/evil",)
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)
