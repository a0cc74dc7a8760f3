"""Server → client messages lspmux passes on: prompts and documents to show (to the client
concerned, `to_one`: the default for a server request no family answers), refreshes (to clients that declared support), log messages (with
the server's name), messages, telemetry and traces, and a server cancelling a request it
relayed (rewritten to the id the client knows)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import lspmux.encodings.shapes as s
from lspmux.backends.pool import Pool
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.relay import ServerRelay, forward, relay_refresh, relay_request
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import PoolSession, Reply

log = logging.getLogger("lspmux.pool")


def cancel(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    """The server gave up a request it sent: cancel it under the id the client knows."""
    params = msg.get("params")
    if not isinstance(params, dict):
        return
    client_id = relay.relayed.get((id(backend), params.get("id")))
    if client_id is not None:
        relay.session.conn_send(
            {"jsonrpc": "2.0", "method": lsp.CANCEL_REQUEST, "params": {"id": client_id}}
        )


def tell_client(session: SessionState, message: str, *, severity: int, shown: bool) -> None:
    """A message of lspmux's own to the client: shown to the user (`window/showMessage`) or
    logged (`window/logMessage`); `severity` is the LSP MessageType (1 error … 4 log)."""
    method = lsp.WINDOW_SHOW_MESSAGE if shown else lsp.WINDOW_LOG_MESSAGE
    session.conn_send(
        {"jsonrpc": "2.0", "method": method, "params": {"type": severity, "message": message}}
    )


def ready(relay: ServerRelay, backend: Backend) -> None:
    """The server serves this client now (it started, or the client attached to it running):
    said once in the editor's log, at info."""
    version = backend.server_info.get("version")
    named = f"{backend.name} {version}" if isinstance(version, str) and version else backend.name
    relay.session.tell(f"lspmux: {named} ready for {backend.root}", severity=3, shown=False)


def backend_event(relay: ServerRelay, backend: Backend, event: str, detail: str) -> None:
    """A server failed for good (shown, an error), is restarting (logged, a warning) or is
    ready (logged, info): once per event, in the editor's log at the matching level."""
    if event == "started":
        ready(relay, backend)
    elif event == "failed":
        relay.session.tell(_with_stderr(detail, backend, "\n"), severity=1, shown=True)
    elif event == "restarting":
        said = _with_stderr(f"lspmux: {backend.name} {detail}", backend, "; ")
        relay.session.tell(f"{said}; restarting", severity=2, shown=False)


def _with_stderr(text: str, backend: Backend, sep: str) -> str:
    """`text` and the last lines the server wrote to its stderr, if any: its own words on why
    it ended reach the user, whose editor no longer gets lspmux's log at info."""
    tail = [line.strip() for line in backend.stderr_tail if line.strip()][-3:]
    return f"{text}{sep}its stderr ended with: {' | '.join(tail)}" if tail else text


def log_message(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    params = msg.get("params")
    if isinstance(params, dict) and isinstance(params.get("message"), str):
        params = {**params, "message": f"[{backend.name}] {params['message']}"}
    relay.session.conn_send({"jsonrpc": "2.0", "method": msg["method"], "params": params})


def to_one(pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None:
    """A server request to the one session concerned, which answers it. Edits and prompts
    go to the session that caused them: the one whose command this backend is running
    (executeCommand → applyEdit; the latest sent, when several are), else one waiting for
    this backend, else one holding a document the request names, else the most recently
    active one."""
    sessions = pool.sessions_of(backend)
    if not sessions:
        log.info("%s: %s with no client attached; answering null", backend.label, msg["method"])
        reply(None)
        return
    running = [(c, s) for s in sessions if (c := _running_command(s, backend)) is not None]
    if running:
        max(running, key=lambda pair: pair[0])[1].backend_request(backend, msg, reply)
        return
    candidates = [s for s in sessions if _waits_on(s, backend)] or [
        s for s in sessions if _holds_any(backend, s, _uris_in(msg.get("params")))
    ]
    target = max(candidates or sessions, key=lambda s: s.last_active)
    target.backend_request(backend, msg, reply)


def _uris_in(params: Any) -> set[str]:
    """The document URIs a server request names (an edit's files, a document to show)."""
    if not isinstance(params, dict):
        return set()
    uris: set[str] = set()
    if isinstance(params.get("uri"), str):
        uris.add(params["uri"])
    edit = params.get("edit")
    if isinstance(edit, dict):
        changes = edit.get("changes")
        if isinstance(changes, dict):
            uris.update(k for k in changes if isinstance(k, str))
        for change in edit.get("documentChanges") or []:
            td = change.get("textDocument") if isinstance(change, dict) else None
            if isinstance(td, dict) and isinstance(td.get("uri"), str):
                uris.add(td["uri"])
    return uris


def _holds_any(backend: Backend, session: PoolSession, uris: set[str]) -> bool:
    for uri in uris:
        doc = backend.documents.get(uri)
        if doc is not None and session in doc.holders:
            return True
    return False


#: Client requests during which a server asks the client to apply an edit or answer a prompt.
COMMANDS = frozenset(
    (lsp.WORKSPACE_EXECUTE_COMMAND, lsp.CODE_ACTION_RESOLVE, lsp.CODE_LENS_RESOLVE)
)


def _running_command(session: PoolSession, backend: Backend) -> int | None:
    """The highest id under which `backend` runs one of `session`'s commands (a server's ids
    grow: the highest is the latest sent), or None."""
    inflight = getattr(session, "inflight", None) or {}
    ids = [
        backend_id
        for ex in inflight.values()
        if getattr(ex, "method", None) in COMMANDS
        for b, backend_id in getattr(ex, "targets", ())
        if b is backend and isinstance(backend_id, int)
    ]
    return max(ids) if ids else None


def _waits_on(session: PoolSession, backend: Backend) -> bool:
    """Whether one of `session`'s requests in flight was sent to `backend`."""
    inflight = getattr(session, "inflight", None) or {}
    return any(b is backend for ex in inflight.values() for b, _ in getattr(ex, "targets", ()))


def _refresh(feature: str, client_capability: str) -> Route:
    return route(
        Policy.REFRESH,
        feature,
        handler=relay_refresh,
        instance=Pool.answer_for_every_session,
        client_capability=client_capability,
    )


SERVER_REQUESTS: dict[str, Route] = {
    lsp.WORKSPACE_INLAY_HINT_REFRESH: _refresh("inlayHint", "workspace.inlayHint.refreshSupport"),
    lsp.WORKSPACE_INLINE_VALUE_REFRESH: _refresh(
        "inlineValue", "workspace.inlineValue.refreshSupport"
    ),
    lsp.WORKSPACE_CODE_LENS_REFRESH: _refresh("codeLens", "workspace.codeLens.refreshSupport"),
    lsp.WORKSPACE_FOLDING_RANGE_REFRESH: _refresh(
        "foldingRange", "workspace.foldingRange.refreshSupport"
    ),
    lsp.WINDOW_SHOW_MESSAGE_REQUEST: route(
        Policy.RELAY, "sync", handler=relay_request, instance=to_one
    ),
    lsp.WINDOW_SHOW_DOCUMENT: route(
        Policy.RELAY,
        "sync",
        handler=relay_request,
        instance=to_one,
        client_capability="window.showDocument.support",
        declined={"success": False},
        params_shape=s.own_uri(s.keyed(selection=s.RANGE)),
    ),
}

SERVER_NOTIFICATIONS: dict[str, Route] = {
    lsp.CANCEL_REQUEST: route(Policy.CANCEL, "sync", handler=cancel),
    lsp.WINDOW_LOG_MESSAGE: route(Policy.RELAY, "sync", handler=log_message, chatter=True),
    lsp.WINDOW_SHOW_MESSAGE: route(Policy.RELAY, "sync", handler=forward),
    lsp.TELEMETRY_EVENT: route(
        Policy.RELAY, "sync", handler=forward, chatter=True, params_shape=s.ANY_POSITIONS
    ),
    lsp.LOG_TRACE: route(Policy.RELAY, "sync", handler=forward, chatter=True),
}
