"""Session unit tests run on a virtual clock (lspmux's timers fire at once: no test waits for
a retry or a timeout), keep the capability cache in their own temporary folder, and close (and
so check) every in-memory session they make."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.polling import VirtualClockLoop

from .memory import MemorySession


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    """Every async test here runs on a `VirtualClockLoop`."""
    return {"virtual-clock": VirtualClockLoop}


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture
async def mem(tmp_path: Path):  # type: ignore[no-untyped-def]
    """`mem(name=ScriptedServer(...), ...)`: an in-memory session with those servers, checked
    and closed at the test's end (every request answered exactly once, nothing left unread)."""
    sessions: list[MemorySession] = []

    def make(**servers: Any) -> MemorySession:
        s = MemorySession(tmp_path, servers)
        sessions.append(s)
        return s

    yield make
    for s in sessions:
        s.client.assert_answered_once()
        await s.close()


@pytest.fixture(autouse=True)
def memory_sessions_are_checked() -> Iterator[None]:
    """Every MemorySession a test makes must be closed, which checks it (`MemorySession.check`:
    every request answered exactly once, nothing left unread): a test cannot skip the check by
    forgetting it."""
    MemorySession.made.clear()
    yield
    left = [m for m in MemorySession.made if not m.closed]
    MemorySession.made.clear()
    assert not left, (
        f"{len(left)} MemorySession(s) never closed: `await m.close()` checks that every "
        "request was answered exactly once and nothing was left unread"
    )
