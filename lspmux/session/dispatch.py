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
- Local methods (lifecycle, `locate/*`, pulled diagnostics, `lspmux/*`) and notifications
  with a handler are served by their route's handler (`session/families/*`); everything else
  is forwarded by its route's policy (`forward.dispatch`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Literal

from lspmux.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    RequestCancelled,
    ServerCancelled,
    ServerNotInitialized,
)
from lspmux.routing.table import CLIENT_NOTIFICATIONS, CLIENT_REQUESTS, Policy, Route
from lspmux.session import forward
from lspmux.session.documents import uri_of
from lspmux.session.exchange import NOT_READING, Exchange
from lspmux.session.families.lifecycle import CANCEL, EXIT, INITIALIZE
from lspmux.session.fast import Lane
from lspmux.session.params import params_problem
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

#: Holds every later message (a Locate lookup may concern any document).
_ALL = "*"


class ClientDispatch:
    def __init__(self, session: SessionState) -> None:
        self.session = session
        #: uri (or `_ALL`) → messages waiting behind a request for it, in arrival order.
        self._held: dict[str, deque[Message]] = {}
        self._lane = Lane(session)

    @property
    def holding(self) -> bool:
        """Whether messages wait behind a request (they must not be overtaken)."""
        return bool(self._held)

    # -- from the connection ------------------------------------------------------------------

    def on_message(self, msg: Message) -> None:
        self.session.last_active = time.monotonic()
        self._handle(msg)

    def _handle(self, msg: Message) -> None:
        if self._held and self._hold(msg):
            return
        if "id" in msg:
            self._request(msg)
        else:
            self._notification(msg)

    def _hold(self, msg: Message) -> bool:
        """Queue `msg` behind a waiting request when it must not overtake it."""
        method = msg["method"]
        if method in (CANCEL, EXIT):
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
            self._handle(queue.popleft())
            if key in self._held:  # that message waits too: the rest queue behind it
                self._held[key].extend(queue)
                return

    # -- requests -----------------------------------------------------------------------------

    def _request(self, msg: Message) -> None:
        if self._lane.relay(msg):  # nothing to inspect: relayed as it is (`session/fast.py`)
            return
        session = self.session
        method: str = msg["method"]
        ex = Exchange(session, msg)
        try:
            route = CLIENT_REQUESTS.get(method)
            if method != INITIALIZE and session.state == "new":
                raise ServerNotInitialized("lspmux: initialize first")
            if session.state != "running" and method != INITIALIZE:
                raise InvalidRequest(f"{method} after shutdown")
            params = msg.get("params")
            if route is not None and route.policy in _LOCAL:
                self._local(ex, route)
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

    def _local(self, ex: Exchange, route: Route) -> None:
        assert route.handler is not None
        result = route.handler(self.session, ex)
        if not isinstance(result, Awaitable):
            ex.reply(result)
        elif ex.method == INITIALIZE:  # nothing may overtake the initialize answer
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
        if ex.link.not_reading():  # read with the requests before it stopped being read
            ex.reply_error(ServerCancelled(NOT_READING))
            return
        uri = uri_of(ex.params)
        backends = session.backends_for(uri) if uri else list(session.backends)
        for b in backends:  # a loop, not all(<generator>): two calls less per request
            if b.state != "running":
                break
        else:
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
        params = await locate_methods.rewrite_params(self.session, ex.params, wants=wants)
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
        if method == EXIT and route is not None and route.handler is not None:
            route.handler(session, params)  # in any state
            return
        if session.state != "running":
            return
        try:
            if route is not None and route.handler is not None:
                if params_problem(route, params, notification=True) is not None:
                    log.warning("%s: malformed %s ignored", session.client_id, method)
                    return
                route.handler(session, params)
                return
            uri = uri_of(params)
            for backend in session.backends_for(uri) if uri else list(session.backends):
                backend.notify(method, params)
        except InvalidParams as exc:
            log.warning("%s: malformed %s ignored: %s", session.client_id, method, exc)
        except Exception:  # a bad notification must not take the session down
            log.exception("%s: handling %s failed", session.client_id, method)


_LOCAL = (Policy.LOCAL, Policy.DIAGNOSTICS)

#: What `_answer` returns for work that forwarded the request (the answer comes from a backend).
_FORWARDED = object()
