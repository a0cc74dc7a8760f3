"""Real `lspmux client` processes started by a real LSP client (pytest-lsp, over pipes) against
a real `lspmux server`: the shim passes its stdin and stdout to the daemon, which serves them
itself (the shim then copies nothing); `LSPMUX_CLIENT_RELAY=1` keeps the copying; and the shim
killed ends its session at the daemon."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import psutil
import pytest
from lsprotocol import types as t

from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    daemon_fixture,
    wait_until,
)

pytestmark = pytest.mark.e2e


def shims() -> dict[int, psutil.Process]:
    """This test's `lspmux client` processes, by pid."""
    found = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if "client" in child.cmdline() and "lspmux" in child.cmdline():
                found[child.pid] = child
        except psutil.Error:
            pass
    return found


def fd_targets(pid: int, only: set[str] | None = None) -> set[str]:
    """What process `pid`'s descriptors (or those named in `only`) are: `pipe:[inode]`…"""
    found = set()
    for name in os.listdir(f"/proc/{pid}/fd"):
        if only is None or name in only:
            with contextlib.suppress(OSError):  # closed meanwhile
                found.add(os.readlink(f"/proc/{pid}/fd/{name}"))
    return found


async def test_the_daemon_serves_a_real_shims_stdio_unless_told_to_relay(
    daemon: DaemonUnderTest, workspace: Path
) -> None:
    await daemon.start()
    passed = await daemon.client(workspace)
    log = daemon.log.read_text(errors="replace")
    assert "client-1: serving its editor's stdin and stdout" in log
    [passing_shim] = shims().values()

    relayed = await daemon.client(workspace, env={**daemon.env, "LSPMUX_CLIENT_RELAY": "1"})
    # Both are served the same: a pull of app.py's diagnostics through the shared servers.
    for client in (passed, relayed):
        uri = client.open("app.py", "python")
        report = await client.client.text_document_diagnostic_async(
            t.DocumentDiagnosticParams(t.TextDocumentIdentifier(uri))
        )
        assert any("undefined_name" in d.message for d in report.items)
    log = daemon.log.read_text(errors="replace")
    assert "client-2: connected" in log and "client-2: serving" not in log
    # The shim's CPU: it copied nothing (it waited on its socket) while its session worked.
    assert passing_shim.cpu_times().user < 1.0

    # No server the daemon started holds the editor's pipes: they end with the session.
    pipes = fd_targets(passing_shim.pid, {"0", "1"})
    servers = daemon.process().children(recursive=True)
    assert servers
    for server in servers:
        assert not fd_targets(server.pid) & pipes, f"{server.name()} has the editor's pipes"

    # An editor killing its server kills the shim: the daemon ends that session alone.
    passing_shim.kill()
    await wait_until(
        lambda: "client-1: its lspmux client process ended" in daemon.log.read_text(),
        30,
        "the daemon to end the session of the killed shim",
    )
    await wait_until(lambda: len(daemon.status()["clients"]) == 1, 30, "one client left")
    uri = relayed.open("hello.c", "c")
    assert (
        await relayed.client.text_document_document_symbol_async(
            t.DocumentSymbolParams(t.TextDocumentIdentifier(uri))
        )
        is not None
    )
