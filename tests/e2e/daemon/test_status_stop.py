"""`lspmux status` for the daemon and the proxies, `lspmux stop`, the idle exit and the
hand-over to a new install: a real `lspmux server`, real `lspmux proxy` and `lspmux client`
processes, and the real basedpyright (a Python launcher whose node child holds the memory)
and ruff behind them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest

import lspmux
from lspmux.daemon.lifetime import IDLE_ENV
from tests.e2e.agent_harness import WORKSPACE, copy_project, mcp_client
from tests.e2e.conftest import Proxy, proxy_env
from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
    wait_until,
)


async def diagnosed(proxy: Proxy, uri: str) -> None:
    """Wait until basedpyright published for `uri` (its server runs and has its node child)."""
    await proxy.diagnostics_where(uri, lambda ds: any(d.source == "basedpyright" for d in ds))


async def diagnosed_client(daemon: DaemonUnderTest, workspace: Path) -> Proxy:
    """A started daemon and a client of it whose basedpyright has diagnosed app.py."""
    client = await daemon.client(workspace)
    await diagnosed(client, client.open("app.py", "python"))
    return client


async def leave(daemon: DaemonUnderTest, proxy: Proxy) -> None:
    """The client shuts its session down and exits, as an editor closing does."""
    await asyncio.wait_for(proxy.client.shutdown_session(), 20)
    # Its server process ends and its output closes at once: nothing else holds them (a
    # server the daemon started once inherited a passed stdio and held it for minutes).
    await asyncio.wait_for(proxy.client.stop(), 20)
    daemon.clients.remove(proxy)


def status_json(daemon: DaemonUnderTest, *connect: str) -> tuple[int, dict[str, Any], str]:
    out = daemon.run_cli("status", "--json", *connect)
    return out.returncode, (json.loads(out.stdout) if out.stdout.strip() else {}), out.stderr


def wait_exit(proc: subprocess.Popen[bytes] | psutil.Process, timeout: float) -> int | None:
    return proc.wait(timeout)


async def test_status_shows_the_daemon_and_a_proxy_with_tree_memory(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    await diagnosed_client(daemon, workspace)
    # A proxy of the same user (its own servers, on stdio), started in the daemon's runtime
    # folder: `lspmux status` must find it there and ask it.
    private = await daemon.client(workspace, command=("proxy",), connect=False)
    await diagnosed(private, private.open("app.py", "python"))

    code, status, err = status_json(daemon, "--connect", daemon.address)
    assert code == 0, err
    [instance] = [i for i in status["instances"] if i["server"] == "basedpyright"]
    assert instance["clients"] == ["client-1"]
    [proxy] = status["proxies"]
    assert proxy["pid"] == private.pid
    answer = proxy["status"]
    assert answer["pid"] == private.pid and answer["client"]["open_documents"] == 1
    servers = {i["server"]: i for i in answer["instances"]}
    assert {"basedpyright", "ruff"} <= set(servers)
    # Memory of the whole tree: basedpyright's launcher holds little, its node child the rest.
    for row in (instance, servers["basedpyright"]):
        launcher = psutil.Process(row["pid"])
        assert launcher.children(recursive=True), "basedpyright runs no child here"
        own = launcher.memory_info().rss
        assert row["rss"] > 2 * own, f"tree {row['rss']} vs the launcher's own {own}"
    assert servers["basedpyright"]["pid"] in {p.pid for p in private.descendants()}

    text = daemon.run_cli("status", "--connect", daemon.address)
    assert text.returncode == 0, text.stderr
    assert "PROGRESS" in text.stdout and "lspmux proxies: 1" in text.stdout
    assert f"basedpyright  {private.pid}" in text.stdout  # the proxy's server, with its proxy

    # The editor may ask its proxy the same question over LSP: the routing table answers it.
    asked = await private.raw_request("lspmux/status", {})
    assert asked["pid"] == private.pid
    assert {i["server"] for i in asked["instances"]} == set(servers)

    # A proxy that is gone leaves no row: killed, its record is found stale and removed.
    record = daemon.runtime / "lspmux" / "proxies" / f"{private.pid}.json"
    assert record.exists()
    children = private.descendants()
    psutil.Process(private.pid).send_signal(signal.SIGKILL)
    psutil.Process(private.pid).wait(10)
    for child in children:  # its servers are not ours to keep (its watchdog may be faster)
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    code, status, err = status_json(daemon, "--connect", daemon.address)
    assert code == 0 and status["proxies"] == [], err
    assert not record.exists() and not record.with_suffix(".sock").exists()
    daemon.clients.remove(private)


async def test_status_with_only_a_proxy_running(daemon: DaemonUnderTest, workspace: Path) -> None:
    private = await daemon.client(workspace, command=("proxy",), connect=False)
    private.open("app.py", "python")
    # Shown, but exit 1: `lspmux status` is a liveness check of the daemon (oh-my-pi's).
    code, status, err = status_json(daemon, "--connect", daemon.address)
    assert code == 1 and status["pid"] is None and "no daemon answers" in err
    assert [p["pid"] for p in status["proxies"]] == [private.pid]
    text = daemon.run_cli("status", "--connect", daemon.address)
    assert text.returncode == 1 and f"\n{private.pid} " in text.stdout
    await leave(daemon, private)
    # Its record left with it: nothing runs now, which is exit 1.
    assert not list((daemon.runtime / "lspmux" / "proxies").iterdir())
    out = daemon.run_cli("status", "--connect", daemon.address)
    assert out.returncode == 1 and "no daemon answers" in out.stderr


async def test_stop_shuts_the_servers_down_and_says_when_nothing_runs(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    await diagnosed_client(daemon, workspace)
    servers = daemon.process().children(recursive=True)
    assert any("basedpyright" in " ".join(p.cmdline()) for p in servers)
    out = daemon.run_cli("stop", "--connect", daemon.address)
    assert out.returncode == 0, out.stderr
    assert "stopped the lspmux daemon" in out.stdout
    # `stop` returned once everything was down: the servers already, the daemon about now.
    assert daemon.proc is not None
    assert await asyncio.to_thread(wait_exit, daemon.proc, 10) == 0
    assert not [p for p in servers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not daemon.socket.exists()
    again = daemon.run_cli("--connect", daemon.address, "stop")  # options first too
    assert again.returncode == 1 and "no daemon runs" in again.stderr


async def test_the_daemon_exits_when_idle(daemon: DaemonUnderTest, workspace: Path) -> None:
    config = daemon.config("instance_timeout = 0.5\n")
    await daemon.start("--config", str(config), "--idle-timeout", "1")
    client = await diagnosed_client(daemon, workspace)
    assert daemon.status()["idle_timeout"] == 1
    await leave(daemon, client)
    # Its instance is reaped after 0.5 s without clients, then the daemon is idle for 1 s.
    assert daemon.proc is not None
    assert await asyncio.to_thread(wait_exit, daemon.proc, 30) == 0
    assert not daemon.socket.exists()
    text = daemon.log.read_text()
    assert "idle timeout" in text and "shutting it down" in text


async def test_a_new_install_gets_a_new_daemon(
    daemon: DaemonUnderTest, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lspmux is upgraded under a running daemon: the next client is still served by it (it is
    already connected), later clients start the new version, and the old daemon leaves once
    its clients have."""
    site = tmp_path / "site"
    shutil.copytree(Path(lspmux.__file__).parent, site / "lspmux")
    daemon.env["PYTHONPATH"] = str(site)
    monkeypatch.chdir(tmp_path)  # `python -m lspmux` puts its folder first: not this checkout
    daemon.env["LSPMUX_IDLE_TIMEOUT"] = "60"  # the new daemon ends even if this test fails
    await daemon.start()
    first = await daemon.client(workspace)
    first.open("app.py", "python")
    assert daemon.status()["version"] == lspmux.__version__
    old = daemon.process()

    init = site / "lspmux" / "__init__.py"
    init.write_text(init.read_text().replace(lspmux.__version__, "99.0"))
    second = await daemon.client(workspace)  # reaches the old daemon, which hands over
    await wait_until(lambda: not daemon.socket.exists(), what="the old daemon's socket gone")
    assert old.is_running()
    third = await daemon.client(workspace)  # no daemon listens: its shim starts the new one
    status = daemon.status()
    assert status["version"] == "99.0" and status["pid"] != old.pid
    assert [c["id"] for c in status["clients"]] == ["client-1"]  # the new daemon's first

    for proxy in (first, second):  # the old daemon's clients leave: it exits
        await leave(daemon, proxy)
    assert await asyncio.to_thread(wait_exit, old, 30) == 0
    assert daemon.socket.exists()  # the new daemon's, left alone
    await leave(daemon, third)
    out = daemon.run_cli("stop", "--connect", daemon.address)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in daemon.log.read_text()


async def test_lspmux_mcp_leaves_no_daemon_running(tmp_path: Path) -> None:
    """`lspmux mcp` (not --private) starts a daemon for its session; once the agent is gone,
    the daemon's instances are reaped and it exits on its idle timeout."""
    root = copy_project(WORKSPACE, tmp_path)
    env = proxy_env(tmp_path)
    env[IDLE_ENV] = "1"  # handed to the daemon the shim starts
    config = Path(env["XDG_CONFIG_HOME"]) / "lspmux" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("instance_timeout = 0.5\n")
    async with mcp_client(root, env) as mcp:
        text, _ = await mcp.call("hover", at="app.py:4:7")
        assert "Greeter" in text
        lock = Path(env["XDG_RUNTIME_DIR"]) / "lspmux" / "lspmux.sock.pid"
        daemon = psutil.Process(int(lock.read_text()))
        assert "server" in daemon.cmdline()
    await asyncio.to_thread(daemon.wait, 30)  # not our child: psutil tells it has ended
    assert not daemon.is_running()
