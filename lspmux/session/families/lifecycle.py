"""The client's lifecycle: `initialize` → `initialized` → … → `shutdown` → `exit`, and
`$/cancelRequest`. The state machine itself is the Session's (`session/session.py`); these
handlers are what the client's messages do to it."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from lspmux.errors import InvalidRequest, RequestCancelled
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, client_declares, route
from lspmux.session.exchange import Exchange
from lspmux.session.state import SessionState

#: Methods the dispatcher treats apart: `initialize` is the one request before it; nothing
#: overtakes its answer; a cancel and `exit` are never held behind a waiting request.
INITIALIZE = lsp.INITIALIZE
EXIT = lsp.EXIT
CANCEL = lsp.CANCEL_REQUEST


def initialize(session: SessionState, ex: Exchange) -> Any:
    if session.state != "new":
        raise InvalidRequest("initialize was already received")
    params = ex.params if isinstance(ex.params, dict) else {}
    return session.initialize(params)


def shutdown(session: SessionState, ex: Exchange) -> Awaitable[None]:
    return session.shutdown()


def initialized(session: SessionState, params: dict[str, Any]) -> None:
    pass


def exit_(session: SessionState, params: dict[str, Any]) -> None:
    session.exit()


def cancel(session: SessionState, params: dict[str, Any]) -> None:
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


# -- what `initialize` reads of its params ------------------------------------------------------


def pulls_diagnostics(client: dict[str, Any]) -> bool:
    """Whether a client gets diagnostics by pull: it pulls (`textDocument.diagnostic`) and can
    be told to pull again (`workspace.diagnostics.refreshSupport`). Neovim 0.11 pulls but has no
    refresh support: pulled, it would keep stale results (nothing makes it pull again) and show
    pushed ones twice (push and pull live in separate namespaces); it gets push only."""
    text_document = client.get("textDocument")
    declared = isinstance(text_document, dict) and isinstance(text_document.get("diagnostic"), dict)
    return declared and client_declares(client, "workspace.diagnostics.refreshSupport")
