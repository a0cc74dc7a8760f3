"""The session's helpers as the state sees them: small interfaces, and why they stay abstract.

Handlers and helpers take the concrete `SessionState` (`session/state.py`). The state holds its
helpers — the diagnostics puller, the linting, the server relay, the publishing, the client
registrations — but ranks below them: each helper imports the state it serves, so the state can
name a helper only by an interface, and these are those interfaces. `Session` assigns the real
helpers to them, and mypy checks that they match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend


class Puller(Protocol):
    def schedule(self, backend: Backend, uri: str, *, delay: float = 0.0) -> None: ...

    def schedule_all(self, backend: Backend) -> None: ...

    def busy(self, uri: str, backend: Backend | None = None) -> bool: ...

    def forget(self, uri: str) -> None: ...


class Linting(Protocol):
    @property
    def failures(self) -> list[str]: ...

    @property
    def scheduler(self) -> Any: ...

    def linters_for(self, uri: str, language_id: str | None = None) -> Any: ...

    def last_run(self, uri: str, linter: str) -> Any: ...

    def opened(self, uri: str, language_id: str | None = None) -> None: ...

    def changed(self, uri: str) -> None: ...

    def saved(self, uri: str) -> None: ...

    def closed(self, uri: str) -> None: ...

    def busy(self, uri: str) -> bool: ...

    async def aclose(self) -> None: ...


class ServerRelayState(Protocol):
    """What the client-side families read of the session's `relay.ServerRelay`."""

    progress_owners: dict[str, tuple[Backend, Any]]


class Publisher(Protocol):
    """The session's `families/diagnostics.Publishing`: diagnostics on their way to the client."""

    def publish_from(self, backend: Backend, params: dict[str, Any]) -> None: ...

    def clear(self, uri: str) -> None: ...

    def publish(self, uri: str) -> None: ...

    def resync_document(self, backend: Backend, uri: str) -> None: ...


class Registrations(Protocol):
    def sync(self, backend: Backend) -> None: ...
