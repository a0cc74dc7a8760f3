"""Diagnostics: what servers publish goes into the session's store (per source; the client sees
the union), pulled diagnostics are answered from that store, `workspace/diagnostic/refresh`
makes lspmux pull again, and `lspmux/diagnosticStatus` says which sources checked a file."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from lspmux.backends.pool import Pool
from lspmux.errors import InvalidParams
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session import positions
from lspmux.session.documents import uri_of
from lspmux.session.exchange import Exchange
from lspmux.session.linting import diagnostic_status, wait_settled
from lspmux.session.relay import ServerRelay, relay_refresh
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.backends.pool import Reply

DIAGNOSTIC_STATUS = "lspmux/diagnosticStatus"


async def document_diagnostic(session: SessionState, ex: Exchange) -> Any:
    """textDocument/diagnostic answered from the merged store (results of every source)."""
    params = ex.params if isinstance(ex.params, dict) else {}
    uri = uri_of(params)
    if uri is None:
        raise InvalidParams("textDocument/diagnostic: textDocument.uri is missing")
    await wait_settled(session, uri)
    result_id = session.store.result_id(uri)
    if params.get("previousResultId") == result_id:
        return {"kind": "unchanged", "resultId": result_id}
    return {"kind": "full", "resultId": result_id, "items": session.store.merged(uri)}


def workspace_diagnostic(session: SessionState, ex: Exchange) -> Any:
    return {"items": []}  # open documents' diagnostics come per document


def status(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    return diagnostic_status(session, {"params": ex.params})


def to_holders(pool: Pool, backend: Backend, msg: Message) -> None:
    """A shared server's publish for an open document goes only to the sessions holding it;
    for any other file, to every session of the server."""
    sessions = pool.sessions_of(backend)
    if len(sessions) > 1:
        params = msg.get("params")
        uri = params.get("uri") if isinstance(params, dict) else None
        doc = backend.documents.get(uri) if isinstance(uri, str) else None
        if doc is not None:
            sessions = {s for s in sessions if s in doc.holders}
    pool.tell(sessions, backend, msg)


def publish(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    session = relay.session
    params = msg.get("params")
    if backend.position_encoding != session.encoding:
        params = positions.from_server(session, backend, msg["method"], params)
    if isinstance(params, dict):
        session.publishing.publish_from(backend, params)


def refresh(relay: ServerRelay, route: Route, backend: Backend, msg: Message, reply: Reply) -> None:
    """The server's results changed: lspmux pulls again, and passes the refresh on to a client
    that takes it."""
    relay.session.puller.schedule_all(backend)
    relay_refresh(relay, route, backend, msg, reply)


REQUESTS: dict[str, Route] = {
    DIAGNOSTIC_STATUS: route(Policy.LOCAL, "diagnostics", handler=status),
    lsp.TEXT_DOCUMENT_DIAGNOSTIC: route(
        Policy.DIAGNOSTICS, "diagnostics", handler=document_diagnostic
    ),
    lsp.WORKSPACE_DIAGNOSTIC: route(
        Policy.DIAGNOSTICS, "diagnostics", handler=workspace_diagnostic
    ),
}

SERVER_REQUESTS: dict[str, Route] = {
    lsp.WORKSPACE_DIAGNOSTIC_REFRESH: route(
        Policy.REFRESH,
        "diagnostics",
        handler=refresh,
        instance=Pool.answer_for_every_session,
        client_capability="workspace.diagnostics.refreshSupport",
    ),
}

SERVER_NOTIFICATIONS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: route(
        Policy.STORE, "diagnostics", handler=publish, instance=to_holders
    ),
}
