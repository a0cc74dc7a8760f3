"""What the client sends: every request answered exactly once, every message handled in order.

`ClientDispatch` receives the client connection's requests and notifications and looks each
method up in the method table (`CLIENT_REQUESTS`, `CLIENT_NOTIFICATIONS`):

- **Answer once.** A request gets its `Exchange` before anything is awaited; whatever happens
  after — an answer, an error, a cancellation, an exception anywhere in lspmux — answers it
  through that exchange, and only the first answer is sent. Lifecycle errors
  (`ServerNotInitialized` before `initialize`, `InvalidRequest` after `shutdown`) and malformed
  params (`InvalidParams`) are answered at once.
- **In order.** A request that must wait (for its servers to start, for a Locate lookup) holds
  back the client's later messages for the same document (for a Locate lookup, all later
  messages) until it has been forwarded; they are then handled in arrival order. So a position
  is always sent against the text the client had when it asked.
- Local methods (lifecycle, `locate/*`, pulled diagnostics, `lspmux/*`) are served by the
  handlers the table names; everything else is forwarded by its route's policy
  (`forward.dispatch`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lspmux.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    RequestCancelled,
    ServerCancelled,
    ServerNotInitialized,
)
from lspmux.routing import methods as lsp
from lspmux.routing.table import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS, Route
from lspmux.session import forward, sync
from lspmux.session.exchange import NOT_READING, Exchange
from lspmux.session.host import SessionHost
from lspmux.session.linting import diagnostic_status, wait_settled
from lspmux.uris import file_path
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

#: Holds every later message (a Locate lookup may concern any document).
_ALL = "*"


class Lifecycle(Protocol):
    """What dispatch needs of the session's lifecycle (the Session implements it)."""

    def initialize(self, params: dict[str, Any]) -> Any: ...

    def shutdown(self) -> Awaitable[None]: ...

    def exit(self) -> None: ...


class ClientDispatch:
    def __init__(self, session: SessionHost, lifecycle: Lifecycle) -> None:
        self.session = session
        self.lifecycle = lifecycle
        #: uri (or `_ALL`) → messages waiting behind a request for it, in arrival order.
        self._held: dict[str, deque[Message]] = {}

    # -- from the connection ------------------------------------------------------------------

    def on_message(self, msg: Message) -> None:
        held = self._held
        if held and self._hold(msg):
            return
        if "id" in msg:
            self._request(msg)
        else:
            self._notification(msg)

    def _hold(self, msg: Message) -> bool:
        """Queue `msg` behind a waiting request when it must not overtake it."""
        method = msg["method"]
        if method in (lsp.CANCEL_REQUEST, lsp.EXIT):
            return False  # a cancel must reach the request it cancels; exit ends everything
        queue = self._held.get(_ALL)
        if queue is None:
            uri = uri_of(msg.get("params"))
            queue = self._held.get(uri) if uri is not None else None
        if queue is None:
            return False
        queue.append(msg)
        return True

    def _start_holding(self, key: str) -> None:
        self._held.setdefault(key, deque())

    def _release(self, key: str) -> None:
        queue = self._held.pop(key, None)
        while queue:
            self.on_message(queue.popleft())
            if key in self._held:  # that message waits too: the rest queue behind it
                self._held[key].extend(queue)
                return

    # -- requests -----------------------------------------------------------------------------

    def _request(self, msg: Message) -> None:
        session = self.session
        method: str = msg["method"]
        ex = Exchange(session, msg)
        try:
            route = CLIENT_REQUESTS.get(method)
            if method != lsp.INITIALIZE and session.state == "new":
                raise ServerNotInitialized("lspmux: initialize first")
            if session.state != "running" and method != lsp.INITIALIZE:
                raise InvalidRequest(f"{method} after shutdown")
            params = msg.get("params")
            if route is not None and route.handler is not None:
                self._local(ex, route.handler)
                return
            problem = params_problem(route, params)
            if problem is not None:
                raise InvalidParams(f"{method}: {problem}")
            if isinstance(params, dict) and "locate" in params and route is not None:
                self._start_holding(_ALL)
                session.spawn(self._answer(ex, self._with_locate(ex, route), release=_ALL))
                return
            self._route(ex, route)
        except JsonRpcError as exc:
            ex.reply_error(exc)
        except Exception as exc:
            log.exception("%s: %s failed", session.client_id, method)
            ex.reply_error(InternalError(f"lspmux: {method} failed: {exc}"))

    def _local(self, ex: Exchange, handler_name: str) -> None:
        handler = LOCAL_REQUESTS[handler_name]
        result = handler(self, ex)
        if not isinstance(result, Awaitable):
            ex.reply(result)
        elif ex.method == lsp.INITIALIZE:  # nothing may overtake the initialize answer
            self._start_holding(_ALL)
            self.session.spawn(self._answer(ex, result, release=_ALL))
        else:
            self.session.spawn(self._answer(ex, result))

    async def _answer(
        self, ex: Exchange, work: Awaitable[Any], *, release: str | None = None
    ) -> None:
        """Run `work` and answer `ex` with its value — or with the error it raised; a request
        is never left without an answer."""
        try:
            value = await work
        except JsonRpcError as exc:
            ex.reply_error(exc)
        except asyncio.CancelledError:
            ex.reply_error(RequestCancelled(f"{ex.method} was cancelled"))
            raise
        except Exception as exc:
            log.exception("%s: %s failed", self.session.client_id, ex.method)
            ex.reply_error(InternalError(f"lspmux: {ex.method} failed: {exc}"))
        else:
            if value is not _FORWARDED:
                ex.reply(value)
        finally:
            if release is not None:
                self._release(release)

    def _route(self, ex: Exchange, route: Route | None) -> None:
        session = self.session
        if ex.answered:
            return  # cancelled while it waited
        if session.congested():  # read with the requests before it stopped being read
            ex.reply_error(ServerCancelled(NOT_READING))
            return
        uri = uri_of(ex.params)
        backends = session.backends_for(uri) if uri else list(session.backends)
        if all(b.state == "running" for b in backends):
            forward.dispatch(ex, route, backends)
            return
        if uri is not None:
            self._start_holding(uri)
        session.spawn(self._answer(ex, self._when_running(ex, route, backends), release=uri))

    async def _when_running(
        self, ex: Exchange, route: Route | None, backends: list[Backend]
    ) -> Any:
        up = await forward.ensure_running(backends)
        if not ex.answered:
            forward.dispatch(ex, route, up)
        return _FORWARDED

    async def _with_locate(self, ex: Exchange, route: Route) -> Any:
        from lspmux.locate import methods as locate_methods  # Locate loads at first use, not start

        wants: Literal["position", "range"] = "range" if route.range else "position"
        params = await locate_methods.rewrite_params(self.session, ex.params, wants=wants)  # type: ignore[arg-type]
        ex.params = params
        problem = params_problem(route, params)
        if problem is not None:
            raise InvalidParams(f"{ex.method}: {problem}")
        self._route(ex, route)
        return _FORWARDED

    # -- notifications ------------------------------------------------------------------------

    def _notification(self, msg: Message) -> None:
        session = self.session
        method: str = msg["method"]
        params = msg.get("params") or {}
        route = CLIENT_NOTIFICATIONS.get(method)
        if method == lsp.EXIT:
            self.lifecycle.exit()
            return
        if session.state != "running":
            return
        try:
            if route is not None and route.handler is not None:
                if params_problem(route, params, notification=True) is not None:
                    log.warning("%s: malformed %s ignored", session.client_id, method)
                    return
                document_sync = sync.HANDLERS.get(route.handler)
                if document_sync is not None:
                    document_sync(session, params)
                else:
                    LOCAL_NOTIFICATIONS[route.handler](self, params)
                return
            uri = uri_of(params)
            for backend in session.backends_for(uri) if uri else list(session.backends):
                backend.notify(method, params)
        except Exception:  # a bad notification must not take the session down
            log.exception("%s: handling %s failed", session.client_id, method)

    def _cancel(self, params: dict[str, Any]) -> None:
        ex = self.session.inflight.get(params.get("id"))
        if ex is not None:
            ex.cancel()  # tell every backend working on it
            ex.reply_error(RequestCancelled("cancelled by the client"))

    def _progress_cancel(self, params: dict[str, Any]) -> None:
        """The user cancelled a progress: only the server that created it hears of it, under
        the token it knows."""
        session = self.session
        owner = session.relay.progress_owner(params.get("token"))  # type: ignore[attr-defined]
        if owner is not None:
            backend, token = owner
            backend.notify(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL, {"token": token})
            return
        for backend in session.backends:  # a token the client created: whoever reports on it
            backend.notify(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL, params)


#: What `_answer` returns for work that forwarded the request (the answer comes from a backend).
_FORWARDED = object()


def uri_of(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    td = params.get("textDocument")
    if isinstance(td, dict):
        uri = td.get("uri")
        return uri if isinstance(uri, str) else None
    uri = params.get("uri")
    return uri if isinstance(uri, str) else None


def _is_position(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and type(value.get("line")) is int
        and type(value.get("character")) is int
    )


def params_problem(route: Route | None, params: Any, *, notification: bool = False) -> str | None:
    """What is wrong with a request's params as far as lspmux reads them, or None. A request
    with `locate` has its position or range filled in later, and is checked again then."""
    if params is None:
        if route is not None and (route.position or route.range or route.handler in _SYNC):
            return "params are missing"
        return None
    if not isinstance(params, dict):
        return None if route is None else "params must be an object"
    td = params.get("textDocument", _MISSING)
    if td is not _MISSING and not (isinstance(td, dict) and isinstance(td.get("uri"), str)):
        return "textDocument must be an object with a string uri"
    if route is None or "locate" in params:
        return None
    if route.handler in _SYNC and td is _MISSING:
        return "textDocument is missing"
    if route.position and not (td is not _MISSING and _is_position(params.get("position"))):
        return "expected textDocument and a position {line, character} of integers"
    if route.range:
        rng = params.get("range")
        if not (
            td is not _MISSING
            and isinstance(rng, dict)
            and _is_position(rng.get("start"))
            and _is_position(rng.get("end"))
        ):
            return "expected textDocument and a range {start, end} of positions"
    if route.handler == "did_open" and not (
        isinstance(td, dict) and isinstance(td.get("text"), str)
    ):
        return "textDocument.text must be a string"
    if route.handler == "did_change" and not isinstance(params.get("contentChanges"), list):
        return "contentChanges must be a list"
    return None


_MISSING = object()
_SYNC = frozenset(sync.HANDLERS)


# -- local request handlers (names from the table) ---------------------------------------------


def _initialize(d: ClientDispatch, ex: Exchange) -> Any:
    if d.session.state != "new":
        raise InvalidRequest("initialize was already received")
    params = ex.params if isinstance(ex.params, dict) else {}
    return d.lifecycle.initialize(params)


def _shutdown(d: ClientDispatch, ex: Exchange) -> Awaitable[None]:
    return d.lifecycle.shutdown()


async def _document_diagnostic(d: ClientDispatch, ex: Exchange) -> Any:
    """textDocument/diagnostic answered from the merged store (results of every source)."""
    session = d.session
    params = ex.params if isinstance(ex.params, dict) else {}
    uri = uri_of(params)
    if uri is None:
        raise InvalidParams("textDocument/diagnostic: textDocument.uri is missing")
    await wait_settled(session, uri)  # type: ignore[arg-type]
    result_id = session.store.result_id(uri)
    if params.get("previousResultId") == result_id:
        return {"kind": "unchanged", "resultId": result_id}
    return {"kind": "full", "resultId": result_id, "items": session.store.merged(uri)}


def _workspace_diagnostic(d: ClientDispatch, ex: Exchange) -> Any:
    return {"items": []}  # open documents' diagnostics come per document


def _locate_resolve(d: ClientDispatch, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods as locate_methods

    return locate_methods.resolve(d.session, ex.params or {})  # type: ignore[arg-type]


def _locate_resolve_range(d: ClientDispatch, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods as locate_methods

    return locate_methods.resolve_range(d.session, ex.params or {})  # type: ignore[arg-type]


def _locate_describe(d: ClientDispatch, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods as locate_methods

    return locate_methods.describe(d.session, ex.params or {})  # type: ignore[arg-type]


def _diagnostic_status(d: ClientDispatch, ex: Exchange) -> Awaitable[Any]:
    return diagnostic_status(d.session, {"params": ex.params})  # type: ignore[arg-type]


LocalRequest = Callable[[ClientDispatch, Exchange], Any]
LocalNotification = Callable[[ClientDispatch, dict[str, Any]], None]

#: The handlers the table's client→server `handler` names stand for.
LOCAL_REQUESTS: dict[str, LocalRequest] = {
    "initialize": _initialize,
    "shutdown": _shutdown,
    "document_diagnostic": _document_diagnostic,
    "workspace_diagnostic": _workspace_diagnostic,
    "locate_resolve": _locate_resolve,
    "locate_resolve_range": _locate_resolve_range,
    "locate_describe": _locate_describe,
    "diagnostic_status": _diagnostic_status,
}


def _did_change_watched_files(d: ClientDispatch, params: dict[str, Any]) -> None:
    """The client's file events, to each backend whose watchers asked for them."""
    for backend, own in d.session.files.from_client(params).items():
        backend.notify(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, own)


def _folder_uris(folders: Any) -> list[str]:
    if not isinstance(folders, list):
        return []
    return [f["uri"] for f in folders if isinstance(f, dict) and isinstance(f.get("uri"), str)]


def _did_change_workspace_folders(d: ClientDispatch, params: dict[str, Any]) -> None:
    """The client's workspace folders kept current (they bound the roots of the files opened
    next, and the file watcher's reach), and the change passed on to every backend."""
    session = d.session
    event = params.get("event")
    event = event if isinstance(event, dict) else {}
    removed = set(_folder_uris(event.get("removed")))
    added = _folder_uris(event.get("added"))
    kept = [r for r in session.roots if r.as_uri() not in removed]
    folders = [Path(p) for p in map(file_path, added) if p is not None]
    session.roots = kept + [p for p in folders if p not in kept]
    for uri in added:
        session.files.add_root(uri)
    for backend in list(session.backends):
        backend.notify(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, params)


LOCAL_NOTIFICATIONS: dict[str, LocalNotification] = {
    "did_change_watched_files": _did_change_watched_files,
    "did_change_workspace_folders": _did_change_workspace_folders,
    "initialized": lambda _d, _p: None,
    "exit": lambda d, _p: d.lifecycle.exit(),
    "cancel": ClientDispatch._cancel,
    "progress_cancel": ClientDispatch._progress_cancel,
}
