"""Progress: a token a server creates is renamed per client (`lspmux/<server>/<token>`) and
created at a client that declared `window.workDoneProgress`; `$/progress` reaches a client only
under a token it knows (its own, from its request, or one created for it); the user's cancel
of a progress goes to the server that created it, under the token it knows. A `begin` reaches the
client titled with the server's name (`basedpyright: Indexing…`, see `titled`), whoever created
its token: a progress UI shows which server is busy, not just "lspmux"."""

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


def titled(server: str, value: dict[str, Any]) -> dict[str, Any]:
    """A `begin` value as the client gets it: titled `<server>: <its title>`; a server that
    leaves the title empty (pyright's analysis does) is titled with its message instead (moved
    into the title, not shown twice), else with its name alone. Any other value is returned
    as it is: reports and ends keep their message, partial results their items, and a title
    that names the server already is not named twice."""
    if value.get("kind") != "begin":
        return value
    title = value.get("title")
    if isinstance(title, str) and title.strip():
        if title.lower().startswith(server.lower()):
            return value
        return {**value, "title": f"{server}: {title}"}
    message = value.get("message")
    if isinstance(message, str) and message.strip():
        rest = {k: v for k, v in value.items() if k != "message"}
        return {**rest, "title": f"{server}: {message}"}
    return {**value, "title": server}


def create(relay: ServerRelay, route: Route, backend: Backend, msg: Message, reply: Reply) -> None:
    params = msg.get("params") or {}
    theirs = params.get("token") if isinstance(params, dict) else None
    adopt(relay, backend, theirs, client_declares(relay.session.client_capabilities, _TAKES))


def client_token(server: str, theirs: Any, previous: str | None) -> str:
    """The client's name for a token the server creates: `lspmux/<server>/<token>`, and
    `…#2`, `…#3` when the server creates the same token again (rust-analyzer re-creates
    `rustAnalyzer/Fetching` for every fetch): a token created at the client is used once, as
    the protocol says, so a client that remembers its tokens never sees one created twice."""
    base = f"lspmux/{server}/{theirs}"
    if previous is None:
        return base
    generation = previous[len(base) + 1 :] if previous.startswith(f"{base}#") else ""
    return f"{base}#{int(generation) + 1 if generation.isdigit() else 2}"


def adopt(relay: ServerRelay, backend: Backend, theirs: Any, takes: bool) -> str:
    """This client's name for the server's progress token `theirs` (a new one for each
    creation), created at the client when it takes progress."""
    key = (id(backend), theirs)
    previous = relay.progress_tokens.get(key)
    if previous is not None:  # that progress is over: its name is not used again
        relay.progress_owners.pop(previous, None)
    token = client_token(backend.name, theirs, previous)
    relay.progress_tokens[key] = token
    relay.progress_owners[token] = (backend, theirs)
    if takes:
        relay.to_client(
            lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, {"token": token}, lambda _r: None, timeout=None
        )
    return token


def track(pool: Pool, backend: Backend, msg: Message) -> None:
    """Once per server instance: which of its tokens are open and their latest title, message
    and percentage (a server reporting progress is working, `Backend.silent`; `lspmux status`
    shows it, `Backend.progress_now`), then to every session of the server."""
    params = msg.get("params")
    token = params.get("token") if isinstance(params, dict) else None
    value = params.get("value") if isinstance(params, dict) else None
    if isinstance(token, int | str) and isinstance(value, dict):
        kind = value.get("kind")
        if kind == "begin":
            backend.progress_open[token] = {"title": value.get("title")}
        if kind == "end":
            backend.progress_open.pop(token, None)
        elif token in backend.progress_open:  # begin and report: the latest state, for status
            now = backend.progress_open[token]
            now.update((k, value[k]) for k in ("message", "percentage") if k in value)
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
    if isinstance(params.get("value"), dict):
        params = {**params, "value": titled(backend.name, params["value"])}
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
    if isinstance(token, str) and token.startswith("lspmux/"):
        return  # one of ours whose server created its token again since: that progress is over
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
