#!/usr/bin/env python3
"""Benchmark: clients that stop reading, beside one that reads, on one shared backend.

A daemon (`lspmux server`) serves one healthy client and N stuck ones, all on the same backend
instance: `scripts/bench_server.py`, whose completion answer is a 2.5 MB list written at once
(the backend costs no CPU, so what is measured is lspmux). Each stuck client initializes,
opens the file, then stops reading and keeps asking for completions (`--rate` per second each)
for the whole run: answers that lspmux must queue for a client that never takes them. The
healthy client meanwhile sends sequential hovers and records each latency. Reported: the
healthy client's latency before and during the flood (p50, p99, worst), the daemon's own RSS
before, at its peak, and after the stuck clients were disconnected, and when they were.

    .venv/bin/python scripts/bench_stuck.py [--stuck 4] [--rate 20] [--seconds 40]
                                            [--lspmux-root DIR] [--capabilities bare|editor]
    .venv/bin/python scripts/bench_stuck.py --strangers [--lspmux-root DIR]

`--strangers`: instead, 8 TCP connections each send a 16 MiB frame and never a token; the
daemon's RSS before and at its peak over 5 s.

`--lspmux-root` runs the daemon from another checkout (to compare with older code). The
daemon runs in a private runtime folder and is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import EDITOR_CAPABILITIES
from bench_sharing import PATH_EXTRA, ROOT, Daemon, StdioClient, pct

#: What the clients declare: `bare` (nothing: every completion answer is fitted, markdown to
#: plain text and snippets to text, for each client) or `editor` (markdown, snippets, links:
#: answers are relayed as the server wrote them).
CAPABILITIES: dict[str, dict[str, Any]] = {
    "bare": {"general": {"positionEncodings": ["utf-16"]}},
    "editor": {"general": {"positionEncodings": ["utf-16"]}, **EDITOR_CAPABILITIES},
}

SERVER = ROOT / "scripts" / "bench_server.py"
SPEC = {"file": "main.bench", "language": "bench", "position": (0, 1)}


def write_config(folder: Path) -> Path:
    path = folder / "bench.toml"
    command = json.dumps([sys.executable, str(SERVER)])
    path.write_text(
        f'[servers.bench]\ncommand = {command}\nfile_types = [".bench"]\n'
        'root_markers = [".bench-root"]\nrequest_timeout = 120.0\n'
    )
    return path


async def flood(client: StdioClient, uri: str, rate: float, until: float) -> int:
    """Ask for completions at `rate` per second until `until` or until the daemon drops us;
    never read an answer. Returns how many were sent."""
    client.reader.cancel()  # from now on nothing is read: the socket fills up
    sent = 0
    while time.monotonic() < until:
        try:
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": 10_000 + sent,
                    "method": "textDocument/completion",
                    "params": {
                        "textDocument": {"uri": uri},
                        "position": {"line": 0, "character": 1},
                    },
                }
            )
            if client.into.is_closing():
                break
        except (ConnectionError, RuntimeError):
            break
        sent += 1
        await asyncio.sleep(1 / rate)
    return sent


async def daemon_clients(path: str) -> int:
    reader, writer = await asyncio.open_unix_connection(path)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "lspmux/status"}).encode()
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return len(json.loads(data.partition(b"\r\n\r\n")[2])["result"]["clients"])


async def hover_for(
    client: StdioClient, uri: str, seconds: float, latencies: list[float], gap: float = 0.01
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        reply = await client.hover(uri, SPEC)
        latencies.append((time.perf_counter() - t0) * 1000)
        if latencies[-1] > 50 and os.environ.get("BENCH_TRACE"):
            print(
                f"slow hover: {latencies[-1]:.0f} ms, ended at {time.time():.3f}", file=sys.stderr
            )
        assert "result" in reply, reply
        await asyncio.sleep(gap)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    runtime = Path(tempfile.mkdtemp(prefix="lmxb-", dir="/tmp"))
    workspace = runtime / "ws"
    workspace.mkdir()
    (workspace / ".bench-root").write_text("")
    (workspace / "main.bench").write_text("bench\n")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(p) for p in PATH_EXTRA] + [env.get("PATH", "")])
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env["XDG_CACHE_HOME"] = str(runtime / "cache")
    env["XDG_CONFIG_HOME"] = str(runtime / "config")
    env["PYTHONPATH"] = str(args.lspmux_root)
    daemon = Daemon(env, runtime)
    daemon.extra = ["--config", str(write_config(runtime))]
    daemon.cwd = args.lspmux_root
    daemon.start()
    assert daemon.proc is not None
    me = psutil.Process(daemon.proc.pid)
    path = str(daemon.socket)
    out: dict[str, Any] = {"stuck": args.stuck, "rate": args.rate, "caps": args.capabilities}
    try:
        healthy = await StdioClient.connect(path, {})
        healthy.lspmux = None
        healthy.capabilities = CAPABILITIES[args.capabilities]
        uri = await healthy.start(workspace, SPEC)
        await hover_for(healthy, uri, 2.0, [])  # warm-up, not counted
        before: list[float] = []
        await hover_for(healthy, uri, 3.0, before)
        stuck = []
        for _ in range(args.stuck):
            client = await StdioClient.connect(path, {})
            client.lspmux = None
            client.capabilities = CAPABILITIES[args.capabilities]
            await client.start(workspace, SPEC)
            stuck.append(client)
        await asyncio.sleep(0.5)
        out["rss_before"] = me.memory_info().rss
        started = time.monotonic()
        until = started + args.seconds
        floods = [asyncio.ensure_future(flood(c, uri, args.rate, until)) for c in stuck]
        during: list[float] = []
        peak = [out["rss_before"]]
        gone_at: list[float] = []

        worker_peak = [0]

        def worker_rss() -> int:
            """The fitting worker's RSS (a child of the daemon), 0 while it does not run."""
            for child in me.children():
                with contextlib.suppress(psutil.Error):
                    if "fit_worker" in " ".join(child.cmdline()):
                        return int(child.memory_info().rss)
            return 0

        async def watch() -> None:
            while True:
                peak[0] = max(peak[0], me.memory_info().rss)
                worker_peak[0] = max(worker_peak[0], worker_rss())
                if not gone_at and await daemon_clients(path) == 1:
                    gone_at.append(time.monotonic() - started)
                await asyncio.sleep(0.1)

        watcher = asyncio.ensure_future(watch())
        await hover_for(healthy, uri, args.seconds, during)
        out["sent"] = [await f for f in floods]
        await asyncio.sleep(2.0)
        watcher.cancel()
        out["rss_peak"] = peak[0]
        out["rss_after"] = me.memory_info().rss
        out["worker_peak"] = worker_peak[0]
        out["clients_after"] = await daemon_clients(path)
        out["gone_after_s"] = gone_at[0] if gone_at else None
        out["before"] = before
        out["during"] = during
        for c in stuck:
            with contextlib.suppress(Exception):
                c.into.close()
        await healthy.close()
    finally:
        daemon.stop()
        shutil.rmtree(runtime, ignore_errors=True)
    return out


async def strangers(args: argparse.Namespace) -> dict[str, Any]:
    """8 TCP connections that each send a 16 MiB frame and never a token: the daemon's RSS."""
    import socket
    import subprocess

    runtime = Path(tempfile.mkdtemp(prefix="lmxt-", dir="/tmp"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ)
    env.update(XDG_RUNTIME_DIR=str(runtime), LSPMUX_TOKEN="t0ken", PYTHONPATH=str(args.lspmux_root))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lspmux", "server", "--listen", f"tcp:127.0.0.1:{port}"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=args.lspmux_root,
    )
    out: dict[str, Any] = {}
    try:
        for _ in range(200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            await asyncio.sleep(0.05)
        me = psutil.Process(proc.pid)
        await asyncio.sleep(0.5)
        out["before"] = me.memory_info().rss
        size = 16 * 1024 * 1024
        conns = []
        for _ in range(8):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"Content-Length: %d\r\n\r\n" % size)
            conns.append((reader, writer))

        async def send(writer: asyncio.StreamWriter) -> None:
            chunk = b"x" * (1024 * 1024)
            with contextlib.suppress(Exception):
                for _ in range(16):
                    writer.write(chunk)
                    await asyncio.wait_for(writer.drain(), 10)

        await asyncio.gather(*(send(w) for _r, w in conns))
        peak = out["before"]
        for _ in range(50):  # hold them 5 s
            peak = max(peak, me.memory_info().rss)
            await asyncio.sleep(0.1)
        out["peak"] = peak
        out["open"] = sum(1 for r, _w in conns if not r.at_eof())
        for _r, w in conns:
            w.close()
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def report(r: dict[str, Any]) -> str:
    def ms(values: list[float]) -> str:
        return (
            f"{statistics.median(values):.2f} ms | {pct(values, 0.99):.2f} ms | "
            f"{max(values):.2f} ms | {len(values)}"
        )

    mib = 1024 * 1024
    gone = r["gone_after_s"]
    lines = [
        f"| healthy client's hovers ({r['stuck']} stuck clients asking {r['rate']:g} "
        f"completions/s each, 2.5 MB per answer; clients declare `{r['caps']}` capabilities) "
        "| p50 | p99 | worst | n |",
        "|---|---:|---:|---:|---:|",
        f"| before the flood | {ms(r['before'])} |",
        f"| during the flood | {ms(r['during'])} |",
        "",
        "| daemon RSS (the daemon process only) | MiB |",
        "|---|---:|",
        f"| before the flood | {r['rss_before'] / mib:.1f} |",
        f"| peak during the flood | {r['rss_peak'] / mib:.1f} |",
        f"| 2 s after the flood | {r['rss_after'] / mib:.1f} |",
        f"| the fitting worker's peak (a separate process; 0: never started) | "
        f"{r.get('worker_peak', 0) / mib:.1f} |",
        "",
        f"Completion requests the stuck clients sent: {r['sent']}. Clients the daemon counts "
        f"after the flood: {r['clients_after']} (the healthy one is 1); the stuck ones were "
        "all gone " + (f"{gone:.1f} s after the flood began." if gone is not None else "— never."),
    ]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stuck", type=int, default=4)
    p.add_argument("--rate", type=float, default=20.0)
    p.add_argument("--seconds", type=float, default=40.0)
    p.add_argument("--lspmux-root", type=Path, default=ROOT)
    p.add_argument(
        "--capabilities",
        choices=sorted(CAPABILITIES),
        default="bare",
        help="what the clients declare: bare (answers fitted per client) or editor",
    )
    p.add_argument(
        "--strangers", action="store_true", help="measure 8 unauthenticated 16 MiB TCP frames"
    )
    args = p.parse_args()
    if args.strangers:
        r = asyncio.run(strangers(args))
        mib = 1024 * 1024
        print(
            f"daemon RSS with 8 TCP connections sending 16 MiB frames, no token: "
            f"{r['before'] / mib:.1f} MiB before, {r['peak'] / mib:.1f} MiB peak over 5 s "
            f"(+{(r['peak'] - r['before']) / mib:.1f} MiB)"
        )
        return 0
    result = asyncio.run(run(args))
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
