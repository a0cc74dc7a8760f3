"""One client's state: what every handler of `session/families/*` is given.

`SessionState` is concrete: the lifecycle state, the negotiated encoding, the open documents,
the merged diagnostics, the backends attached (by origin), the client link and the
configuration — and the plain operations on them. Handlers and helpers take this one type, so
mypy checks what they read and call.

It ranks below the families and the helpers (`linting.py`, `relay.py`, the diagnostics
family's `Puller` and `Publishing`, …), which import it; `Session` (`session.py`) subclasses it, builds the
helpers on it and serves what needs the method table. So two kinds of member stay abstract here,
each for that reason:

- the helpers, typed by the small interfaces of `session/host.py` (they import this module, so
  naming their classes here would be an import cycle);
- the abstract methods below: the lifecycle (`initialize`, `shutdown`, `exit`), the document
  symbols Locate reads, what a backend says to this session, `attached` and `tell` (a message
  of lspmux's own, sent by the family of `window/*`) — served by `Session`, which imports the
  table and the families.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lspmux.config.model import Config
from lspmux.diagnostics.store import DiagnosticStore
from lspmux.routing import adapt
from lspmux.routing.semantic_tokens import DeltaBridge
from lspmux.session.documents import Documents
from lspmux.session.exchange import ClientLink
from lspmux.text import Encoding
from lspmux.uris import file_path
from lspmux.wire.messages import Message
from lspmux.workspace.files import FileWatching
from lspmux.workspace.roots import root_for

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.capabilities import Announcement
    from lspmux.backends.pool import Pool
    from lspmux.session.host import Linting, Publisher, Puller, Registrations, ServerRelayState
    from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.session")


class SessionState(abc.ABC):
    """One client's state and the plain operations on it (see the module docstring)."""

    # the helpers, built on this state by `Session` (`session/host.py` says why an interface)
    relay: ServerRelayState
    publishing: Publisher
    puller: Puller
    linting: Linting
    registrations: Registrations

    def __init__(self, pool: Pool, client_id: str, files: FileWatching[Backend]) -> None:
        self.pool = pool
        self.client_id = client_id
        #: The connection, the in-flight table and the sends (answers go through it alone).
        self.link = ClientLink()
        self.inflight = self.link.inflight
        self.state = "new"  # new | running | shutdown | closed
        self.last_active = time.monotonic()
        self.encoding: Encoding = "utf-16"
        self.documents = Documents(self.encoding)
        self.store = DiagnosticStore()
        self.config: Config = Config()
        self.client_capabilities: dict[str, Any] = {}
        self.fits: dict[str, bool] = {}  # `fitted`'s answers; emptied when the caps are set
        self.roots: list[Path] = []
        #: The client's own `initializationOptions` (None when it sent none): its servers start
        #: with them, under the configured ones; part of the instance key in the daemon.
        self.initialization_options: Any = None
        #: One copy of each diagnostic: pulled by a client that can be told to pull again
        #: (`workspace.diagnostics.refreshSupport`), pushed to every other client.
        self.pull_diagnostics = False
        #: What the `initialize` answer announced, and what is known of each server.
        self.announcement: Announcement | None = None
        self.announced: dict[str, Any] = {}  # what the client was told (initialize, registrations)
        self.semantic = DeltaBridge()  # semantic token deltas lspmux computes itself
        #: Servers' file watchers: relayed to the client, or watched here (set at initialize).
        self.files = files
        self.last_origin: dict[str, int] = {}
        self.backends: list[Backend] = []  # attached, index = origin id
        self._origin: dict[Backend, int] = {}
        self._uri_backends: dict[str, list[Backend]] = {}
        self._missing: set[str] = set()
        self._when_running: list[Callable[[], None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- the client link ------------------------------------------------------------------------

    @property
    def conn(self) -> Connection | None:
        return self.link.conn

    @conn.setter
    def conn(self, conn: Connection | None) -> None:
        self.link.conn = conn

    def conn_send(self, msg: Message) -> None:
        self.link.send(msg)

    def body_of(self, params: Any) -> bytes | bytearray | None:
        return self.link.body_of(params)

    def fitted(self, kind: str) -> bool:
        """Whether answers of fitting `kind` may hold something this client did not declare
        (`adapt.needs_adapting`): asked of every request, worked out once per kind."""
        known = self.fits.get(kind)
        if known is None:
            known = self.fits[kind] = adapt.needs_adapting(kind, self.client_capabilities)
        return known

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: task failed", self.client_id, exc_info=task.exception())

    def when_running(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the client got its `initialize` answer (or is gone)."""
        if self.state == "new":
            self._when_running.append(callback)
        else:
            callback()

    def _run_when_running(self) -> None:
        callbacks, self._when_running = self._when_running, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("%s: a deferred server request failed", self.client_id)

    # -- backends of this session ---------------------------------------------------------------

    def origin_of(self, backend: Backend) -> int:
        origin = self._origin.get(backend)
        if origin is None:
            origin = self._origin[backend] = len(self.backends)
            self.backends.append(backend)
            self.pool.attach(backend, self)
            self.attached(backend)
        return origin

    def backend_by_origin(self, origin: int | None) -> Backend | None:
        if origin is None or not 0 <= origin < len(self.backends):
            return None
        return self.backends[origin]

    def backends_for(self, uri: str, language_id: str | None = None) -> list[Backend]:
        """The backends for a file, in configuration order (created, not necessarily started)."""
        found = self._uri_backends.get(uri)
        if found is not None:
            return found
        path = file_path(uri) or uri  # untitled: and others match by name and language
        found = []
        for server in self.config.servers_for(path, language_id):
            backend = self.pool.get(server, root_for(server, path, self.roots), client=self)
            if backend is None:
                if server.name not in self._missing:
                    self._missing.add(server.name)
                    log.info(
                        "%s: %s is configured for %s but %r is not installed",
                        self.client_id,
                        server.name,
                        path,
                        server.command[0] if server.command else "",
                    )
                continue
            self.origin_of(backend)
            found.append(backend)
        self._uri_backends[uri] = found
        return found

    def forget_backends_of(self, uri: str) -> None:
        self._uri_backends.pop(uri, None)

    # -- documents ------------------------------------------------------------------------------

    def publish(self, uri: str) -> None:
        self.publishing.publish(uri)

    def resync_document(self, backend: Backend, uri: str) -> None:
        self.publishing.resync_document(backend, uri)

    def workspace_roots(self) -> list[Path]:
        return list(self.roots)

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        """This client's (text, version) of an open document: backends read it to re-send it."""
        doc = self.documents.get(uri)
        return (doc.text, doc.version) if doc is not None else None

    # -- served by `Session` (it imports the method table and the families) ----------------------

    @abc.abstractmethod
    def attached(self, backend: Backend) -> None:
        """A backend was attached to this session (it gets an origin id)."""

    @abc.abstractmethod
    def tell(self, message: str, *, severity: int, shown: bool) -> None:
        """A message of lspmux's own to the user: shown, or logged (`families/relays.py`)."""

    @abc.abstractmethod
    def initialize(self, params: dict[str, Any]) -> Any:
        """The `initialize` answer, or an awaitable of it."""

    @abc.abstractmethod
    def shutdown(self) -> Awaitable[None]: ...

    @abc.abstractmethod
    def exit(self) -> None: ...

    @abc.abstractmethod
    async def document_symbols(
        self, uri: str, text: str, version: int | None
    ) -> list[Any] | None: ...

    @abc.abstractmethod
    def backend_notification(self, backend: Backend, msg: Message) -> None: ...

    @abc.abstractmethod
    def backend_request(
        self, backend: Backend, msg: Message, reply: Callable[[Any], None]
    ) -> None: ...

    @abc.abstractmethod
    def backend_event(self, backend: Backend, event: str, detail: str) -> None: ...
