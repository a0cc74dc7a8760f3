"""Session unit tests keep the capability cache in their own temporary folder, close (and so
check) every in-memory session they make, and run lspmux's registration timers at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lspmux.session import announce, forward

from .memory import MemorySession


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


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


@pytest.fixture(autouse=True)
def instant_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The waits lspmux makes for registrations that follow `initialized` are real-time
    constants; in memory the registrations are sent when a test sends them, so the timers fire
    at once (their code paths still run)."""
    monkeypatch.setattr(forward, "REGISTRATION_WAIT", 0.0)
    monkeypatch.setattr(announce, "REGISTRATION_GRACE", 0.0)
