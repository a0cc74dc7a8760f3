"""A daemon on a private Unix socket, started in-process for a test and stopped after it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from lspmux.config.loader import load_config
from lspmux.daemon.address import Address
from lspmux.daemon.server import Daemon


@pytest_asyncio.fixture
async def running() -> AsyncIterator[Daemon]:
    runtime = Path(tempfile.mkdtemp(prefix="lmxu-", dir="/tmp"))
    address = Address("unix", path=str(runtime / "lspmux" / "lspmux.sock"))
    daemon = Daemon(address, lambda _root: load_config(None, user_config=None))
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)
