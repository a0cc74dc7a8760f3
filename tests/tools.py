"""Real tools a test needs, found on PATH (tests/conftest.py puts `.venv/bin` there).

Without the tool the test skips; under CI=true tests/conftest.py turns every skip into a
failure, so a tool that scripts/setup-tests failed to install never goes unnoticed.
"""

from __future__ import annotations

import shutil

import pytest


def require_tool(name: str) -> str:
    """The path of the executable `name` on PATH; the test skips without it."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not on PATH (scripts/setup-tests installs it)")
    return found
