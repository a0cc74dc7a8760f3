"""Server → client messages lspmux passes on: prompts and documents to show (to the client
concerned, `Pool.to_one`), refreshes (to clients that declared support), log messages (with
the server's name), messages, telemetry and traces, and a server cancelling a request it
relayed (rewritten to the id the client knows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lspmux.backends.pool import Pool
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route
from lspmux.session.relay import ServerRelay, forward, relay_refresh, relay_request
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend


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


def log_message(relay: ServerRelay, backend: Backend, msg: Message) -> None:
    params = msg.get("params")
    if isinstance(params, dict) and isinstance(params.get("message"), str):
        params = {**params, "message": f"[{backend.name}] {params['message']}"}
    relay.session.conn_send({"jsonrpc": "2.0", "method": msg["method"], "params": params})


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
    lsp.WINDOW_SHOW_MESSAGE_REQUEST: route(Policy.RELAY, "sync", handler=relay_request),
    lsp.WINDOW_SHOW_DOCUMENT: route(
        Policy.RELAY,
        "sync",
        handler=relay_request,
        client_capability="window.showDocument.support",
        declined={"success": False},
    ),
}

SERVER_NOTIFICATIONS: dict[str, Route] = {
    lsp.CANCEL_REQUEST: route(Policy.CANCEL, "sync", handler=cancel),
    lsp.WINDOW_LOG_MESSAGE: route(Policy.RELAY, "sync", handler=log_message, chatter=True),
    lsp.WINDOW_SHOW_MESSAGE: route(Policy.RELAY, "sync", handler=forward),
    lsp.TELEMETRY_EVENT: route(Policy.RELAY, "sync", handler=forward, chatter=True),
    lsp.LOG_TRACE: route(Policy.RELAY, "sync", handler=forward, chatter=True),
}
