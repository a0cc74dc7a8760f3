"""Real tools a test needs: skipped on a developer's machine without them, failed in CI.

CI (the `CI` environment variable set, as GitHub Actions and most services do) installs every
tool, so a missing one there is a broken set-up, never a reason to skip.
"""

from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """The path of the executable `name` on PATH; skip the test (fail it in CI) without it."""
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not on PATH (scripts/setup-tests installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found
