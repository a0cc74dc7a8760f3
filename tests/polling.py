"""Waiting in tests: poll a condition with a deadline, never a bare sleep."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


async def eventually(
    probe: Callable[[], Any], what: str, *, timeout: float = 10, step: float = 0.05
) -> Any:
    """Poll `probe` until it returns something truthy, and return that; fail naming `what`
    (and the last value seen) when `timeout` seconds pass first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not seen within {timeout:g}s (last: {value!r})")
        await asyncio.sleep(step)
