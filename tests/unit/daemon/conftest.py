"""A daemon on a private Unix socket, started in-process for a test and stopped after it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest_asyncio

from lspmux.config.loader import load_config
from lspmux.daemon.address import Address
from lspmux.daemon.commands import hosted_tools
from lspmux.daemon.server import Daemon, ToolsFactory


@asynccontextmanager
async def private_daemon(tools: ToolsFactory | None = None) -> AsyncIterator[Daemon]:
    """A daemon on `$XDG_RUNTIME_DIR/lspmux/lspmux.sock` of a fresh folder (its default
    socket when the runtime folder is that folder's)."""
    runtime = Path(tempfile.mkdtemp(prefix="lmxu-", dir="/tmp"))
    address = Address("unix", path=str(runtime / "lspmux" / "lspmux.sock"))
    daemon = Daemon(address, lambda _root: load_config(None, user_config=None), tools=tools)
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.close()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest_asyncio.fixture
async def running() -> AsyncIterator[Daemon]:
    async with private_daemon() as daemon:
        yield daemon


@pytest_asyncio.fixture
async def hosting() -> AsyncIterator[Daemon]:
    """A daemon that hosts the agent tools, as `lspmux server` does."""
    async with private_daemon(hosted_tools) as daemon:
        yield daemon
