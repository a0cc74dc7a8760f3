"""The client's lifecycle: `initialize` → `initialized` → … → `shutdown` → `exit`, and
`$/cancelRequest`. The state machine itself is the Session's (`session/session.py`); these
handlers are what the client's messages do to it."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from lspmux.errors import InvalidRequest, RequestCancelled
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.exchange import Exchange
from lspmux.session.host import SessionHost

#: Methods the dispatcher treats apart: `initialize` is the one request before it; nothing
#: overtakes its answer; a cancel and `exit` are never held behind a waiting request.
INITIALIZE = lsp.INITIALIZE
EXIT = lsp.EXIT
CANCEL = lsp.CANCEL_REQUEST


def initialize(session: SessionHost, ex: Exchange) -> Any:
    if session.state != "new":
        raise InvalidRequest("initialize was already received")
    params = ex.params if isinstance(ex.params, dict) else {}
    return session.initialize(params)


def shutdown(session: SessionHost, ex: Exchange) -> Awaitable[None]:
    return session.shutdown()


def initialized(session: SessionHost, params: dict[str, Any]) -> None:
    pass


def exit_(session: SessionHost, params: dict[str, Any]) -> None:
    session.exit()


def cancel(session: SessionHost, params: dict[str, Any]) -> None:
    ex = session.inflight.get(params.get("id"))
    if ex is not None:
        ex.cancel()  # tell every backend working on it
        ex.reply_error(RequestCancelled("cancelled by the client"))


REQUESTS: dict[str, Route] = {
    INITIALIZE: route(Policy.LOCAL, "lifecycle", handler=initialize),
    lsp.SHUTDOWN: route(Policy.LOCAL, "lifecycle", handler=shutdown),
}

NOTIFICATIONS: dict[str, Route] = {
    lsp.INITIALIZED: route(Policy.LOCAL, "lifecycle", handler=initialized),
    EXIT: route(Policy.LOCAL, "lifecycle", handler=exit_),
    CANCEL: route(Policy.LOCAL, "lifecycle", handler=cancel),
}
