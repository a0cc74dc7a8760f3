"""The native lane: the fast lane (`session/fast.py`) for whole runs of messages, in C.

A read from a client that holds twenty plain hovers, or a read from a server that holds their
twenty answers, costs the fast lane about ten microseconds of interpreter per request. The
native lane (`lspmux/_speedups.c`: `run_requests`, `run_answers`) does the same work for a
run of such messages in one call:

- `run_requests` takes the client's requests in a row that `Lane.relay` would send by the
  lane, checking each as `Lane.relay` does, on the same tables of the session (its servers for
  the document as `backends_for` remembers them, each server's remembered `supports` answer,
  the states, the encodings), and does what it does, in its order: the shared server made to
  hold this client's text, the `FastExchange` (the client's in-flight entry and the server's
  pending record), the request's id, deadline and bytes.
- `run_answers` takes a server's answers in a row that are plain results to those requests
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
Python (`Connection._handle`), then calls the run again for the rest. So no message is
handled differently, and the order of everything sent is the order of the Python's. A run
takes nothing outside a read (its writes are held: `BATCH`), nor, for requests, while the
session is not running, a message waits behind a request (`ClientDispatch._held`), the
client's connection waits for an answer of the client's, logs at debug level or is behind.

Here: which methods the lane takes for a session (`lane_routes`), and the two runs as the
connections call them (`Connection.lane`; the connection's reader in C calls the C of each
directly). Without the speedups (or with
`LSPMUX_PURE_PYTHON=1`) there is no native lane and the fast lane does all of it.
"""

from __future__ import annotations

import asyncio
import logging
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
    """A session's client connection's run (`Connection.lane`). Its guards, its routes (made
    again when the session's pool became shared) and its counts are the C's
    (`_speedups.c`: `run_requests`), which the connection's reader calls without this
    `__call__`."""

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
        return _run_requests(self, items, start)


class AnswerRun:
    """A server connection's run (`Connection.lane`); see `RequestRun`."""

    __slots__ = ("conn", "handled")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.handled = 0  # answers relayed by the native lane

    def __call__(self, items: list[Any], start: int) -> int:
        return _run_answers(self, items, start)


def _failed(conn: Connection, what: str, exc: BaseException) -> None:
    log.error("%s: %s could not be handled", conn.name, what, exc_info=exc)


if _native is not None:
    _native.configure(BATCH, FastExchange, RequestRun, AnswerRun, lane_routes, _failed)
    _run_requests = _native.run_requests
    _run_answers = _native.run_answers


def answer_run(conn: Connection) -> AnswerRun | None:
    """A server connection's run (`Connection.lane`); None without the native lane."""
    return AnswerRun(conn) if _native is not None else None
