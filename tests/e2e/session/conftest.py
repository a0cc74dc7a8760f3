"""The session unit tests' fixtures (private capability cache, every in-memory session closed
and so checked), for the session tests that also start processes (linters, the fit worker)."""

from __future__ import annotations

from tests.unit.session.conftest import memory_sessions_are_checked, private_cache

__all__ = ["memory_sessions_are_checked", "private_cache"]
