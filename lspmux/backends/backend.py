"""One language server instance for (server definition, workspace root).

Responsible for the server's whole life (the process's start, stop and restart are
`backends/lifecycle.py`'s `ServerLife`, its base): spawn and `initialize` (then `initialized`
and the configured settings), the documents it holds (reference-counted per holder, replayed after a
restart), what it registered (`register`/`unregister`, called by the registrations family),
each server→client request answered exactly once (`ServerReply`), restart with backoff after a
crash (giving up after 5 crashes in 3 minutes), shutdown when idle, and a clean stop
(shutdown, exit, close stdin, then kill the process group).

Every server→client message goes to its `BackendHost`, the pool, which knows the sessions and
is given the routing (`Pool.dispatch`); a backend does not branch on a method's route.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from lspmux.backends import capabilities as caps
from lspmux.backends.documents import BackendDocuments, DocumentHolder
from lspmux.backends.lifecycle import ServerLife, Spawn, _settle
from lspmux.backends.process import ServerProcess
from lspmux.config.model import ServerConfig
from lspmux.errors import JsonRpcError, RequestFailed
from lspmux.routing.capabilities import BY_KEY
from lspmux.routing.route import Route
from lspmux.text import Encoding
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message, error
from lspmux.wire.requests import RawCallback, Record, ResponseCallback

log = logging.getLogger("lspmux.backend")

CRASH_LIMIT = 5
CRASH_WINDOW = 180.0

Reply = Callable[[Message], None]


#: The method a server registers to be pulled for diagnostics (`diagnosticProvider`'s).
_PULL = BY_KEY["diagnosticProvider"][0]


class BackendHost(Protocol):
    def server_request(self, backend: Backend, msg: Message, reply: Callable[[Any], None]) -> None:
        """A server→client request; `reply(result)` answers it, once (a `JsonRpcError`
        instance answers with an error)."""

    def server_notification(self, backend: Backend, msg: Message) -> None: ...

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        """ "started", "restarting", "failed", "stopped" (idle or asked)."""


class Backend(ServerLife):
    def __init__(
        self,
        config: ServerConfig,
        root: Path,
        argv: list[str],
        *,
        host: BackendHost,
        client_capabilities: Mapping[str, Any] | None = None,
        spawn: Spawn | None = None,
        client_initialization_options: Any = None,
        position_encoding: str = "utf-16",
        pull_diagnostics: bool = False,
    ) -> None:
        self.config = config
        self.name = config.name
        self.root = root
        self.argv = argv
        self.host = host
        self.spawn = spawn or ServerProcess.spawn  # tests run servers in memory
        # what the server is told about its client (client_caps.for_backend) and the options
        # it starts with: the client's initializationOptions under the configured ones
        self.client_capabilities = caps.for_backend(
            client_capabilities,
            position_encoding=position_encoding,
            pull_diagnostics=pull_diagnostics,
        )
        self.initialization_options = caps.merge_init_options(
            client_initialization_options, config.initialization_options
        )
        #: Tells apart the instances of one server and root in labels ("#2", …; pool.py).
        self.variant = ""
        self.state = "stopped"  # stopped | starting | running | stopping | failed
        self._supports: dict[str, bool] = {}  # method → eligible (see `supports`)
        #: The encoding the server answered it uses (asked for UTF-16; a server may insist).
        self.position_encoding: Encoding = "utf-16"
        self.capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        #: The server's own first `initialize` answer, as it sent it (a transparent share,
        #: `--server-path`, gives it to every client).
        self.initialize_result: dict[str, Any] | None = None
        #: Why the last start or run ended badly (None while it runs well).
        self.last_failure: str | None = None
        self.registrations: dict[str, tuple[str, Any]] = {}  # id → (method, registerOptions)
        self.registered: set[str] = set()
        self.documents = BackendDocuments(self)
        self.started_at: float | None = None
        #: Since it started: whether it published diagnostics for any document, the
        #: `$/progress` tokens it began and has not ended (each with its title, last message
        #: and percentage, for `lspmux status`), and when it last sent a message of its own
        #: (see `silent`).
        self.published = False
        self.progress_open: dict[Any, dict[str, Any]] = {}
        self.last_heard = time.monotonic()
        self.last_used = time.monotonic()
        self.restarts = 0
        #: Why the server last failed to start or crashed (None: never), and the last lines
        #: of its stderr (the live process's until it is replaced: lines written while it
        #: died still arrive) — `lspmux/diagnosticStatus` reports both.
        self.failure: str | None = None
        self._crashes: list[float] = []
        self._proc: ServerProcess | None = None
        self._last_proc: ServerProcess | None = None  # kept after an exit, for its stderr
        self._conn: Connection | None = None
        self._ready: asyncio.Future[bool] | None = None
        self._idle_timer: asyncio.TimerHandle | None = None
        self._restart_task: asyncio.Task[None] | None = None
        self._stopping = False

    def __repr__(self) -> str:
        return f"<Backend {self.name} {self.root} {self.state}>"

    @property
    def label(self) -> str:
        return f"{self.name}[{self.root.name or self.root}]{self.variant}"

    @property
    def connected(self) -> bool:
        """Whether `notify` reaches the server now."""
        return self._conn is not None and self.state == "running"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self.state == "running" else None

    def _crashed(self, why: str) -> None:
        self.last_failure = why
        now = time.monotonic()
        self._crashes = [t for t in self._crashes if now - t < CRASH_WINDOW] + [now]
        self.failure = why
        self._conn = None
        self._proc = None
        if self._ready is not None and not self._ready.done():
            _settle(self._ready, False)
        self._ready = None  # the next ensure_running() starts a new process
        if len(self._crashes) >= CRASH_LIMIT:
            self.state = "failed"
            msg = (
                f"lspmux: {self.name} crashed {len(self._crashes)} times in "
                f"{int(CRASH_WINDOW / 60)} minutes ({why}); it will not be restarted. "
                f"Check its log, then reload (lspmux reload) or restart the editor."
            )
            log.error("%s: %s", self.label, msg)
            self._event("failed", msg)
            return
        delay = min(0.5 * 2 ** (len(self._crashes) - 1), 10.0)
        self.state = "stopped"
        self.restarts += 1
        log.warning("%s: restarting in %.2fs (%s)", self.label, delay, why)
        self._event("restarting", why)
        self._restart_task = asyncio.ensure_future(self._restart_later(delay))

    def _event(self, event: str, detail: str) -> None:
        self.host.backend_event(self, event, detail)

    # -- requests and notifications to the server ------------------------------------------------

    def supports(self, method: str, route: Route) -> bool:
        """Whether this server serves `method` here (feature allowed, capability static or
        registered); remembered per method until its capabilities or registrations change."""
        known = self._supports.get(method)
        if known is None:
            known = self._supports[method] = self.config.feature_enabled(
                route.feature
            ) and caps.supports(self.capabilities, self.registered, method, route)
        return known

    def request(
        self,
        method: str,
        params: Any,
        callback: ResponseCallback,
        *,
        raw: RawCallback | None = None,
    ) -> int | str | None:
        """Send a request (the server must be running); returns the id the server sees."""
        self.last_used = time.monotonic()
        conn = self._conn
        if conn is None or self.state != "running":
            callback(error(None, RequestFailed(f"{self.label} is not running ({self.state})")))
            return None
        return conn.request(method, params, callback, timeout=self.config.request_timeout, raw=raw)

    def forward(self, record: Record, params: Any) -> int | str | None:
        """`request()` for the session's fast lane: `record` is its own pending entry
        (`Connection.forward`); the id the server sees, None when it is not running."""
        self.last_used = time.monotonic()
        conn = self._conn
        if conn is None or self.state != "running":
            record.callback(
                error(None, RequestFailed(f"{self.label} is not running ({self.state})"))
            )
            return None
        return conn.forward(record, params, self.config.request_timeout)

    async def call(self, method: str, params: Any) -> Any:
        if not await self.ensure_running() or self._conn is None:
            raise RequestFailed(f"{self.label} is not running ({self.state})")
        self.last_used = time.monotonic()
        return await self._conn.call(method, params, timeout=self.config.request_timeout)

    def cancel(self, msg_id: int | str) -> None:
        if self._conn is not None:
            self._conn.cancel(msg_id)

    def notify(self, method: str, params: Any) -> None:
        self.last_used = time.monotonic()
        if self._conn is not None and self.connected:
            self._conn.notify(method, params)

    def notify_raw(self, body: bytes | bytearray) -> None:
        """Send a notification already encoded (a client's, relayed as it came)."""
        self.last_used = time.monotonic()
        if self._conn is not None and self.connected:
            self._conn.send_raw(body)

    # -- documents (reference-counted per holder; see backends/documents.py) -------------------

    def open_document(
        self,
        holder: DocumentHolder,
        uri: str,
        language_id: str,
        version: int,
        text: str,
        raw: bytes | bytearray | None = None,
    ) -> None:
        """`raw`: the client's didOpen message, sent as it is when it says what lspmux would."""
        self.documents.open(holder, uri, language_id, version, text, raw)

    def change_document(
        self, holder: DocumentHolder, uri: str, version: int, changes: list[dict[str, Any]]
    ) -> None:
        self.documents.change(holder, uri, version, changes)

    def save_document(
        self, uri: str, text: str | None, holder: DocumentHolder | None = None
    ) -> None:
        self.documents.save(uri, text, holder)

    def close_document(self, holder: object, uri: str) -> bool:
        return self.documents.close(holder, uri)

    def resync(self, holder: DocumentHolder, uri: str) -> bool:
        """Give the server `holder`'s text again if it holds another's (a shared document)."""
        return self.documents.ensure_holds(holder, uri)

    def holder_version(self, uri: str, holder: object, server_version: int | None) -> int | None:
        return self.documents.holder_version(uri, holder, server_version)

    # -- messages from the server ---------------------------------------------------------------

    def silent(self, quiet: float) -> bool:
        """Whether this server does not diagnose, as far as can be told: it offers no pull
        diagnostics, has published none for any document since it started, and is idle (no
        progress open, no request of ours unanswered, nothing sent to it and no message of its
        own for `quiet` seconds: a document it was just sent may still be analysed — and
        running for three times that: a cold server may be loading its project). Waiting for its diagnostics would wait for nothing; its files are still not
        checked by it (DESIGN 9: it is named as a source that did not report)."""
        if self.state != "running" or self.published or self.progress_open:
            return False
        if "diagnosticProvider" in self.capabilities or _PULL in self.registered:
            return False
        conn = self._conn
        if conn is None or conn.pending_count:
            return False
        now = time.monotonic()
        started = self.started_at or now
        # A server just started may still be loading its project before it says anything.
        return now - started >= 3 * quiet and now - max(self.last_heard, self.last_used) >= quiet

    def progress_now(self) -> dict[str, Any] | None:
        """The progress this server began last and has not ended (`title`, and `message`,
        `percentage` as last reported), None when none runs: `lspmux status` shows it."""
        return next(reversed(self.progress_open.values()), None)

    def _on_request(self, msg: Message) -> None:
        self.last_heard = time.monotonic()
        reply = ServerReply(self.label, self._conn, msg)
        if self._stopping or self.state == "stopping":
            reply(None)  # after shutdown, server→client requests get null (as helix does)
            return
        self.host.server_request(self, msg, reply)

    def register(self, registrations: Iterable[tuple[str, str, Any]]) -> None:
        """Record the server's registrations: (id, method, registerOptions)."""
        for reg_id, method, options in registrations:
            self.registrations[reg_id] = (method, options)
        self._registrations_changed()

    def unregister(self, ids: Iterable[str]) -> None:
        for reg_id in ids:
            self.registrations.pop(reg_id, None)
        self._registrations_changed()

    def _registrations_changed(self) -> None:
        self.registered = {m for m, _ in self.registrations.values()}
        self._supports.clear()

    def _on_notification(self, msg: Message) -> None:
        """A server's notification, to the pool; what is kept of it per server instance
        (`published`, `progress_open`) is kept by the family that owns its method, in the
        route's `instance` step (`families/diagnostics.py`, `families/progress.py`)."""
        self.last_heard = time.monotonic()
        self.host.server_notification(self, msg)


class ServerReply:
    """The one answer to one server→client request: the first call answers (a `JsonRpcError`
    answers with an error); a second is refused and logged, never sent (a server must get
    exactly one response per request)."""

    __slots__ = ("answered", "conn", "label", "method", "msg_id")

    def __init__(self, label: str, conn: Connection | None, msg: Message) -> None:
        self.label = label
        self.conn = conn
        self.method = msg["method"]
        self.msg_id = msg["id"]
        self.answered = False

    def __call__(self, value: Any) -> None:
        if self.answered:
            log.warning(
                "%s: %s (id %r) was already answered; a second answer is not sent",
                self.label,
                self.method,
                self.msg_id,
            )
            return
        self.answered = True
        conn = self.conn
        if conn is None or conn.closed:
            return
        if isinstance(value, JsonRpcError):
            conn.respond_error(self.msg_id, value)
        else:
            conn.respond(self.msg_id, value)
