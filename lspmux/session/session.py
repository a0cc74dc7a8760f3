"""One client connection: its lifecycle, its state, and the helpers that serve it.

initialize → initialized → … → shutdown → exit. The client's state — the
connection, the negotiated position encoding, the open documents, the merged diagnostics, the
backends attached to it — is `SessionState` (`session/state.py`), which `Session` extends with
the lifecycle state machine and what a backend says to this client. Everything else is done by
its helpers, each taking the concrete `SessionState`:

- `dispatch.ClientDispatch`: what the client sends (answered once, handled in order), each
  method served by its route in `routing/table.py` (the families, `session/families/*`);
- `relay.ServerRelay`: what the backends say to this client (through the pool), each
  server message served by its route's handler;
- `forward`: one request to its backends by its route's policy;
- `families.diagnostics.Puller`, `linting.SessionLinting`: diagnostics pulled and linted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lspmux import __version__
from lspmux.backends import capabilities as caps
from lspmux.backends import client_caps
from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.backends.provided import effective
from lspmux.config.model import Config, ServerConfig
from lspmux.config.needs import roots_of
from lspmux.errors import RequestFailed
from lspmux.routing.table import SERVER_DISPATCH, SERVER_NOTIFICATIONS, SERVER_REQUESTS
from lspmux.session import announce, native
from lspmux.session.dispatch import ClientDispatch
from lspmux.session.families import lifecycle, registrations, relays
from lspmux.session.families.diagnostics import Publishing, Puller
from lspmux.session.families.sync import send_file_events
from lspmux.session.linting import SessionLinting
from lspmux.session.positions import session_encoding
from lspmux.session.relay import ServerRelay
from lspmux.session.state import SessionState
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message
from lspmux.workspace.files import FileWatching

log = logging.getLogger("lspmux.session")

ConfigLoader = Callable[[Path | None], Config]


class Session(SessionState):
    """One client connection: the state (`SessionState`), its helpers and its lifecycle."""

    relay: ServerRelay  # the concrete helper: the session calls more of it than the families

    def __init__(
        self,
        pool: Pool,
        load_config: ConfigLoader,
        *,
        client_id: str = "client",
        on_shutdown: Callable[[Session], Awaitable[None]] | None = None,
        on_exit: Callable[[Session, int], None] | None = None,
    ) -> None:
        super().__init__(pool, client_id, FileWatching(None, send_file_events))
        if pool.dispatch is None:  # the pool routes server messages by the method table
            pool.dispatch = SERVER_DISPATCH
        if pool.answer_lane is None:  # and reads its servers' plain answers in runs
            pool.answer_lane = native.answer_run
        self.load_config = load_config
        self.on_shutdown = on_shutdown
        self.on_exit = on_exit
        self._shutdown_task: asyncio.Future[None] | None = None
        self._exit_pending = False  # an `exit` waits for the shutdown before it (see exit)
        self.publishing = Publishing(self)
        self.puller = Puller(self)
        self.linting = SessionLinting(self)
        self.registrations = announce.ClientRegistrations(self)
        self.dispatch = ClientDispatch(self)
        self.relay = ServerRelay(self, lambda: self.conn)

    # -- wiring ---------------------------------------------------------------------------------

    def connection(self, name: str | None = None, **kwargs: Any) -> Connection:
        """A `Connection` whose messages this session handles."""
        self.conn = Connection(
            name or self.client_id,
            on_request=self.dispatch.on_message,
            on_notification=self.dispatch.on_message,
            on_close=self._on_close,
            on_eof=self._on_eof,
            on_congested=self.link.stop_work_at_servers,
            # Requests to the client get ids no client uses for its own requests: pygls drops
            # its own pending request when the server's request has the same id.
            id_prefix="lspmux-",
            **kwargs,
        )
        if native.available():
            self.conn.lane = native.RequestRun(self, self.dispatch, self.conn)
        return self.conn

    def attached(self, backend: Backend) -> None:
        registrations.attached(self.relay, backend)
        if backend.state == "running":  # else its start says it
            relays.ready(self.relay, backend)

    def tell(self, message: str, *, severity: int, shown: bool) -> None:
        relays.tell_client(self, message, severity=severity, shown=shown)

    # -- lifecycle (called by dispatch) -----------------------------------------------------------

    def initialize(self, params: dict[str, Any]) -> Any:
        """The `initialize` answer: what the configured servers really serve (a dict), or —
        when some server relevant to the workspace has never run here, so that no cache says
        what it serves — an awaitable of it, after starting those servers (bounded by
        `INITIAL_START`): the first start announces what the hundredth does."""
        self.client_capabilities = params.get("capabilities") or {}
        self.fits = {}
        self.roots = roots_of(params)
        root = self.roots[0] if self.roots else None
        try:
            self.config = self.load_config(root)
        except Exception as exc:  # a bad config file: say where, and what was expected
            log.error("%s: %s", self.client_id, exc)
            raise RequestFailed(f"lspmux configuration error: {exc}") from exc
        if self.config.trust_notice:  # said once per session, before anything runs
            self.tell(self.config.trust_notice, severity=2, shown=True)
        self.initialization_options = client_caps.init_options(params.get("initializationOptions"))
        if not self.pool.shared:
            if self.pool.client_capabilities is None:
                self.pool.client_capabilities = self.client_capabilities
            self.pool.initialization_options = self.initialization_options
        self.pull_diagnostics = lifecycle.pulls_diagnostics(self.client_capabilities)
        self.encoding = self.documents.encoding = session_encoding(self.client_capabilities)
        self.files = FileWatching(
            self.client_capabilities, send_file_events, [r.as_uri() for r in self.roots]
        )
        self.spawn(self.files.start())
        one = announce.one_server(self.config)
        if one is not None:
            return self._initialize_transparent(one, root or Path.cwd())
        announcement, wanted, others = announce.from_cache(self, root)
        if root is not None:  # the workspace's servers boot while the client opens a file
            self.when_running(lambda: announce.prestart(self, root))
        if not wanted:
            return self._initialized(announcement)
        return self._initialize_after_starting(announcement, wanted, others)

    async def _initialize_after_starting(
        self, announcement: caps.Announcement, wanted: dict[str, Path], others: bool
    ) -> Any:
        started = await announce.after_starting(self, announcement, wanted, others)
        return self._initialized(started)

    def _initialized(self, announcement: caps.Announcement) -> Any:
        self.announcement = announcement
        self.announced = announcement.capabilities
        self.state = "running"
        if self._when_running:  # after the answer, which is sent when this returns
            asyncio.get_running_loop().call_soon(self._run_when_running)
        return {
            "capabilities": self.announced,
            "serverInfo": {"name": "lspmux", "version": __version__},
        }

    async def _initialize_transparent(self, server: ServerConfig, root: Path) -> Any:
        """A transparent share: the one server started, and its own `initialize` answer given
        to the client (`announce.passed_through`)."""
        backend = await announce.start_one(self, server, root)
        # Attached once the answer is sent (nothing the server says may overtake it): then
        # requests without a document go to it.
        asyncio.get_running_loop().call_soon(self._attach_answered, backend)
        served = announce.allowed(
            server, effective(backend.capabilities, backend.registrations.values())
        )
        self.announcement = caps.announce(
            [server.name],
            pull_diagnostics=self.pull_diagnostics,
            position_encoding=self.encoding,
            load=lambda _name: served,
        )
        result, self.announced = announce.passed_through(self, server, backend)
        self.state = "running"
        if self._when_running:  # after the answer, which is sent when this returns
            asyncio.get_running_loop().call_soon(self._run_when_running)
        return result

    def _attach_answered(self, backend: Backend) -> None:
        if self.state == "running":
            self.origin_of(backend)

    def shutdown(self) -> Awaitable[None]:
        self.state = "shutdown"
        self._shutdown_task = asyncio.ensure_future(self._shutdown())
        return self._shutdown_task

    async def _shutdown(self) -> None:
        await self.release_backends()
        if self.on_shutdown is not None:
            await self.on_shutdown(self)

    async def release_backends(self) -> None:
        await self.files.stop()
        await self.linting.aclose()  # kill linter runs first: they need no backend
        for doc in list(self.documents):
            for backend in self._uri_backends.get(doc.uri, []):
                backend.close_document(self, doc.uri)
        self.pool.detach(self)

    def exit(self) -> None:
        task = self._shutdown_task
        if task is not None and not task.done():  # exit right behind shutdown: finish it first
            # …and its answer (sent by a task the same completion wakes): to the back of the queue
            self._exit_pending = True  # the session closes with exit's code, not the EOF's
            task.add_done_callback(lambda _t: asyncio.get_running_loop().call_soon(self.exit))
            return
        code = 0 if self.state == "shutdown" else 1
        if self.state == "running":  # exit without shutdown: give back what it holds
            self.spawn(self.release_backends())
        self.state = "closed"
        self.link.release()  # an end of input waiting on the answers closes now
        self._run_when_running()  # a server waiting on this client gets its answer now
        if self.conn is not None:
            self.conn.close(None)
        if self.on_exit is not None:
            self.on_exit(self, code)

    def _on_eof(self) -> None:
        """The client's input ended, its output is open (`lspmux proxy < requests > answers`):
        a `shutdown` and `exit` read with the end and the requests in flight are still answered."""
        self.spawn(self._close_when_answered())

    async def _close_when_answered(self, limit: float = 60.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        if self._shutdown_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._shutdown_task), limit)
            if self._shutdown_task.done() and self._exit_pending:  # not a count of loop turns,
                return  # which 3.12 changed: the exit behind the shutdown closes (see exit)
        if self.state != "closed":  # woken by the last answer, or by the session closing
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.link.all_answered(), deadline - loop.time())
        if self.conn is not None:
            self.conn.close(None)

    def _on_close(self, exc: BaseException | None) -> None:
        if self.state != "closed":
            log.info("%s: client disconnected", self.client_id)
            self.state = "closed"
            self.link.release()
            self._run_when_running()
            for ex in list(self.inflight.values()):
                ex.cancel()
            self.spawn(self.release_backends())
            if self.on_exit is not None:
                self.on_exit(self, 1)

    # -- from backends (through the pool) --------------------------------------------------------

    def backend_notification(self, backend: Backend, msg: Message) -> None:
        self.relay.notification(backend, msg, SERVER_NOTIFICATIONS.get(msg["method"]))

    def backend_request(self, backend: Backend, msg: Message, reply: Callable[[Any], None]) -> None:
        self.relay.request(SERVER_REQUESTS.get(msg["method"]), backend, msg, reply)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        registrations.backend_event(self.relay, backend, event)
        relays.backend_event(self.relay, backend, event, detail)

    async def document_symbols(self, uri: str, text: str, version: int | None) -> list[Any] | None:
        from lspmux.session.families.locate import document_symbols

        return await document_symbols(self, uri, text, version)
