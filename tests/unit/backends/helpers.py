"""Helpers for tests that start a real Backend."""

from __future__ import annotations

from typing import Any

from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.routing.table import SERVER_DISPATCH


class NullHost:
    """A backend's host with no client: server messages are routed by the method table in a
    pool without sessions (registrations recorded, configuration from the settings, anything
    for a client answered null)."""

    def __init__(self) -> None:
        self.pool = Pool(dispatch=SERVER_DISPATCH)

    def server_request(self, backend: Backend, msg: Any, reply: Any) -> None:
        self.pool.server_request(backend, msg, reply)

    def server_notification(self, backend: Backend, msg: Any) -> None:
        self.pool.server_notification(backend, msg)  # what a server instance keeps of it

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        pass
