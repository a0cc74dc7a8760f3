"""No server outlives lspmux, even a SIGKILL of it: a server that ignores EOF and SIGTERM on
its stdin's end, and the helper it started in its process group, are stopped by the watchdog
(lspmux/backends/watchdog.py). They used to stay alive."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import psutil
import pytest

from tests.e2e.daemon_harness import DaemonUnderTest, daemon_fixture  # noqa: F401 (a fixture)
from tests.e2e.test_limits import RawProxy
from tests.polling import eventually

pytestmark = pytest.mark.e2e

#: A server that answers initialize, records its pid and its helper's, then ignores the end of
#: its input (and SIGTERM) forever; its helper (same process group) sleeps.
STUBBORN = r"""
import json, os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as f:
    json.dump({"server": os.getpid(), "helper": helper.pid}, f)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    line = inp.readline()
    if not line:
        break
    if line.lower().startswith(b"content-length"):
        n = int(line.split(b":")[1])
        inp.readline()
        msg = json.loads(inp.read(n))
        if msg.get("method") == "initialize":
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                               "result": {"capabilities": {"hoverProvider": True}}}).encode()
            out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            out.flush()
while True:
    time.sleep(1)
"""


def config(tmp_path: Path) -> tuple[Path, Path]:
    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN)
    pids = tmp_path / "pids.json"
    cfg = tmp_path / "stubborn.toml"
    cfg.write_text(
        "[servers.stubborn]\n"
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(script))}, "
        f"{json.dumps(str(pids))}]\n"
        'file_types = [".stub"]\n'
    )
    (tmp_path / "a.stub").write_text("x\n")
    return cfg, pids


async def gone(pids: Path) -> None:
    procs = json.loads(pids.read_text())
    await eventually(
        lambda: not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                        for p in procs.values()),
        f"the server and its helper gone ({procs})",
        timeout=15,
    )  # fmt: skip


async def test_sigkill_of_the_proxy_leaves_no_server(tmp_path: Path) -> None:
    cfg, pids = config(tmp_path)
    proxy = await RawProxy.start(tmp_path, tmp_path, "--config", str(cfg))
    try:
        init = {"capabilities": {}, "rootUri": tmp_path.as_uri()}
        await proxy.request(1, "initialize", init)
        await eventually(pids.exists, "the server started", timeout=30)
        proxy.proc.send_signal(signal.SIGKILL)
        await proxy.proc.wait()
        await gone(pids)
    finally:
        await proxy.stop()


async def test_sigkill_of_the_daemon_leaves_no_server(
    daemon: DaemonUnderTest, tmp_path: Path
) -> None:
    cfg, pids = config(tmp_path)
    await daemon.start("--config", str(cfg))
    client = await daemon.client(tmp_path)
    client.open("a.stub", "stub")
    await eventually(pids.exists, "the server started", timeout=30)
    assert daemon.proc is not None
    daemon.proc.send_signal(signal.SIGKILL)
    await asyncio.to_thread(daemon.proc.wait)
    await gone(pids)
