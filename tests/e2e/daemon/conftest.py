"""The unit tests' in-process daemon fixture, for the daemon tests that also start processes."""

from __future__ import annotations

from tests.unit.daemon.conftest import running

__all__ = ["running"]
