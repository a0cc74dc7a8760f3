"""What backends say to one client: server→client notifications and requests, through the pool.

Every server→client method is looked up in the method table (`SERVER_NOTIFICATIONS`,
`SERVER_REQUESTS`) and handled by the policy it names:

- diagnostics go into the session's store (per source; the client sees the union);
- progress tokens a server creates are renamed per client (`lspmux/<server>/<token>`), and
  progress is sent only to a client that declared `window.workDoneProgress` — or that put the
  token in its own request;
- a server request relayed to the client is sent under an id of the client connection's own
  numbering; the server's `$/cancelRequest` for it is rewritten to that id, and a client that
  does not answer within the server's request timeout gets the server an error instead;
- refresh requests reach the client only when it declared support for them;
- log messages carry the server's name.

Every server request is answered exactly once: by the client, by lspmux (`null` when nobody can
take it), or with an error when the client does not answer in time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lspmux.errors import JsonRpcError
from lspmux.routing import methods as lsp
from lspmux.routing.table import SERVER_NOTIFICATIONS, SERVER_REQUESTS, client_declares
from lspmux.session import positions
from lspmux.session.host import SessionHost
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.session")

Reply = Callable[[Any], None]

#: Bytes queued unread for a client above which the servers' log messages, telemetry and
#: progress reports are dropped instead of queued (they are counted, and the count is said once
#: the client reads again): a server flooding its log cannot grow lspmux's memory without bound
#: for a client that is not reading. What the client must get (answers, diagnostics, requests,
#: progress begin/end) is still queued, up to the connection's `max_write_buffer`.
BEHIND = 1024 * 1024
_CHATTER = frozenset((lsp.WINDOW_LOG_MESSAGE, lsp.TELEMETRY_EVENT, lsp.LOG_TRACE))


def _kind(params: Any) -> Any:
    """A `$/progress`'s kind: "begin", "report" or "end" (None when it has none)."""
    value = params.get("value") if isinstance(params, dict) else None
    return value.get("kind") if isinstance(value, dict) else None


def _is_report(msg: Message) -> bool:
    return _kind(msg.get("params")) == "report"


class ServerRelay:
    """Per session: server→client messages, with the tokens and ids each side knows."""

    def __init__(self, session: SessionHost, conn: Callable[[], Connection | None]) -> None:
        self.session = session
        self._conn = conn
        self._progress_tokens: dict[tuple[int, Any], str] = {}  # (backend, its token) → ours
        self._progress_owner: dict[str, tuple[Backend, Any]] = {}  # our token → origin
        #: (backend, the backend's request id) → the id the client knows.
        self._relayed: dict[tuple[int, Any], int | str] = {}
        #: Log and progress notifications dropped since the client fell behind (see BEHIND).
        self._dropped_while_behind = 0

    # -- notifications ------------------------------------------------------------------------

    def notification(self, backend: Backend, msg: Message) -> None:
        method = msg["method"]
        if method in _CHATTER or (method == lsp.PROGRESS and _is_report(msg)):
            conn = self._conn()
            if conn is not None and conn.queued > BEHIND:
                self._dropped_while_behind += 1
                return  # the client is behind: its queue holds what it must get, not chatter
            if self._dropped_while_behind:
                self._say_dropped(backend)
        route = SERVER_NOTIFICATIONS.get(method)
        handler = _NOTIFICATION_HANDLERS[route.handler or "forward"] if route else _forward
        handler(self, backend, msg)

    def _say_dropped(self, backend: Backend) -> None:
        count, self._dropped_while_behind = self._dropped_while_behind, 0
        log.warning("%s: %d log and progress messages dropped while the client was behind",
                    self.session.client_id, count)  # fmt: skip
        self.session.conn_send(
            {
                "jsonrpc": "2.0",
                "method": lsp.WINDOW_LOG_MESSAGE,
                "params": {
                    "type": 2,
                    "message": f"lspmux: {count} log and progress messages of the servers were "
                    "dropped while this client was not reading them",
                },
            }
        )

    def _publish(self, backend: Backend, msg: Message) -> None:
        params = msg.get("params")
        if backend.position_encoding != self.session.encoding:
            params = positions.from_server(self.session, backend, msg["method"], params)
        if isinstance(params, dict):
            self.session.publish_from(backend, params)  # type: ignore[attr-defined]

    def _progress(self, backend: Backend, msg: Message) -> None:
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        theirs = params.get("token")
        token = self._progress_tokens.get((id(backend), theirs))
        takes = client_declares(self.session.client_capabilities, "window.workDoneProgress")
        if token is None and not self._owns_token(theirs):
            # A server-created token this client was never told of (created before the
            # session attached: the server started for `initialize`, or for another client).
            # Its begin creates it at the client now; the rest of an unknown one is dropped:
            # a client must never see a token it does not know.
            if not takes or _kind(params) != "begin":
                return
            token = self._adopt(backend, theirs, takes)
        if token is not None:
            if not takes:
                return  # a server-created token: only for clients that take progress
            params = {**params, "token": token}
        self.session.conn_send({"jsonrpc": "2.0", "method": lsp.PROGRESS, "params": params})

    def _owns_token(self, token: Any) -> bool:
        """Whether one of this client's requests in flight carries this progress token."""
        return token is not None and any(
            isinstance(ex.params, dict)
            and token in (ex.params.get("workDoneToken"), ex.params.get("partialResultToken"))
            for ex in self.session.inflight.values()
        )

    def _cancel(self, backend: Backend, msg: Message) -> None:
        """The server gave up a request it sent: cancel it under the id the client knows."""
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        client_id = self._relayed.get((id(backend), params.get("id")))
        if client_id is not None:
            self.session.conn_send(
                {"jsonrpc": "2.0", "method": lsp.CANCEL_REQUEST, "params": {"id": client_id}}
            )

    def _log_message(self, backend: Backend, msg: Message) -> None:
        params = msg.get("params")
        if isinstance(params, dict) and isinstance(params.get("message"), str):
            params = {**params, "message": f"[{backend.name}] {params['message']}"}
        self.session.conn_send({"jsonrpc": "2.0", "method": msg["method"], "params": params})

    def _forward(self, backend: Backend, msg: Message) -> None:
        out: Message = {"jsonrpc": "2.0", "method": msg["method"]}
        if "params" in msg:
            out["params"] = msg["params"]
        self.session.conn_send(out)

    # -- requests -----------------------------------------------------------------------------

    def request(self, backend: Backend, msg: Message, reply: Reply) -> None:
        route = SERVER_REQUESTS.get(msg["method"])
        name = route.handler if route is not None else None
        # What a backend answers itself reaches a session only when the backend asks its
        # client (`workspace/configuration`): relayed like any request.
        handler = _relay if name is None or name in BACKEND_ANSWERS else _REQUEST_HANDLERS[name]
        handler(self, backend, msg, reply)

    def _progress_create(self, backend: Backend, msg: Message, reply: Reply) -> None:
        reply(None)
        params = msg.get("params") or {}
        theirs = params.get("token") if isinstance(params, dict) else None
        takes = client_declares(self.session.client_capabilities, "window.workDoneProgress")
        self._adopt(backend, theirs, takes)

    def _adopt(self, backend: Backend, theirs: Any, takes: bool) -> str:
        """This client's name for the server's progress token `theirs`, created at the client
        when it takes progress."""
        token = f"lspmux/{backend.name}/{theirs}"
        self._progress_tokens[(id(backend), theirs)] = token
        self._progress_owner[token] = (backend, theirs)
        if takes:
            self._to_client(
                lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
                {"token": token},
                lambda _r: None,
                timeout=None,
            )
        return token

    def progress_owner(self, token: Any) -> tuple[Backend, Any] | None:
        return self._progress_owner.get(token) if isinstance(token, str) else None

    def _registration(self, backend: Backend, msg: Message, reply: Reply) -> None:
        reply(None)  # the backend recorded it; a pull provider may have been registered
        self.session.puller.schedule_all(backend)
        self.session.registrations.sync(backend)
        self._watched_files(backend, msg)

    def attached(self, backend: Backend) -> None:
        """This session starts using `backend`, which may have registered things before (it
        was started for `initialize`, or another client of the daemon started it): this
        client hears of them now."""
        if backend.state != "running":
            return  # a later start's registrations arrive as usual
        self.session.registrations.sync(backend)
        watchers = [
            {"id": reg_id, "method": method, "registerOptions": options}
            for reg_id, (method, options) in backend.registrations.items()
            if method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
        ]
        if watchers:
            self._watched_files(
                backend,
                {"method": lsp.CLIENT_REGISTER_CAPABILITY, "params": {"registrations": watchers}},
            )

    def _watched_files(self, backend: Backend, msg: Message) -> None:
        """File watchers a server registers: relayed to a client that watches files (ids
        remapped), else watched by lspmux itself."""
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        files = self.session.files
        if msg["method"] == lsp.CLIENT_REGISTER_CAPABILITY:
            out = [
                files.register(backend, reg)
                for reg in params.get("registrations") or []
                if isinstance(reg, dict)
                and reg.get("method") == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
            ]
            if relayed := [r for r in out if r is not None]:
                self._to_client(
                    lsp.CLIENT_REGISTER_CAPABILITY, {"registrations": relayed}, _ignore, timeout=30
                )
            return
        gone = params.get("unregisterations", params.get("unregistrations")) or []
        out = [
            files.unregister(backend, unreg)
            for unreg in gone
            if isinstance(unreg, dict)
            and unreg.get("method") == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
        ]
        if relayed := [r for r in out if r is not None]:
            self._to_client(
                lsp.CLIENT_UNREGISTER_CAPABILITY, {"unregisterations": relayed}, _ignore, timeout=30
            )

    def _diagnostic_refresh(self, backend: Backend, msg: Message, reply: Reply) -> None:
        reply(None)
        self.session.puller.schedule_all(backend)
        self._refresh(backend, msg, lambda _v: None)

    def _refresh(self, backend: Backend, msg: Message, reply: Reply) -> None:
        route = SERVER_REQUESTS[msg["method"]]
        if not client_declares(self.session.client_capabilities, route.client_capability):
            reply(None)
            return
        self._relay(backend, msg, reply)

    def _relay(self, backend: Backend, msg: Message, reply: Reply) -> None:
        method = msg["method"]
        route = SERVER_REQUESTS.get(method)
        conn = self._conn()
        takes = route is None or client_declares(
            self.session.client_capabilities, route.client_capability
        )
        if self.session.state == "new" and conn is not None and not conn.closed and takes:
            # Still initializing: the client hears of it after its `initialize` answer.
            self.session.when_running(lambda: self._relay(backend, msg, reply))
            return
        if self.session.state != "running" or conn is None or conn.closed or not takes:
            reply(_DECLINED.get(method))
            return
        key = (id(backend), msg.get("id"))

        def done(resp: Message) -> None:
            self._relayed.pop(key, None)
            if "error" in resp:
                reply(JsonRpcError.from_error(resp["error"]))
            else:
                reply(resp.get("result"))

        params = msg.get("params")
        if backend.position_encoding != self.session.encoding:
            params = positions.from_server(self.session, backend, method, params)
        client_id = self._to_client(method, params, done, timeout=backend.config.request_timeout)
        if client_id is not None:
            self._relayed[key] = client_id

    def _to_client(
        self,
        method: str,
        params: Any,
        callback: Callable[[Message], None],
        *,
        timeout: float | None,
    ) -> int | str | None:
        conn = self._conn()
        if conn is None:
            return None
        return conn.request(method, params, callback, timeout=timeout)

    # -- backend events -----------------------------------------------------------------------

    def event(self, backend: Backend, event: str, detail: str) -> None:
        if event == "started":
            self.session.puller.schedule_all(backend)
            self.session.registrations.sync(backend)
        elif event in ("stopped", "failed") and (gone := self.session.files.forget(backend)):
            self._to_client(
                lsp.CLIENT_UNREGISTER_CAPABILITY, {"unregisterations": gone}, _ignore, timeout=30
            )
        if event == "failed":
            self.session.conn_send(
                {
                    "jsonrpc": "2.0",
                    "method": lsp.WINDOW_SHOW_MESSAGE,
                    "params": {"type": 1, "message": detail},
                }
            )
        elif event == "restarting":
            self.session.conn_send(
                {
                    "jsonrpc": "2.0",
                    "method": lsp.WINDOW_LOG_MESSAGE,
                    "params": {
                        "type": 2,
                        "message": f"lspmux: {backend.name} {detail}; restarting",
                    },
                }
            )


def _ignore(_resp: Message) -> None:
    pass


#: What a server is told when no client can take its request (null where null is an answer).
_DECLINED: dict[str, Any] = {
    lsp.WORKSPACE_APPLY_EDIT: {"applied": False, "failureReason": "no client can apply it now"},
    lsp.WINDOW_SHOW_DOCUMENT: {"success": False},
}

_forward = ServerRelay._forward
_relay = ServerRelay._relay

#: The handlers the table's server→client `handler` names stand for.
_NOTIFICATION_HANDLERS: dict[str, Callable[[ServerRelay, Backend, Message], None]] = {
    "publish": ServerRelay._publish,
    "progress": ServerRelay._progress,
    "cancel": ServerRelay._cancel,
    "log_message": ServerRelay._log_message,
    "forward": ServerRelay._forward,
}
_REQUEST_HANDLERS: dict[str, Callable[[ServerRelay, Backend, Message, Reply], None]] = {
    "progress_create": ServerRelay._progress_create,
    "register": ServerRelay._registration,
    "unregister": ServerRelay._registration,
    "diagnostic_refresh": ServerRelay._diagnostic_refresh,
    "refresh": ServerRelay._refresh,
    "relay": ServerRelay._relay,
}
#: Handled by the backend itself: a session hears of them only as a relayed request.
BACKEND_ANSWERS = frozenset({"configuration", "workspace_folders"})
