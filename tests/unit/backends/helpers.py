"""Helpers for tests that start a real Backend."""

from __future__ import annotations

from typing import Any

from lspmux.backends.backend import Backend


class NullHost:
    """A backend's host with nothing to relay: server requests get null."""

    def server_request(self, backend: Backend, msg: Any, reply: Any) -> None:
        reply(None)

    def server_notification(self, backend: Backend, msg: Any) -> None:
        pass

    def client_configuration(self, backend: Backend, msg: Any, reply: Any) -> None:
        reply(None)  # no client: the configured settings answer

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        pass
