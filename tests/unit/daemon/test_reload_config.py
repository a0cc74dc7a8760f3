"""`lspmux reload` reads the daemon's own configuration again (allow-list, instance_timeout),
after its answer: the answer never waits on the files (daemon/server.py `Daemon.reload`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lspmux.config.loader import load_config
from lspmux.config.model import Config
from lspmux.daemon.address import Address
from lspmux.daemon.server import Daemon
from lspmux.errors import RequestFailed


async def test_reload_reads_the_configuration_again_once_it_has_answered(tmp_path: Path) -> None:
    read: list[Config] = []

    def load(_root: Path | None) -> Config:
        read.append(load_config(None, user_config=None))
        return read[-1]

    daemon = Daemon(Address("unix", path=str(tmp_path / "lspmux.sock")), load)
    assert daemon.config is read[-1]
    with pytest.raises(RequestFailed, match="no instance"):  # nothing runs for that folder
        await daemon.reload(cwd=str(tmp_path))
    assert len(read) == 1  # the answer was given without reading the files
    await asyncio.sleep(0)  # the loop's next turn: before anything asked after the answer
    assert len(read) == 2 and daemon.config is read[-1]
