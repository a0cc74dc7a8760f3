"""The fast lane: a client request that needs no inspection, relayed with one object.

Most requests an editor sends (hover, definition, references…) go to exactly one server that
runs, speaks the client's position encoding and whose answer the client takes as it is. For
those, `Lane.relay` (tried first by `dispatch._request`) skips the general path (`_route` →
`forward.dispatch` → the policy → `Backend.request`): the request gets one `FastExchange`,
which is at once the client's in-flight entry (cancellation, `all_answered`, a client that stops
reading) and the backend connection's pending record (`Connection.forward`: no callbacks, no
`_Pending`). Its answer, sniffed, goes back to the client as bytes with the id rewritten — or,
for a client that declared less than its shared server was told, fitted to it first as the
general way fits it (`Exchange.reply_raw`: a scan, and most answers need nothing).

Whether a request takes the lane is checked per request, by the general way's own tests
(`forward.serving`, `forward.single_target`): its route a FIRST or MERGE policy with no
handler, nothing held, a document named, its servers running and exactly one of them serving
it, the same encoding, the client reading.
Anything else goes the general way, and so does any answer but a plain result: an error, a
timeout, a crashed server's failure, ContentModified are handed to the FIRST policy
(`forward.first_after`) exactly as if the request had gone that way. Every request is still
answered once: `Exchange._finish` decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from lspmux.routing.table import CLIENT_REQUESTS
from lspmux.session import forward
from lspmux.session.exchange import Exchange
from lspmux.session.params import params_problem
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message, decode

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

#: The slot `FastExchange.params` stands on (`Exchange`'s).
_PARAMS: Any = Exchange.__dict__["params"]


class Lane:
    """One session's fast lane."""

    __slots__ = ("session",)

    def __init__(self, session: SessionState) -> None:
        self.session = session

    def relay(self, msg: Message) -> bool:
        """Send the client's request `msg` by the fast lane; False when it must go the general
        way (nothing was done then)."""
        session = self.session
        if session.state != "running":
            return False
        method = msg["method"]
        route = CLIENT_REQUESTS.get(method)
        if route is None or route.handler is not None or route.policy not in forward.ONE_OR_ALL:
            return False
        params = msg.get("params")
        if type(params) is not dict or "locate" in params:
            return False
        td = params.get("textDocument")
        uri = td.get("uri") if type(td) is dict else None  # `uri_of`, for a textDocument
        if type(uri) is not str or params_problem(route, params) is not None:
            return False
        backends = session.backends_for(uri)
        for b in backends:
            if b.state != "running":
                return False
        eligible = forward.serving(method, route, backends)
        if len(eligible) != 1:
            return False  # none (the general way says why), or several: the policy decides
        target = eligible[0]
        if target.position_encoding != session.encoding:
            return False
        conn = session.link.conn
        if conn is not None and conn.congested:
            return False
        family = forward.single_target(session, route, params, target)
        ex = FastExchange(session, msg, target, family)
        if forward.must_fit(session, route):
            ex.fit_for, ex.fit_kind = session.client_capabilities, route.fit or ""
        backend_id = target.forward(ex, params)
        if backend_id is not None:
            ex.targets.append((target, backend_id))
        return True


class FastExchange(Exchange[SessionState]):
    """A client request on the fast lane: its exchange, and its pending entry at the server
    (`wire/requests.py` `Record`)."""

    __slots__ = ("_body", "backend", "deadline", "family", "timeout")

    def __init__(
        self, session: SessionState, msg: Message, backend: Backend, family: str | None
    ) -> None:
        self._body: bytes | None = None
        super().__init__(session, msg)
        self.backend = backend
        self.family = family  # FIRST: the family whose last origin the answer sets
        self.timeout: float | None = None
        self.deadline = 0.0

    @property  # type: ignore[override]
    def params(self) -> Any:
        """The request's params. The native lane reads a plain request in place
        (`_speedups.c`: `scan_request`) and keeps its bytes instead (`_body`): they are parsed
        here if anything asks for them (a fallback to another server, a progress token)."""
        body = self._body
        if body is not None:
            self._body = None
            _PARAMS.__set__(self, orjson.loads(body)["params"])
        return _PARAMS.__get__(self, FastExchange)

    @params.setter
    def params(self, value: Any) -> None:
        self._body = None
        _PARAMS.__set__(self, value)

    def raw(self, body: bytes, offset: int) -> None:
        """The server's sniffed answer: a result goes to the client as it is (fitted first
        where this client's answers are: `reply_raw`)."""
        if body.startswith(b'"error"', offset):
            self.callback(decode(body))
            return
        family = self.family
        if family is not None:
            session = self.session
            session.last_origin[family] = session.origin_of(self.backend)
        self.reply_raw(body, offset)

    def callback(self, msg: Message) -> None:
        """Anything but a sniffed answer (an error, a timeout, the server gone): the FIRST
        policy takes over, as if the request had gone the general way."""
        forward.first_after(self, self.backend, self.family, msg)
