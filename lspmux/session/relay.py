"""What backends say to one client: the per-session state and the steps every server→client
family uses.

`ServerRelay` holds what one session knows of its servers' messages — the progress tokens
renamed for this client, the server requests relayed to it under ids of the client
connection's own numbering (a server's `$/cancelRequest` for one is rewritten to that id) —
and sends to the client: `relay_request` (answered by the client, or `declined` when it cannot
take it, or an error when it does not answer in time), `relay_refresh` (only to a client that
declared support), `forward` (a notification as it is). Which family serves which method is
`routing/table.py`'s business; the families (`session/families/`) call these.

Every server request is answered exactly once (`backends/backend.py` `ServerReply`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lspmux.errors import JsonRpcError
from lspmux.routing.route import Route, client_declares
from lspmux.session import positions
from lspmux.session.state import SessionState
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


class ServerRelay:
    """Per session: what its servers say to it, with the tokens and ids each side knows."""

    def __init__(self, session: SessionState, conn: Callable[[], Connection | None]) -> None:
        self.session = session
        self._conn = conn
        self.progress_tokens: dict[tuple[int, Any], str] = {}  # (backend, its token) → ours
        self.progress_owners: dict[str, tuple[Backend, Any]] = {}  # our token → origin
        #: (backend, the backend's request id) → the id the client knows.
        self.relayed: dict[tuple[int, Any], int | str] = {}
        #: Log and progress notifications dropped since the client fell behind (see BEHIND).
        self._dropped_while_behind = 0

    def notification(self, backend: Backend, msg: Message, route: Route | None) -> None:
        """`msg` to this client by its route's handler (no route: as it is)."""
        if route is not None and route.chatter and self.behind(backend):
            return
        (route.handler if route is not None and route.handler else forward)(self, backend, msg)

    def behind(self, backend: Backend) -> bool:
        """Whether the client is too far behind for chatter (its queue holds what it must
        get); True drops and counts one message, and the count is said once it reads again."""
        conn = self._conn()
        if conn is not None and conn.queued > BEHIND:
            self._dropped_while_behind += 1
            return True
        if self._dropped_while_behind:
            self._say_dropped(backend)
        return False

    def _say_dropped(self, backend: Backend) -> None:
        count, self._dropped_while_behind = self._dropped_while_behind, 0
        log.warning("%s: %d log and progress messages dropped while the client was behind",
                    self.session.client_id, count)  # fmt: skip
        message = (
            f"lspmux: {count} log and progress messages of the servers were dropped while this "
            "client was not reading them"
        )
        self.session.tell(message, severity=2, shown=False)

    def request(self, route: Route | None, backend: Backend, msg: Message, reply: Reply) -> None:
        """A server request to this client by its route's handler (no route: relayed)."""
        handler = route.handler if route is not None and route.handler else relay_request
        handler(self, route, backend, msg, reply)

    def to_client(
        self,
        method: str,
        params: Any,
        callback: Callable[[Message], None],
        *,
        timeout: float | None,
    ) -> int | str | None:
        """A request of lspmux's own to the client; the id it was sent under."""
        conn = self._conn()
        if conn is None:
            return None
        return conn.request(method, params, callback, timeout=timeout)

    def open(self) -> bool:
        conn = self._conn()
        return conn is not None and not conn.closed


def forward(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    """A server notification to the client as it is."""
    out: Message = {"jsonrpc": "2.0", "method": msg["method"]}
    if "params" in msg:
        out["params"] = msg["params"]
    relay.session.conn_send(out)


def relay_request(
    relay: ServerRelay, route: Route | None, backend: Backend, msg: Message, reply: Reply
) -> None:
    """A server request to the client, under an id of the client connection's numbering; the
    client's answer goes back to the server. A client that cannot take it (not running, or it
    did not declare the route's client capability) has the route's `declined` answer given
    for it; one still initializing hears of it after its `initialize` answer."""
    session = relay.session
    method = msg["method"]
    takes = route is None or client_declares(session.client_capabilities, route.client_capability)
    if session.state == "new" and relay.open() and takes:
        session.when_running(lambda: relay_request(relay, route, backend, msg, reply))
        return
    if session.state != "running" or not relay.open() or not takes:
        reply(route.declined if route is not None else None)
        return
    key = (id(backend), msg.get("id"))

    def done(resp: Message) -> None:
        relay.relayed.pop(key, None)
        if "error" in resp:
            reply(JsonRpcError.from_error(resp["error"]))
        else:
            reply(resp.get("result"))

    params = msg.get("params")
    if backend.position_encoding != session.encoding:
        params = positions.from_server(session, backend, method, params)
    client_id = relay.to_client(method, params, done, timeout=backend.config.request_timeout)
    if client_id is not None:
        relay.relayed[key] = client_id


def relay_refresh(
    relay: ServerRelay, route: Route | None, backend: Backend, msg: Message, reply: Reply
) -> None:
    """A refresh (answered for the server already) passed on to a client that takes it."""
    if route is None or client_declares(relay.session.client_capabilities, route.client_capability):
        relay_request(relay, route, backend, msg, _ignore)


def _ignore(_value: Any) -> None:
    pass
