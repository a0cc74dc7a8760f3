"""The capability sets recorded from real servers (tests/data/capabilities/README.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).resolve().parents[2] / "data" / "capabilities"


def load_recorded(server: str) -> dict[str, Any]:
    """One server's record: `capabilities`, `registrations`, `serverInfo`, `sent`."""
    data: dict[str, Any] = json.loads((RECORDED / f"{server}.json").read_text())
    return data


@pytest.fixture
def recorded() -> Callable[[str], dict[str, Any]]:
    return load_recorded
