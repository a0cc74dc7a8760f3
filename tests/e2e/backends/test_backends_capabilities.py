"""A real server's first start announces what later starts read from the capability cache
(moved here from tests/unit/backends/test_backends_capabilities.py: it starts ruff)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lspmux.backends import capabilities as caps
from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.polling import eventually
from tests.unit.backends.helpers import NullHost


async def test_first_start_announces_what_the_hundredth_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an empty cache, starting the root's real servers during initialize (what the
    session does with `complete()`) gives the answer that later starts read from the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = ServerConfig(name="ruff", command=("ruff", "server"))
    argv = config.resolve_command(tmp_path)
    if argv is None:
        pytest.skip("ruff is not installed")
    backends: list[Backend] = []

    async def start(name: str) -> dict[str, Any] | None:
        backend = Backend(config, tmp_path, argv, host=NullHost())
        backends.append(backend)
        if not await backend.ensure_running():
            return None
        # ruff registers formatting right after `initialized`
        await eventually(lambda: backend.registrations, "ruff's registrations", timeout=5)
        served = caps.effective(backend.capabilities, backend.registrations.values())
        caps.store_cached(name, backend.capabilities, backend.registrations.values())
        return served

    try:
        first = caps.announce(["ruff"])
        assert first.missing == ("ruff",)
        first = await caps.complete(first, start, timeout=30)
        assert first.complete
        hundredth = caps.announce(["ruff"])
        assert hundredth.complete
        assert first.capabilities == hundredth.capabilities
        assert first.capabilities["documentFormattingProvider"] is True  # registered by ruff
    finally:
        for backend in backends:
            await backend.stop()
