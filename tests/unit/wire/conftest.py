"""Connection tests over the in-memory transport run on a virtual clock (their request timers
fire at once); those over a real socket pair (`real_clock`) on an ordinary loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.polling import VirtualClockLoop


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_clock: run on an ordinary event loop, in real time")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    if item.get_closest_marker("real_clock"):
        return {"real-clock": asyncio.new_event_loop}
    return {"virtual-clock": VirtualClockLoop}
