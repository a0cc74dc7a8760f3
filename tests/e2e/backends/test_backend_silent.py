"""`Backend.silent`: a server that has diagnosed nothing since it started, once idle, is not
waited for (tests/servers/scripted.py in its `rename` mode never publishes)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.unit.backends.helpers import NullHost

SCRIPTED = Path(__file__).resolve().parents[2] / "servers" / "scripted.py"
QUIET = 0.1


async def _silent_within(backend: Backend, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if backend.silent(QUIET):
            return True
        await asyncio.sleep(0.02)
    return False


async def test_a_server_that_never_publishes_is_silent_once_idle(tmp_path: Path) -> None:
    argv = [sys.executable, str(SCRIPTED), "rename"]
    backend = Backend(ServerConfig(name="scripted", command=tuple(argv)), tmp_path, argv,
                      host=NullHost())  # fmt: skip
    try:
        assert await backend.ensure_running()
        assert not backend.silent(QUIET)  # just started: it may be loading its project
        assert await _silent_within(backend, 5)
        backend.notify("workspace/didChangeConfiguration", {"settings": {}})
        assert not backend.silent(QUIET)  # it was just told something: it may be working
        assert await _silent_within(backend, 5)

        begin = {"token": "t", "value": {"kind": "begin", "title": "indexing"}}
        backend._on_notification({"jsonrpc": "2.0", "method": "$/progress", "params": begin})
        backend.last_heard = 0.0
        assert not backend.silent(QUIET)  # its progress is open
        end = {"token": "t", "value": {"kind": "end"}}
        backend._on_notification({"jsonrpc": "2.0", "method": "$/progress", "params": end})
        assert await _silent_within(backend, 5)

        published = {"uri": "file:///x.fault", "diagnostics": []}
        backend._on_notification(
            {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": published}
        )
        backend.last_heard = 0.0
        assert not backend.silent(QUIET)  # it diagnoses: it is waited for
    finally:
        await backend.stop()
