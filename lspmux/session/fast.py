"""The fast lane: a client request that needs no inspection, relayed with one object.

Most requests an editor sends (hover, definition, references…) go to exactly one server that
runs, speaks the client's position encoding and whose answer the client takes as it is. For
those, `Lane.relay` (tried first by `dispatch._request`) skips the general path (`_route` →
`forward.dispatch` → the policy → `Backend.request`): the request gets one `FastExchange`,
which is at once the client's in-flight entry (cancellation, `all_answered`, a client that stops
reading) and the backend connection's pending record (`Connection.forward`: no callbacks, no
`_Pending`). Its answer, sniffed, goes back to the client as bytes with the id rewritten.

Whether a method may take the lane is decided once per session (its route: a FIRST or MERGE
policy with no handler, nothing to fit for this client); whether a request takes it is checked
per request (nothing held, a document named, exactly one eligible server and it is running,
the same encoding, the client reading). Anything else goes the general way, and so does any
answer but a plain result: an error, a timeout, a crashed server's failure, ContentModified
are handed to the FIRST policy (`forward.first_after`) exactly as if the request had gone that
way. Every request is still answered once: `Exchange._finish` decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lspmux.routing import adapt
from lspmux.routing.route import Policy, Route
from lspmux.routing.table import CLIENT_REQUESTS
from lspmux.session import forward
from lspmux.session.exchange import Exchange
from lspmux.session.params import params_problem
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message, decode

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

_POLICIES = (Policy.FIRST, Policy.MERGE)
_UNSEEN: Any = object()


class Lane:
    """One session's fast lane: which methods may take it (decided at first use)."""

    __slots__ = ("routes", "session", "shared")

    def __init__(self, session: SessionState) -> None:
        self.session = session
        #: method → its route when the method may take the lane, None when it may not.
        self.routes: dict[str, Route | None] = {}
        self.shared = session.pool.shared  # what `routes` were decided for

    def route(self, method: str) -> Route | None:
        session = self.session
        routes = self.routes
        if self.shared != session.pool.shared:  # a pool that became shared: fitting may apply
            routes.clear()
            self.shared = session.pool.shared
        if method in routes:
            return routes[method]
        route = CLIENT_REQUESTS.get(method)
        if (
            route is None
            or route.handler is not None
            or route.policy not in _POLICIES
            or (
                route.fit is not None
                and session.pool.shared
                and adapt.needs_adapting(route.fit, session.client_capabilities)
            )
        ):
            route = None
        routes[method] = route  # the client's capabilities are known: it is running
        return route

    def relay(self, msg: Message) -> bool:
        """Send the client's request `msg` by the fast lane; False when it must go the general
        way (nothing was done then)."""
        session = self.session
        if session.state != "running":
            return False
        method = msg["method"]
        route = self.routes.get(method, _UNSEEN)
        if route is _UNSEEN or self.shared != session.pool.shared:
            route = self.route(method)
        if route is None:
            return False
        params = msg.get("params")
        if type(params) is not dict or "locate" in params:
            return False
        td = params.get("textDocument")
        uri = td.get("uri") if type(td) is dict else None  # `uri_of`, for a textDocument
        if type(uri) is not str or params_problem(route, params) is not None:
            return False
        target = None
        for b in session.backends_for(uri):
            if b.state != "running":
                return False
            if b.supports(method, route):
                if target is not None:
                    return False  # several: the policy decides
                target = b
        if target is None or target.position_encoding != session.encoding:
            return False
        conn = session.link.conn
        if conn is not None and conn.congested:
            return False
        family = route.family
        if session.pool.shared:
            forward.hold_requesters_text(session, params, [target])
        if family is not None and route.policy is Policy.MERGE:  # as `forward.by_policy` does
            session.last_origin[family] = session.origin_of(target)
            family = None
        ex = FastExchange(session, msg, target, family)
        backend_id = target.forward(ex, params)
        if backend_id is not None:
            ex.targets.append((target, backend_id))
        return True


class FastExchange(Exchange[SessionState]):
    """A client request on the fast lane: its exchange, and its pending entry at the server
    (`wire/requests.py` `Record`)."""

    __slots__ = ("backend", "deadline", "family", "timeout")

    def __init__(
        self, session: SessionState, msg: Message, backend: Backend, family: str | None
    ) -> None:
        super().__init__(session, msg)
        self.backend = backend
        self.family = family  # FIRST: the family whose last origin the answer sets
        self.timeout: float | None = None
        self.deadline = 0.0

    def raw(self, body: bytes, offset: int) -> None:
        """The server's sniffed answer: a result goes to the client as it is."""
        if body.startswith(b'"error"', offset):
            self.callback(decode(body))
            return
        family = self.family
        if family is not None:
            session = self.session
            session.last_origin[family] = session.origin_of(self.backend)
        self.relay(body, offset)

    def callback(self, msg: Message) -> None:
        """Anything but a sniffed answer (an error, a timeout, the server gone): the FIRST
        policy takes over, as if the request had gone the general way."""
        forward.first_after(self, self.backend, self.family, msg)
