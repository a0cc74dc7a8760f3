"""Fixtures of the real-editor tests: `harness`, one editor setup per test (see harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.editors.harness import EditorHarness, cleanup, prepare


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[EditorHarness]:
    setup = prepare(tmp_path)
    yield setup
    cleanup(setup)
