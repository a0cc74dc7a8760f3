"""The native lane: the fast lane (`session/fast.py`) for whole runs of messages, in C.

A read from a client that holds twenty plain hovers, or a read from a server that holds their
twenty answers, costs the fast lane about ten microseconds of interpreter per request. The
native lane (`lspmux/_speedups.c`: `lane_requests`, `lane_answers`) does the same work for a
run of such messages in one call:

- `lane_requests` takes the client's requests in a row that `Lane.relay` would send by the
  lane, checking each as `Lane.relay` does, on the same tables of the session (its servers for
  the document as `backends_for` remembers them, each server's remembered `supports` answer,
  the states, the encodings), and does what it does, in its order: the shared server made to
  hold this client's text, the `FastExchange` (the client's in-flight entry and the server's
  pending record), the request's id, deadline and bytes.
- `lane_answers` takes a server's answers in a row that are plain results to those requests
  and does what `FastExchange.raw` does: the family's last origin, the exchange answered once,
  the answer written under the client's id.

A plain request is read in place (`scan_request`: its id, method, document and position, the
rest only checked), and its very bytes go to the server with the server's id in place of the
client's; the exchange keeps those bytes and parses the params only if something asks for them
(`FastExchange.params`: a retry, a progress token). A run reads the session's tables once, not
once per request, and again after the Python ran.

Each stops at the first message that is anything else, or that needs what only the Python does
(a table without its entry yet, a timer to set, a log line at debug level, an answer to fit, a
large answer, a client that waits for all answers): the connection hands that message to the
Python (`Connection._received`), then calls the run again for the rest. So no message is
handled differently, and the order of everything sent is the order of the Python's.

Here: which methods the lane takes for a session (`lane_routes`), and the two runs as the
connections call them (`Connection.lane`). Without the speedups (or with
`LSPMUX_PURE_PYTHON=1`) there is no native lane and the fast lane does all of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from lspmux import speedups
from lspmux.routing.route import Policy
from lspmux.routing.table import CLIENT_REQUESTS
from lspmux.session import forward
from lspmux.session.fast import FastExchange
from lspmux.wire.writes import BATCH

if TYPE_CHECKING:
    from lspmux.session.dispatch import ClientDispatch
    from lspmux.session.state import SessionState
    from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.session")

#: The route's flags as `lane_requests` reads them (`_speedups.c`).
ROUTE_POSITION = 1
ROUTE_RANGE = 2
ROUTE_MERGE = 8

_native = speedups.native


def available() -> bool:
    """Whether this process has the native lane (the C speedups are in use)."""
    return _native is not None


#: A lane route: its flags, its family, and how its answers are fitted for this client (the
#: route's fitting kind when `forward.must_fit`, else None).
LaneRoute = tuple[int, str | None, str | None]


def lane_routes(session: SessionState) -> dict[str, LaneRoute]:
    """The methods `Lane.relay` may send by the lane for this session (no handler, FIRST or
    MERGE): method → (flags, family, fitting kind or None)."""
    routes: dict[str, LaneRoute] = {}
    for method, route in CLIENT_REQUESTS.items():
        if route.handler is not None or route.policy not in forward.ONE_OR_ALL:
            continue
        flags = (ROUTE_POSITION if route.position else 0) | (ROUTE_RANGE if route.range else 0)
        if route.policy is Policy.MERGE:
            flags |= ROUTE_MERGE
        fit = (route.fit or "") if forward.must_fit(session, route) else None
        routes[method] = (flags, route.family, fit)
    return routes


class RequestRun:
    """A session's client connection's run (`Connection.lane`)."""

    __slots__ = ("_loop", "_routes", "_shared", "conn", "dispatch", "handled", "session")

    def __init__(self, session: SessionState, dispatch: ClientDispatch, conn: Connection) -> None:
        self.session = session
        self.dispatch = dispatch
        self.conn = conn
        self.handled = 0  # requests sent by the native lane
        self._routes: dict[str, LaneRoute] | None = None
        self._shared = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, items: list[Any], start: int) -> int:
        session, conn = self.session, self.conn
        dirty = BATCH.dirty
        # the guards read as fields, not through their properties (`holding`, `has_pending`,
        # `debugging`, `congested`): this runs at every read of the client's
        if (
            _native is None
            or dirty is None
            or session.state != "running"
            or self.dispatch._held
            or conn._pending
            or conn._debug
            or conn._congestion is not None
        ):
            return start
        routes = self._routes
        if routes is None or self._shared is not session.pool.shared:
            # the client's capabilities are known once it runs; a pool shared since needs
            # the client's answers fitted
            self._shared = session.pool.shared
            routes = self._routes = lane_routes(session)
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        now = time.monotonic()
        end, exc = _native.lane_requests(
            items, start, session, routes, FastExchange, loop.time(), now, dirty
        )
        if end > start:
            session.last_active = now
            self.handled += end - start
        if exc is not None:
            log.error("%s: a request could not be handled", conn.name, exc_info=exc)
        return end


class AnswerRun:
    """A server connection's run (`Connection.lane`)."""

    __slots__ = ("conn", "handled")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.handled = 0  # answers relayed by the native lane

    def __call__(self, items: list[Any], start: int) -> int:
        conn = self.conn
        dirty = BATCH.dirty
        if _native is None or dirty is None or conn._debug or not conn._pending:
            return start
        end, exc = _native.lane_answers(items, start, conn, FastExchange, dirty)
        self.handled += end - start
        if exc is not None:
            log.error("%s: an answer could not be handled", conn.name, exc_info=exc)
        return end


def answer_run(conn: Connection) -> AnswerRun | None:
    """A server connection's run (`Connection.lane`); None without the native lane."""
    return AnswerRun(conn) if _native is not None else None
