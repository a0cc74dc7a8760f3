"""One client connection: its lifecycle, its documents, its view of diagnostics, and the
dispatch of everything it sends.

initialize → initialized → … → shutdown → exit. Requests before `initialize` get
ServerNotInitialized, after `shutdown` InvalidRequest; every request gets exactly one answer.
Documents are mirrored (`Documents`) and synchronised to the backends whose file types match;
backends start when the first matching file opens. Server messages arrive from the pool:
diagnostics are merged per source into one set per file, progress and prompts are forwarded,
server→client requests are answered by the client (or by lspmux when the client cannot).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types as t

from lspmux import __version__
from lspmux.backends import capabilities as caps
from lspmux.backends.backend import Backend
from lspmux.backends.pool import Pool
from lspmux.config.model import Config
from lspmux.diagnostics.pull import DEBOUNCE, Puller
from lspmux.diagnostics.store import DiagnosticStore
from lspmux.errors import (
    InternalError,
    InvalidRequest,
    JsonRpcError,
    RequestCancelled,
    RequestFailed,
    ServerNotInitialized,
)
from lspmux.locate import methods as locate_methods
from lspmux.routing.table import (
    LOCAL_METHODS,
    LOCATE_DESCRIBE,
    LOCATE_RESOLVE,
    LOCATE_RESOLVE_RANGE,
    ROUTES,
    Policy,
    Route,
)
from lspmux.session import forward, linting
from lspmux.session.documents import Documents, uri_to_path
from lspmux.session.linting import SessionLinting, wait_settled
from lspmux.text import Encoding
from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message, decode

log = logging.getLogger("lspmux.session")

ConfigLoader = Callable[[Path | None], Config]
LocalHandler = Callable[["Session", Message], Awaitable[Any]]

#: Handlers of lspmux's own methods (Locate, …), registered by their modules.
LOCAL_HANDLERS: dict[str, LocalHandler] = {}


class Session:
    def __init__(
        self,
        pool: Pool,
        load_config: ConfigLoader,
        *,
        client_id: str = "client",
        on_shutdown: Callable[[Session], Awaitable[None]] | None = None,
        on_exit: Callable[[Session, int], None] | None = None,
    ) -> None:
        self.pool = pool
        self.load_config = load_config
        self.client_id = client_id
        self.on_shutdown = on_shutdown
        self.on_exit = on_exit
        self.conn: Connection | None = None
        self.state = "new"  # new | running | shutdown | closed
        self.encoding: Encoding = "utf-16"
        self.documents = Documents(self.encoding)
        self.store = DiagnosticStore()
        self.puller = Puller(self)
        self.linting = SessionLinting(self)
        self.config: Config = Config()
        self.client_capabilities: dict[str, Any] = {}
        self.roots: list[Path] = []
        self.last_active = time.monotonic()
        self.inflight: dict[Any, forward.Exchange] = {}
        self.last_origin: dict[str, int] = {}
        self.backends: list[Backend] = []  # attached, index = origin id
        self._origin: dict[Backend, int] = {}
        self._uri_backends: dict[str, list[Backend]] = {}
        self._progress_tokens: dict[tuple[int, Any], str] = {}
        self._progress_owner: dict[str, tuple[Backend, Any]] = {}  # client token → origin
        #: (backend, uri) → the version of this session's text the backend last diagnosed
        #: for it, or was last re-sent (see `resync_document`).
        self._synced_for: dict[tuple[int, str], int] = {}
        self._missing: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shutdown_task: asyncio.Future[None] | None = None

    # -- wiring ---------------------------------------------------------------------------------

    def connection(self, name: str | None = None, **kwargs: Any) -> Connection:
        """A `Connection` whose messages this session handles."""
        self.conn = Connection(
            name or self.client_id,
            on_request=self.on_request,
            on_notification=self.on_notification,
            on_close=self._on_close,
            **kwargs,
        )
        return self.conn

    def conn_send(self, msg: Message) -> None:
        if self.conn is not None:
            self.conn.send(msg)

    def conn_send_raw_response(self, body: bytes, offset: int, new_id: Any) -> None:
        """Relay a backend's sniffed response under the client's id, without copying it."""
        if self.conn is not None:
            self.conn.send_raw_response(body, offset, new_id)

    def conn_send_raw(self, body: bytes) -> None:
        if self.conn is not None:
            self.conn.send_raw(body)

    @staticmethod
    def decode_body(body: bytes) -> Message:
        return decode(body)

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: task failed", self.client_id, exc_info=task.exception())

    # -- backends of this session ---------------------------------------------------------------

    def origin_of(self, backend: Backend) -> int:
        origin = self._origin.get(backend)
        if origin is None:
            origin = self._origin[backend] = len(self.backends)
            self.backends.append(backend)
            self.pool.attach(backend, self)
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
        path = uri_to_path(uri)
        found = []
        for server in self.config.servers_for(path, language_id):
            root = server.find_root(path)
            backend = self.pool.get(server, root)
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

    # -- incoming requests ------------------------------------------------------------------------

    def on_request(self, msg: Message) -> None:
        self.last_active = time.monotonic()
        method: str = msg["method"]
        msg_id = msg["id"]
        if method == t.INITIALIZE:
            self._initialize(msg)
            return
        if self.state == "new":
            self.conn_send(_err(msg_id, ServerNotInitialized("lspmux: initialize first")))
            return
        if self.state != "running":
            self.conn_send(_err(msg_id, InvalidRequest(f"{method} after shutdown")))
            return
        if method == t.SHUTDOWN:
            self._shutdown_task = asyncio.ensure_future(self._shutdown(msg_id))
            return
        local = LOCAL_HANDLERS.get(method)
        if local is not None:
            self.spawn(self._run_local(local, msg))
            return
        route = ROUTES.get(method)
        params = msg.get("params")
        if isinstance(params, dict) and "locate" in params and route is not None:
            self.spawn(self._with_locate(msg, route))
            return
        self._route(msg, route)

    def _route(self, msg: Message, route: Route | None) -> None:
        params = msg.get("params")
        uri = _uri_of(params)
        if route is not None and route.policy is Policy.DIAGNOSTICS:
            self.spawn(self._run_local(_pull_diagnostics, msg))
            return
        backends = self.backends_for(uri) if uri else list(self.backends)
        if all(b.state == "running" for b in backends):
            forward.dispatch(self, msg, route, backends)
        else:
            self.spawn(self._route_when_running(msg, route, backends))

    async def _route_when_running(
        self, msg: Message, route: Route | None, backends: list[Backend]
    ) -> None:
        up = await forward.ensure_running(backends)
        forward.dispatch(self, msg, route, up)

    async def _with_locate(self, msg: Message, route: Route) -> None:
        wants: Literal["position", "range"] = "range" if route.range else "position"
        try:
            params = await locate_methods.rewrite_params(self, msg["params"], wants=wants)
        except JsonRpcError as exc:
            self.conn_send(_err(msg["id"], exc))
            return
        self._route({**msg, "params": params}, route)

    async def _run_local(self, handler: LocalHandler, msg: Message) -> None:
        try:
            value = await handler(self, msg)
        except JsonRpcError as exc:
            self.conn_send(_err(msg["id"], exc))
        except Exception as exc:
            log.exception("%s: %s failed", self.client_id, msg["method"])
            self.conn_send(_err(msg["id"], InternalError(f"lspmux: {msg['method']} failed: {exc}")))
        else:
            self.conn_send({"jsonrpc": "2.0", "id": msg["id"], "result": value})

    def _initialize(self, msg: Message) -> None:
        if self.state != "new":
            self.conn_send(_err(msg["id"], InvalidRequest("initialize was already received")))
            return
        params = msg.get("params") or {}
        self.client_capabilities = params.get("capabilities") or {}
        self.roots = _roots(params)
        try:
            self.config = self.load_config(self.roots[0] if self.roots else None)
        except Exception as exc:  # a bad config file: say where, and what was expected
            log.error("%s: %s", self.client_id, exc)
            self.conn_send(_err(msg["id"], RequestFailed(f"lspmux configuration error: {exc}")))
            return
        if self.pool.client_capabilities is None and not self.pool.shared:
            self.pool.client_capabilities = self.client_capabilities
        available = [
            caps.load_cached(s.name)
            for s in self.config.servers.values()
            if not s.disabled
            and s.role == "server"
            and s.resolve_command(self.roots[0] if self.roots else None)
        ]
        server_caps = caps.merge_for_client(available)
        if self._client_pull_diagnostics():
            server_caps["diagnosticProvider"] = {
                "identifier": "lspmux",
                "interFileDependencies": True,
                "workspaceDiagnostics": False,
            }
        self.state = "running"
        self.conn_send(
            {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {
                    "capabilities": server_caps,
                    "serverInfo": {"name": "lspmux", "version": __version__},
                },
            }
        )

    def _client_pull_diagnostics(self) -> bool:
        td = self.client_capabilities.get("textDocument") or {}
        return "diagnostic" in td

    async def _shutdown(self, msg_id: Any) -> None:
        self.state = "shutdown"
        await self.release_backends()
        if self.on_shutdown is not None:
            await self.on_shutdown(self)
        self.conn_send({"jsonrpc": "2.0", "id": msg_id, "result": None})

    async def release_backends(self) -> None:
        await self.linting.aclose()  # kill linter runs first: they need no backend
        for doc in list(self.documents):
            for backend in self._uri_backends.get(doc.uri, []):
                backend.close_document(self, doc.uri)
        self.pool.detach(self)

    # -- incoming notifications ------------------------------------------------------------------

    def on_notification(self, msg: Message) -> None:
        self.last_active = time.monotonic()
        method: str = msg["method"]
        params = msg.get("params") or {}
        if method == t.EXIT:
            self._exit()
            return
        if method == t.INITIALIZED or self.state != "running":
            return
        handler = _NOTIFICATIONS.get(method)
        if handler is not None:
            handler(self, params)
            return
        uri = _uri_of(params)
        targets = self.backends_for(uri) if uri else list(self.backends)
        for backend in targets:
            backend.notify(method, params)

    def _cancel(self, params: dict[str, Any]) -> None:
        ex = self.inflight.get(params.get("id"))
        if ex is not None:
            ex.cancel()  # tell every backend working on it
            ex.reply_error(RequestCancelled("cancelled by the client"))

    def _progress_cancel(self, params: dict[str, Any]) -> None:
        """The user cancelled a progress: only the server that created it hears of it, under
        the token it knows."""
        owner = self._progress_owner.get(params.get("token"))  # type: ignore[arg-type]
        if owner is not None:
            backend, token = owner
            backend.notify(t.WINDOW_WORK_DONE_PROGRESS_CANCEL, {"token": token})
            return
        for backend in self.backends:  # a token the client created: whoever reports on it
            backend.notify(t.WINDOW_WORK_DONE_PROGRESS_CANCEL, params)

    def _did_open(self, params: dict[str, Any]) -> None:
        td = params["textDocument"]
        uri, lang, version, text = (
            td["uri"],
            td.get("languageId", ""),
            td.get("version", 0),
            td["text"],
        )
        self.documents.open(uri, lang, version, text)
        self.store.set_version(uri, version)
        self._uri_backends.pop(uri, None)
        for backend in self.backends_for(uri, lang):
            backend.open_document(self, uri, lang, version, text)
            if backend.state not in ("running", "starting", "failed"):
                self.spawn(backend.ensure_running())
            self.puller.schedule(backend, uri)
        self.linting.opened(uri, lang)

    def _did_change(self, params: dict[str, Any]) -> None:
        td = params["textDocument"]
        uri, version = td["uri"], td.get("version")
        doc = self.documents.get(uri)
        if doc is None:
            log.warning("%s: didChange for %s, which is not open; ignored", self.client_id, uri)
            return
        changes = params.get("contentChanges") or []
        doc.update(version if version is not None else doc.version + 1, changes, self.encoding)
        self.store.set_version(uri, doc.version)
        for backend in self.backends_for(uri):
            backend.change_document(self, uri, doc.version, changes)
            self.puller.schedule(backend, uri, delay=DEBOUNCE)
        self.linting.changed(uri)

    def _did_save(self, params: dict[str, Any]) -> None:
        uri = params["textDocument"]["uri"]
        text = params.get("text")  # else read from this session when a server wants it
        for backend in self.backends_for(uri):
            backend.save_document(uri, text, self)
            self.puller.schedule(backend, uri)
        self.linting.saved(uri)

    def _did_close(self, params: dict[str, Any]) -> None:
        uri = params["textDocument"]["uri"]
        self.documents.close(uri)
        for backend in self.backends_for(uri):
            backend.close_document(self, uri)
        self.store.forget(uri)
        self.puller.forget(uri)
        self.linting.closed(uri)
        self._uri_backends.pop(uri, None)

    def _exit(self) -> None:
        task = self._shutdown_task
        if task is not None and not task.done():  # exit right behind shutdown: finish it first
            task.add_done_callback(lambda _t: self._exit())
            return
        code = 0 if self.state == "shutdown" else 1
        if self.state == "running":  # exit without shutdown: give back what it holds
            self.spawn(self.release_backends())
        self.state = "closed"
        if self.conn is not None:
            self.conn.close(None)
        if self.on_exit is not None:
            self.on_exit(self, code)

    def _on_close(self, exc: BaseException | None) -> None:
        if self.state != "closed":
            log.info("%s: client disconnected", self.client_id)
            self.state = "closed"
            for ex in list(self.inflight.values()):
                ex.cancel()
            self.spawn(self.release_backends())
            if self.on_exit is not None:
                self.on_exit(self, 1)

    # -- from backends (through the pool) --------------------------------------------------------

    def backend_notification(self, backend: Backend, msg: Message) -> None:
        method = msg["method"]
        params = msg.get("params") or {}
        if method == t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            self.publish_from(backend, params)
            return
        if method == t.PROGRESS:
            token = self._progress_tokens.get((id(backend), params.get("token")))
            if token is not None:
                params = {**params, "token": token}
            elif self.pool.shared and not self._owns_token(params.get("token")):
                return  # progress of another client's request (shared pool)
            self.conn_send({"jsonrpc": "2.0", "method": method, "params": params})
            return
        if method == t.WINDOW_LOG_MESSAGE and isinstance(params.get("message"), str):
            params = {**params, "message": f"[{backend.name}] {params['message']}"}
        self.conn_send({"jsonrpc": "2.0", "method": method, "params": params})

    def _owns_token(self, token: Any) -> bool:
        """Whether one of this client's requests in flight carries this progress token."""
        return token is not None and any(
            isinstance(ex.params, dict)
            and token in (ex.params.get("workDoneToken"), ex.params.get("partialResultToken"))
            for ex in self.inflight.values()
        )

    def publish_from(self, backend: Backend, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        if not backend.config.feature_enabled("diagnostics"):
            return
        version = params.get("version")
        doc = self.documents.get(uri)
        if doc is not None and uri in backend.documents:
            mine = backend.holder_version(uri, self, version)
            if mine is None:
                return  # stale: the server has seen a newer text since
            if not backend.documents.holds(self, uri):
                self.resync_document(backend, uri)  # computed for another client's text
                return
            self._synced_for[(id(backend), uri)] = doc.version
            version = mine
        if self.store.update(uri, backend.name, params.get("diagnostics") or [], version):
            self.publish(uri)

    def resync_document(self, backend: Backend, uri: str) -> None:
        """A shared backend holds the text of the client that changed the document last, so a
        publish for another client's text is never shown here. When this session has no
        diagnostics from `backend` for its current text yet, its text is sent back, at most
        once per version of this session's document (two clients cannot ping-pong)."""
        doc = self.documents.get(uri)
        key = (id(backend), uri)
        if doc is None or self._synced_for.get(key) == doc.version:
            return
        self._synced_for[key] = doc.version
        log.debug("%s: re-sending %s to %s for its diagnostics", self.client_id, uri, backend.label)
        backend.resync(self, uri)

    def publish(self, uri: str) -> None:
        doc = self.documents.get(uri)
        out: dict[str, Any] = {"uri": uri, "diagnostics": self.store.merged(uri)}
        if doc is not None:
            out["version"] = doc.version
        self.conn_send(
            {"jsonrpc": "2.0", "method": t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "params": out}
        )

    def backend_request(self, backend: Backend, msg: Message, reply: Callable[[Any], None]) -> None:
        method = msg["method"]
        params = msg.get("params") or {}
        if method == t.WINDOW_WORK_DONE_PROGRESS_CREATE:
            reply(None)
            token = f"lspmux/{backend.name}/{params.get('token')}"
            self._progress_tokens[(id(backend), params.get("token"))] = token
            self._progress_owner[token] = (backend, params.get("token"))
            if (self.client_capabilities.get("window") or {}).get("workDoneProgress"):
                self._client_request(method, {"token": token}, lambda _r: None)
            return
        if method in (t.CLIENT_REGISTER_CAPABILITY, t.CLIENT_UNREGISTER_CAPABILITY):
            self.puller.schedule_all(backend)  # a pull provider may have been registered
            return
        if method == t.WORKSPACE_DIAGNOSTIC_REFRESH:
            reply(None)
            self.puller.schedule_all(backend)
            if ((self.client_capabilities.get("workspace") or {}).get("diagnostics") or {}).get(
                "refreshSupport"
            ):
                self._client_request(method, None, lambda _r: None)
            return
        if self.state != "running" or self.conn is None or self.conn.closed:
            reply(None)
            return

        def done(resp: Message) -> None:
            if "error" in resp:
                err = resp["error"] or {}
                exc = JsonRpcError(str(err.get("message")), err.get("data"))
                exc.CODE = int(err.get("code", -32603))
                reply(exc)
            else:
                reply(resp.get("result"))

        self._client_request(method, msg.get("params"), done)

    def _client_request(
        self, method: str, params: Any, callback: Callable[[Message], None]
    ) -> None:
        if self.conn is None:
            return
        self.conn.request(method, params, callback, timeout=None)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        if event == "started":
            self.puller.schedule_all(backend)
        elif event == "failed":
            self.conn_send(
                {
                    "jsonrpc": "2.0",
                    "method": t.WINDOW_SHOW_MESSAGE,
                    "params": {"type": 1, "message": detail},
                }
            )
        elif event == "restarting":
            self.conn_send(
                {
                    "jsonrpc": "2.0",
                    "method": t.WINDOW_LOG_MESSAGE,
                    "params": {
                        "type": 2,
                        "message": f"lspmux: {backend.name} {detail}; restarting",
                    },
                }
            )

    # -- Locate host ------------------------------------------------------------------------------

    def workspace_roots(self) -> list[Path]:
        return list(self.roots)

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        doc = self.documents.get(uri)
        return (doc.text, doc.version) if doc is not None else None

    async def document_symbols(self, uri: str, text: str, version: int | None) -> list[Any] | None:
        from lspmux.session.symbols import document_symbols

        return await document_symbols(self, uri, text, version)


async def _pull_diagnostics(session: Session, msg: Message) -> Any:
    """textDocument/diagnostic answered from the merged store (push results of every source)."""
    params = msg.get("params") or {}
    uri = _uri_of(params)
    if uri is None:
        return {"items": []}
    await wait_settled(session, uri)  # a linter run or backend pull for it may be in flight
    result_id = session.store.result_id(uri)
    if params.get("previousResultId") == result_id:
        return {"kind": "unchanged", "resultId": result_id}
    return {"kind": "full", "resultId": result_id, "items": session.store.merged(uri)}


async def _locate_resolve(session: Session, msg: Message) -> Any:
    return await locate_methods.resolve(session, msg.get("params") or {})


async def _locate_resolve_range(session: Session, msg: Message) -> Any:
    return await locate_methods.resolve_range(session, msg.get("params") or {})


async def _locate_describe(session: Session, msg: Message) -> Any:
    return await locate_methods.describe(session, msg.get("params") or {})


LOCAL_HANDLERS.update(
    {
        LOCATE_RESOLVE: _locate_resolve,
        LOCATE_RESOLVE_RANGE: _locate_resolve_range,
        LOCATE_DESCRIBE: _locate_describe,
    }
)

LOCAL_HANDLERS[linting.STATUS_METHOD] = linting.diagnostic_status

_NOTIFICATIONS: dict[str, Callable[[Session, dict[str, Any]], None]] = {
    t.CANCEL_REQUEST: Session._cancel,
    t.WINDOW_WORK_DONE_PROGRESS_CANCEL: Session._progress_cancel,
    t.TEXT_DOCUMENT_DID_OPEN: Session._did_open,
    t.TEXT_DOCUMENT_DID_CHANGE: Session._did_change,
    t.TEXT_DOCUMENT_DID_SAVE: Session._did_save,
    t.TEXT_DOCUMENT_DID_CLOSE: Session._did_close,
}
assert set(_NOTIFICATIONS) <= set(ROUTES) | LOCAL_METHODS


def _uri_of(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    td = params.get("textDocument")
    if isinstance(td, dict):
        uri = td.get("uri")
        return uri if isinstance(uri, str) else None
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None


def _roots(params: dict[str, Any]) -> list[Path]:
    roots: list[Path] = []
    for folder in params.get("workspaceFolders") or []:
        roots.append(Path(uri_to_path(folder["uri"])))
    if not roots and params.get("rootUri"):
        roots.append(Path(uri_to_path(params["rootUri"])))
    if not roots and params.get("rootPath"):
        roots.append(Path(params["rootPath"]))
    return roots


def _err(msg_id: Any, exc: JsonRpcError) -> Message:
    return {"jsonrpc": "2.0", "id": msg_id, "error": exc.to_response_error()}
