"""Harness for the daemon's end-to-end tests: a real `lspmux server` process, pytest-lsp
clients connected through real `lspmux client` shims, raw socket clients, and the process
accounting that proves sharing (backends are counted as the daemon's direct children).

Every daemon gets a short private runtime folder under /tmp (a Unix socket path must stay
under 108 bytes) as `XDG_RUNTIME_DIR`; at teardown the clients are shut down, the daemon is
stopped with SIGTERM, and no process it started may survive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest_asyncio
from lsprotocol import types as t
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.e2e.conftest import Proxy, proxy_env

SCRIPTED = Path(__file__).resolve().parent.parent / "servers" / "scripted.py"


def scripted_server(mode: str, log: Path, *, name: str = "scripted") -> str:
    """A config entry for tests/servers/scripted.py serving `.fault` files."""
    return f"""
[servers.{name}]
command = [{json.dumps(sys.executable)}, {json.dumps(str(SCRIPTED))}, "{mode}"]
file_types = [".fault"]
root_markers = [".git"]
env = {{ SCRIPTED_LOG = {json.dumps(str(log))} }}
"""


def received(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader, timeout: float = 30) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        length = 0
        while True:
            line = await reader.readline()
            if not line:
                raise EOFError("the daemon closed the connection")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return json.loads(await reader.readexactly(length))

    return await asyncio.wait_for(read(), timeout)


class RawClient:
    """An LSP client on a bare socket (an agent that connects without the shim)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.notifications: list[dict[str, Any]] = []
        #: What it answers to a server→client request, by method (null otherwise).
        self.answers: dict[str, Any] = {}
        self.asked: list[dict[str, Any]] = []

    def send(self, msg: dict[str, Any]) -> None:
        self.writer.write(frame(msg))

    async def request(self, msg_id: int, method: str, params: Any, timeout: float = 60) -> Any:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            msg = await read_message(self.reader, max(deadline - loop.time(), 0.1))
            if msg.get("id") == msg_id and "method" not in msg:
                return msg
            if "method" in msg and "id" in msg:  # a server→client request: `answers`, or null
                self.answer(msg)
            elif "method" in msg:
                self.notifications.append(msg)

    def answer(self, msg: dict[str, Any]) -> None:
        self.asked.append(msg)
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self.answers.get(msg["method"])})

    async def wait_notification(self, predicate: Any, timeout: float = 60) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for msg in self.notifications:
            if predicate(msg):
                return msg
        while True:
            msg = await read_message(self.reader, max(deadline - loop.time(), 0.1))
            if "method" in msg and "id" in msg:
                self.answer(msg)
                continue
            self.notifications.append(msg)
            if predicate(msg):
                return msg

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


class DaemonUnderTest:
    """One `lspmux server` (started by the test or by a shim) and the clients of a test."""

    def __init__(self, tmp_path: Path, runtime: Path) -> None:
        self.tmp_path = tmp_path
        self.runtime = runtime
        self.env = proxy_env(tmp_path)
        self.env["XDG_RUNTIME_DIR"] = str(runtime)
        self.env.pop("LSPMUX_SERVER", None)
        self.env.pop("LSPMUX_TOKEN", None)
        self.socket = runtime / "lspmux" / "lspmux.sock"
        self.address = f"unix:{self.socket}"
        self.log = tmp_path / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.clients: list[Proxy] = []
        self.raw: list[RawClient] = []
        self.known_children: set[int] = set()

    # -- the daemon -------------------------------------------------------------------------

    def config(self, text: str) -> Path:
        path = self.tmp_path / "daemon-config.toml"
        path.write_text(text)
        return path

    def server_argv(self, *extra: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "lspmux",
            "server",
            "--log-level",
            "debug",
            "--log-file",
            str(self.log),
            *extra,
        ]

    async def start(self, *extra: str, wait_for: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            self.server_argv(*extra),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(self.tmp_path / "daemon.stderr", "ab"),  # noqa: SIM115
        )
        target = wait_for or self.socket
        for _ in range(300):
            if target.exists() and (wait_for is not None or self._connectable()):
                return
            if self.proc.poll() is not None:
                err = (self.tmp_path / "daemon.stderr").read_text()
                raise AssertionError(f"the daemon exited ({self.proc.returncode}): {err}")
            await asyncio.sleep(0.05)
        raise AssertionError("the daemon did not start listening")

    def _connectable(self) -> bool:
        import socket

        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(str(self.socket))
            return True
        except OSError:
            return False
        finally:
            s.close()

    @property
    def pid(self) -> int | None:
        if self.proc is not None:
            return self.proc.pid
        pid_file = Path(f"{self.socket}.pid")
        if pid_file.exists() and pid_file.read_text().strip().isdigit():
            return int(pid_file.read_text().strip())
        return None

    def process(self) -> psutil.Process:
        assert self.pid is not None
        return psutil.Process(self.pid)

    def backends(self, word: str) -> list[psutil.Process]:
        """The daemon's direct children whose command line mentions `word`."""
        found = []
        for child in self.process().children():
            with contextlib.suppress(psutil.Error):
                self.known_children.add(child.pid)
                if word in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                    found.append(child)
        return found

    def run_cli(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lspmux", *args],
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def status(self) -> dict[str, Any]:
        out = self.run_cli("status", "--json", "--connect", self.address)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    # -- clients ----------------------------------------------------------------------------

    async def client(
        self,
        workspace: Path,
        *args: str,
        command: tuple[str, ...] = ("client",),
        env: dict[str, str] | None = None,
        connect: bool = True,
        folder: Path | None = None,
        initialization_options: Any = None,
    ) -> Proxy:
        """A pytest-lsp client through `lspmux COMMAND` (the shim by default). Its documents
        are named relative to `workspace`; its workspace folder is `folder` (an editor opened
        in a Cargo member, say) or `workspace` itself."""
        argv = [sys.executable, "-m", "lspmux", *command]
        if connect:
            argv += ["--connect", self.address]
        argv += list(args)
        client = make_test_lsp_client()
        proxy = Proxy(client, workspace)

        @client.feature(t.CLIENT_REGISTER_CAPABILITY)
        def _register(params: Any) -> None:
            proxy.server_requests.append((t.CLIENT_REGISTER_CAPABILITY, params))

        await client.start_io(*argv, env=env or self.env, cwd=str(workspace))
        self.clients.append(proxy)
        root = folder or workspace
        await client.initialize_session(
            t.InitializeParams(
                capabilities=client_capabilities("neovim"),
                root_uri=root.as_uri(),
                workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
                initialization_options=initialization_options,
            )
        )
        return proxy

    async def raw_client(self) -> RawClient:
        reader, writer = await asyncio.open_unix_connection(str(self.socket))
        raw = RawClient(reader, writer)
        self.raw.append(raw)
        return raw

    # -- teardown ---------------------------------------------------------------------------

    async def close(self) -> None:
        for proxy in self.clients:
            with contextlib.suppress(Exception):
                if proxy.client._server is not None and proxy.client._server.returncode is None:
                    await asyncio.wait_for(proxy.client.shutdown_session(), 20)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proxy.client.stop(), 20)
        for raw in self.raw:
            await raw.close()
        pid = self.pid
        if pid is None or not psutil.pid_exists(pid):
            return
        daemon = psutil.Process(pid)
        children = daemon.children(recursive=True)
        children += [psutil.Process(p) for p in self.known_children if psutil.pid_exists(p)]
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(20)
        except psutil.TimeoutExpired:
            daemon.kill()
            raise AssertionError("the daemon did not stop on SIGTERM") from None
        _gone, alive = psutil.wait_procs(children, timeout=10)
        leftovers = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        for p in leftovers:
            p.kill()
        assert not leftovers, f"processes survived the daemon: {leftovers}"
        assert not self.socket.exists(), "the daemon left its socket behind"
        if self.log.exists():
            text = self.log.read_text(errors="replace")
            assert "Traceback" not in text, f"the daemon logged a traceback:\n{text[-4000:]}"


@pytest_asyncio.fixture(name="daemon")
async def daemon_fixture(tmp_path: Path) -> AsyncIterator[DaemonUnderTest]:
    runtime = Path(tempfile.mkdtemp(prefix="lmx-", dir="/tmp"))
    under_test = DaemonUnderTest(tmp_path, runtime)
    try:
        yield under_test
    finally:
        try:
            await under_test.close()
        finally:
            shutil.rmtree(runtime, ignore_errors=True)


def free_port() -> int:
    """A loopback TCP port nobody listens on (now)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tcp_listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


async def wait_until(predicate: Any, timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


__all__ = [
    "SCRIPTED",
    "DaemonUnderTest",
    "RawClient",
    "daemon_fixture",
    "free_port",
    "received",
    "scripted_server",
    "tcp_listening",
    "wait_until",
]
