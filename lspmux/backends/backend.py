"""One language server instance for (server definition, workspace root).

Responsible for the server's whole life: spawn and `initialize` (then `initialized` and the
configured settings), the documents it holds (reference-counted per holder, replayed after a
restart), what it registered (`register`/`unregister`, called by the registrations family),
each server→client request answered exactly once (`ServerReply`), restart with backoff after a
crash (giving up after 5 crashes in 3 minutes), shutdown when idle, and a clean stop
(shutdown, exit, close stdin, then kill the process group).

Every server→client message goes to its `BackendHost`, the pool, which knows the sessions and
is given the routing (`Pool.dispatch`); a backend does not branch on a method's route.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from lspmux.backends import capabilities as caps
from lspmux.backends.client_caps import answered_encoding
from lspmux.backends.documents import BackendDocuments, DocumentHolder
from lspmux.backends.process import ServerProcess
from lspmux.config.model import ServerConfig
from lspmux.errors import JsonRpcError, RequestFailed
from lspmux.routing import methods as lsp
from lspmux.routing.route import Route
from lspmux.text import Encoding
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message, error
from lspmux.wire.requests import RawCallback, ResponseCallback

log = logging.getLogger("lspmux.backend")

CRASH_LIMIT = 5
CRASH_WINDOW = 180.0
INITIALIZE_TIMEOUT = 60.0
STOP_GRACE = 2.0

Reply = Callable[[Message], None]
#: How a server process is started: `ServerProcess.spawn`'s signature.
Spawn = Callable[..., Awaitable[ServerProcess]]


class BackendHost(Protocol):
    def server_request(self, backend: Backend, msg: Message, reply: Callable[[Any], None]) -> None:
        """A server→client request; `reply(result)` answers it, once (a `JsonRpcError`
        instance answers with an error)."""

    def server_notification(self, backend: Backend, msg: Message) -> None: ...

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        """ "started", "restarting", "failed", "stopped" (idle or asked)."""


class Backend:
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
        #: `$/progress` tokens it began and has not ended, and when it last sent a message of
        #: its own (see `silent`).
        self.published = False
        self._progress_open: set[Any] = set()
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

    # -- lifecycle ------------------------------------------------------------------------------

    async def ensure_running(self) -> bool:
        """Start the server if needed and wait until it is initialized; False if it cannot run."""
        self.last_used = time.monotonic()
        if self.state == "running":
            return True
        if self.state == "failed":
            return False
        if self._ready is None or (self._ready.done() and not self._ready.result()):
            if self._restart_task is not None and not self._restart_task.done():
                self._restart_task.cancel()
            self._ready = asyncio.get_running_loop().create_future()
            task = asyncio.ensure_future(self._start(self._ready))
            task.add_done_callback(_log_task_error)
        return await asyncio.shield(self._ready)

    async def _start(self, ready: asyncio.Future[bool]) -> None:
        self.state = "starting"
        self._stopping = False
        conn = Connection(
            self.label,
            on_request=self._on_request,
            on_notification=self._on_notification,
            reply_errors=False,
        )
        try:
            proc = await self.spawn(
                self.label,
                self.argv,
                cwd=self.root,
                env=dict(self.config.env),
                conn=conn,
                on_exit=functools.partial(self._on_exit, conn),
            )
        except OSError as exc:
            log.error("%s: cannot start %s: %s", self.label, self.argv[0], exc)
            self.last_failure = f"cannot start {self.argv[0]}: {exc}"
            self.state = "failed"
            self.failure = f"cannot start {self.argv[0]}: {exc}"
            self.host.backend_event(self, "failed", f"cannot start {self.argv[0]}: {exc}")
            _settle(ready, False)
            return
        self._conn, self._proc = conn, proc
        self._last_proc = proc
        root_uri = self.root.as_uri()
        params = {
            "processId": _pid(),
            "clientInfo": {"name": "lspmux", "version": _version()},
            "rootUri": root_uri,
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": root_uri, "name": self.root.name or str(self.root)}],
            "capabilities": self.client_capabilities,
            "trace": "off",
        }
        if self.initialization_options is not None:
            params["initializationOptions"] = self.initialization_options
        try:
            result = await conn.call(
                "initialize", params, timeout=max(self.config.request_timeout, INITIALIZE_TIMEOUT)
            )
        except Exception as exc:  # the server died or answered with an error
            log.error("%s: initialize failed: %s", self.label, exc)
            self.last_failure = self.last_failure or f"initialize failed: {exc}"
            _settle(ready, False)
            if not conn.closed:
                await self._terminate(proc, conn)
                self._crashed(f"initialize failed: {exc}")
            return
        self.capabilities = (result or {}).get("capabilities") or {}
        self._supports.clear()
        self.position_encoding = cast(Encoding, answered_encoding(result))
        self.server_info = (result or {}).get("serverInfo") or {}
        if self.initialize_result is None and isinstance(result, dict):
            self.initialize_result = result
        self.last_failure = None
        caps.store_cached(self.name, self.capabilities, self.registrations.values())
        conn.notify("initialized", {})
        if self.config.settings:
            conn.notify("workspace/didChangeConfiguration", {"settings": self.config.settings})
        replayed = self.documents.replay(conn.notify)
        self.state = "running"
        self.started_at = self.last_heard = time.monotonic()
        self.published = False
        self._progress_open = set()
        log.info(
            "%s: ready (%s %s), %d documents replayed",
            self.label,
            self.server_info.get("name", self.name),
            self.server_info.get("version", ""),
            replayed,
        )
        self._arm_idle_timer()
        self.host.backend_event(self, "started", "")
        _settle(ready, True)

    def _on_exit(self, conn: Connection, code: int | None) -> None:
        conn.close(None)
        if self._proc is not None:
            self._proc.kill_group_leftovers()
        if conn is not self._conn:
            return
        if self._stopping or self.state in ("stopping", "stopped"):
            return
        log.warning("%s: exited unexpectedly (code %s)", self.label, code)
        self._crashed(f"exited with code {code}")

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
            self.host.backend_event(self, "failed", msg)
            return
        delay = min(0.5 * 2 ** (len(self._crashes) - 1), 10.0)
        self.state = "stopped"
        self.restarts += 1
        log.warning("%s: restarting in %.2fs (%s)", self.label, delay, why)
        self.host.backend_event(self, "restarting", why)
        self._restart_task = asyncio.ensure_future(self._restart_later(delay))

    @property
    def stderr_tail(self) -> Sequence[str]:
        """The last lines of the latest process's stderr (kept after it exited)."""
        return tuple(getattr(self._last_proc, "stderr_tail", ()))

    async def start_failure(self, timeout: float = 1.0) -> str:
        """Why the server is not running, for a client: what failed, the last lines of its
        stderr (waited for up to `timeout`, as a dying server writes them last), and what to
        do about it."""
        why = self.last_failure or f"it is {self.state}"
        proc = self._last_proc
        last_stderr = getattr(proc, "last_stderr", None)  # an in-memory server has none
        lines = await last_stderr(timeout) if last_stderr is not None else []
        if proc is not None and "exited" not in why and await proc.wait(timeout):
            why = f"{why} (it exited with code {proc.returncode})"
        return start_failure_message(self.name, self.argv, why, lines)

    async def _restart_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.ensure_running()

    async def stop(self, reason: str = "shutdown") -> None:
        """Shut the server down properly: shutdown, exit, close stdin, then kill."""
        self._stopping = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if self._restart_task is not None:
            self._restart_task.cancel()
        proc, conn = self._proc, self._conn
        if self.state == "failed":
            pass
        else:
            self.state = "stopping"
        if proc is not None and conn is not None:
            await self._terminate(proc, conn)
        self._proc = self._conn = None
        self._ready = None
        if self.state != "failed":
            self.state = "stopped"
        self.host.backend_event(self, "stopped", reason)

    async def restart(self, reason: str = "reload") -> bool:
        """Stop the server and start it again with its documents replayed (`lspmux reload`);
        also gives a failed server a fresh start."""
        await self.stop(reason)
        self._crashes.clear()
        self.state = "stopped"
        return await self.ensure_running()

    async def _terminate(self, proc: ServerProcess, conn: Connection) -> None:
        if not conn.closed:
            with contextlib.suppress(Exception):
                await conn.call("shutdown", None, timeout=STOP_GRACE)
            conn.notify("exit")
        proc.close_stdin()  # Biome's lsp-proxy and tsc --lsp exit only when stdin closes
        if not await proc.wait(STOP_GRACE):
            log.warning("%s: did not exit after shutdown; killing it", self.label)
            proc.kill()
            await proc.wait(STOP_GRACE)
        proc.kill_group_leftovers()
        conn.close(None)

    def kill_now(self) -> None:
        """Last resort at interpreter exit: SIGKILL without ceremony."""
        self._stopping = True
        if self._proc is not None:
            self._proc.kill()

    def _arm_idle_timer(self) -> None:
        timeout = self.config.idle_timeout
        if timeout is None or timeout <= 0:
            return
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = asyncio.get_running_loop().call_later(timeout, self._check_idle)

    def _check_idle(self) -> None:
        timeout = self.config.idle_timeout or 0
        idle = time.monotonic() - self.last_used
        busy = self._conn is not None and self._conn.pending_count > 0
        if self.state == "running" and idle >= timeout and not busy:
            log.info("%s: unused for %.0fs; shutting it down until needed", self.label, idle)
            task = asyncio.ensure_future(self.stop("idle"))
            task.add_done_callback(_log_task_error)
        elif self.state == "running":
            remaining = max(timeout - idle, 0.05)
            self._idle_timer = asyncio.get_running_loop().call_later(remaining, self._check_idle)

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
        if self.state != "running" or self.published or self._progress_open:
            return False
        if "diagnosticProvider" in self.capabilities or any(
            method == lsp.TEXT_DOCUMENT_DIAGNOSTIC for method, _ in self.registrations.values()
        ):
            return False
        conn = self._conn
        if conn is None or conn.pending_count:
            return False
        now = time.monotonic()
        started = self.started_at or now
        # A server just started may still be loading its project before it says anything.
        return now - started >= 3 * quiet and now - max(self.last_heard, self.last_used) >= quiet

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

    def client_settings_changed(self, params: Any) -> None:
        """The first client's `workspace/didChangeConfiguration`, passed on with the
        configured `settings` merged over the client's."""
        if self.config.settings and isinstance(params, dict):
            settings = caps.merge_init_options(params.get("settings"), self.config.settings)
            params = {**params, "settings": settings}
        self.notify("workspace/didChangeConfiguration", params)

    def _on_notification(self, msg: Message) -> None:
        self.last_heard = time.monotonic()
        method = msg["method"]
        if method == lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            self.published = True
        elif method == lsp.PROGRESS:
            params = msg.get("params")
            token = params.get("token") if isinstance(params, dict) else None
            value = params.get("value") if isinstance(params, dict) else None
            if isinstance(token, int | str) and isinstance(value, dict):
                if value.get("kind") == "begin":
                    self._progress_open.add(token)
                elif value.get("kind") == "end":
                    self._progress_open.discard(token)
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


def start_failure_message(name: str, argv: list[str], why: str, stderr: list[str]) -> str:
    """The error a client gets when its server cannot start: what failed, the server's own
    words (its last stderr lines), and what to do."""
    command = " ".join(argv)
    out = [f"lspmux: the language server {name} ({command}) could not start: {why}."]
    if stderr:
        out.append("Its stderr ended with:")
        out.extend(f"  {line}" for line in stderr[-10:])
    told = "\n".join(stderr)
    if "rustup" in told or "Unknown binary" in told:
        out.append(
            "This is rustup's proxy without the component: run `rustup component add "
            "rust-analyzer`, or point the server at a rust-analyzer binary."
        )
    out.append(
        f"Run `{command}` in a terminal to see it fail, fix or install the server (or name "
        "another one), then reconnect."
    )
    return "\n".join(out)


def _settle(fut: asyncio.Future[bool], value: bool) -> None:
    if not fut.done():
        fut.set_result(value)


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task failed", exc_info=task.exception())


def _pid() -> int:
    import os

    return os.getpid()


def _version() -> str:
    from lspmux import __version__

    return __version__
