"""Every unit test gets its own XDG cache, data and state folders, so that no test reads or
writes the user's (`~/.cache/lspmux/capabilities` was written by the daemon tests) and two
pytest-xdist workers (`make test-unit` runs two) never share a file. A test that needs a
particular folder sets its own over these."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lspmux import speedups


@pytest.fixture(autouse=True)
def private_xdg_folders(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    base = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(base / name.removeprefix("XDG_").lower()))
    return base


@pytest.fixture(scope="module")
def native() -> Any:
    """lspmux's built C extension (`lspmux/_speedups.c`): without it a test that takes this
    fixture fails in CI (tests/conftest.py), as any missing install step does."""
    if speedups.native is None:
        pytest.skip(f"lspmux's C speedups: {speedups.status}")
    return speedups.native
