"""Progress: a token a server creates is renamed per client (`lspmux/<server>/<token>`) and
created at a client that declared `window.workDoneProgress`; `$/progress` reaches a client only
under a token it knows (its own, from its request, or one created for it); the user's cancel
of a progress goes to the server that created it, under the token it knows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lspmux.backends.pool import Pool
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, client_declares, route
from lspmux.session.relay import ServerRelay
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import Reply

_TAKES = "window.workDoneProgress"


def _kind(params: Any) -> Any:
    """A `$/progress`'s kind: "begin", "report" or "end" (None when it has none)."""
    value = params.get("value") if isinstance(params, dict) else None
    return value.get("kind") if isinstance(value, dict) else None


def create(relay: ServerRelay, route: Route, backend: Backend, msg: Message, reply: Reply) -> None:
    params = msg.get("params") or {}
    theirs = params.get("token") if isinstance(params, dict) else None
    adopt(relay, backend, theirs, client_declares(relay.session.client_capabilities, _TAKES))


def adopt(relay: ServerRelay, backend: Backend, theirs: Any, takes: bool) -> str:
    """This client's name for the server's progress token `theirs`, created at the client
    when it takes progress."""
    token = f"lspmux/{backend.name}/{theirs}"
    relay.progress_tokens[(id(backend), theirs)] = token
    relay.progress_owners[token] = (backend, theirs)
    if takes:
        relay.to_client(
            lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, {"token": token}, lambda _r: None, timeout=None
        )
    return token


def track(pool: Pool, backend: Backend, msg: Message) -> None:
    """Once per server instance: which of its tokens are open (a server reporting progress is
    working, `Backend.silent`), then to every session of the server."""
    params = msg.get("params")
    token = params.get("token") if isinstance(params, dict) else None
    if isinstance(token, int | str):
        kind = _kind(params)
        if kind == "begin":
            backend.progress_open.add(token)
        elif kind == "end":
            backend.progress_open.discard(token)
    pool.tell(pool.sessions_of(backend), backend, msg)


def progress(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    params = msg.get("params")
    if not isinstance(params, dict):
        return
    if _kind(params) == "report" and relay.behind(backend):
        return
    session = relay.session
    theirs = params.get("token")
    token = relay.progress_tokens.get((id(backend), theirs))
    takes = client_declares(session.client_capabilities, _TAKES)
    if token is None and not _owns_token(session, theirs):
        # A server-created token this client was never told of (created before the
        # session attached: the server started for `initialize`, or for another client).
        # Its begin creates it at the client now; the rest of an unknown one is dropped:
        # a client must never see a token it does not know.
        if not takes or _kind(params) != "begin":
            return
        token = adopt(relay, backend, theirs, takes)
    if token is not None:
        if not takes:
            return  # a server-created token: only for clients that take progress
        params = {**params, "token": token}
    session.conn_send({"jsonrpc": "2.0", "method": lsp.PROGRESS, "params": params})


def _owns_token(session: SessionState, token: Any) -> bool:
    """Whether one of this client's requests in flight carries this progress token."""
    return token is not None and any(
        isinstance(ex.params, dict)
        and token in (ex.params.get("workDoneToken"), ex.params.get("partialResultToken"))
        for ex in session.inflight.values()
    )


def cancel(session: SessionState, params: dict[str, Any]) -> None:
    """The user cancelled a progress: only the server that created it hears of it, under
    the token it knows."""
    token = params.get("token")
    owner = session.relay.progress_owners.get(token) if isinstance(token, str) else None
    if owner is not None:
        backend, theirs = owner
        backend.notify(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL, {"token": theirs})
        return
    for backend in session.backends:  # a token the client created: whoever reports on it
        backend.notify(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL, params)


NOTIFICATIONS: dict[str, Route] = {
    lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL: route(Policy.LOCAL, "sync", handler=cancel),
}

SERVER_REQUESTS: dict[str, Route] = {
    lsp.WINDOW_WORK_DONE_PROGRESS_CREATE: route(
        Policy.PROGRESS,
        "sync",
        handler=create,
        instance=Pool.answer_for_every_session,
        client_capability=_TAKES,
    ),
}

SERVER_NOTIFICATIONS: dict[str, Route] = {
    lsp.PROGRESS: route(Policy.PROGRESS, "sync", handler=progress, instance=track),
}
