"""A backend stopped while its server is still starting (a short-lived proxy: `lspmux locate`
without a daemon) says nothing failed: the server closing before it answered `initialize` is
the stop's doing, not an error for the user's log."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.unit.backends.helpers import NullHost

#: A server that reads its input and never answers: `initialize` waits until it is stopped.
SILENT = "import sys\nwhile sys.stdin.buffer.read(1): pass\n"


async def test_a_backend_stopped_before_initialize_answered_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    argv = [sys.executable, "-c", SILENT]
    config = ServerConfig(name="silent", command=tuple(argv))
    backend = Backend(config, tmp_path, argv, host=NullHost())
    caplog.set_level(logging.DEBUG, logger="lspmux")
    starting = asyncio.create_task(backend.ensure_running())
    while backend._conn is None:  # spawned, its initialize sent
        await asyncio.sleep(0.01)
    await backend.stop()
    assert await asyncio.wait_for(starting, 10) is False
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert "stopped before it answered initialize" in caplog.text
