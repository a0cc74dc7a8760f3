"""What the session's helpers need of a session, as Protocols.

The session (`session.py`) composes its helpers — client dispatch (`dispatch.py`), document
sync (`sync.py`), the server relay (`relay.py`), forwarding (`forward.py`), pulled diagnostics,
linters, Locate — and each helper depends only on these small interfaces, never on the
`Session` class itself. That keeps the import graph a tree: `session.py` imports its helpers,
the helpers import this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lspmux.config.model import Config
from lspmux.diagnostics.store import DiagnosticStore
from lspmux.routing.semantic_tokens import DeltaBridge
from lspmux.session.documents import Documents
from lspmux.session.exchange import ClientLink, Exchange
from lspmux.text import Encoding
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.capabilities import Announcement
    from lspmux.backends.pool import Pool
    from lspmux.workspace.files import FileWatching


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
    """The session's `publishing.Publishing`: diagnostics on their way to the client."""

    def publish_from(self, backend: Backend, params: dict[str, Any]) -> None: ...

    def clear(self, uri: str) -> None: ...


class Registrations(Protocol):
    def sync(self, backend: Backend) -> None: ...


class SessionHost(Protocol):
    """One client's state, as its helpers see it."""

    client_id: str
    state: str  # new | running | shutdown | closed
    last_active: float
    encoding: Encoding
    config: Config
    client_capabilities: dict[str, Any]
    roots: list[Path]
    #: The client's own `initializationOptions` (None when it sent none).
    initialization_options: Any
    documents: Documents
    store: DiagnosticStore
    inflight: dict[Any, Exchange]
    semantic: DeltaBridge
    announcement: Announcement | None
    announced: dict[str, Any]
    pull_diagnostics: bool
    files: FileWatching[Backend]

    @property
    def registrations(self) -> Registrations: ...

    last_origin: dict[str, int]
    backends: list[Backend]
    pool: Pool

    @property
    def puller(self) -> Puller: ...

    @property
    def linting(self) -> Linting: ...

    @property
    def link(self) -> ClientLink: ...

    def conn_send(self, msg: Message) -> None: ...

    def when_running(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the client got its `initialize` answer (or is gone)."""
        ...

    def body_of(self, params: Any) -> bytes | bytearray | None: ...

    def congested(self) -> bool: ...

    def spawn(self, coro: Awaitable[Any]) -> None: ...

    def origin_of(self, backend: Backend) -> int: ...

    def backend_by_origin(self, origin: int | None) -> Backend | None: ...

    def backends_for(self, uri: str, language_id: str | None = None) -> list[Backend]: ...

    def forget_backends_of(self, uri: str) -> None: ...

    def publish(self, uri: str) -> None: ...

    def resync_document(self, backend: Backend, uri: str) -> None: ...

    # -- lifecycle (families/lifecycle.py) and what the families reach through the session --

    @property
    def relay(self) -> ServerRelayState: ...

    def initialize(self, params: dict[str, Any]) -> Any: ...

    def shutdown(self) -> Awaitable[None]: ...

    def exit(self) -> None: ...

    @property
    def publishing(self) -> Publisher: ...

    def workspace_roots(self) -> list[Path]: ...

    async def document_symbols(
        self, uri: str, text: str, version: int | None
    ) -> list[Any] | None: ...

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        """This client's (text, version) of an open document: backends read it to re-send it."""
        ...
