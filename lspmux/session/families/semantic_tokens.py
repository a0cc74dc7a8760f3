"""Semantic tokens: full and delta requests are asked of the first eligible server as full
results (lspmux computes the deltas itself, `routing/semantic_tokens.py`), with token indices
remapped into the legend lspmux announced; range requests are forwarded as they are; a
server's refresh reaches the clients that take it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import lspmux.encodings.shapes as s
from lspmux.backends.pool import Pool
from lspmux.routing import methods as lsp
from lspmux.routing import semantic_tokens
from lspmux.routing.route import Policy, Route, route
from lspmux.routing.semantic_tokens import DeltaBridge
from lspmux.session.exchange import Exchange
from lspmux.session.forward import answered_error, send
from lspmux.session.relay import relay_refresh
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend


def full(ex: Exchange, route: Route, eligible: list[Backend]) -> None:
    """`semanticTokens/full`: the server's full result, remembered for the next delta."""
    _ask_full(ex, eligible, _params(ex), lambda bridge, uri, result: bridge.full(uri, result))


def delta(ex: Exchange, route: Route, eligible: list[Backend]) -> None:
    """`semanticTokens/full/delta`: the server is asked for the full result, and lspmux answers
    the edits from the result the client holds (or a full result when it no longer knows it)."""
    params = _params(ex)
    previous = params.get("previousResultId")
    full_params = {k: v for k, v in params.items() if k != "previousResultId"}

    def bridged(bridge: DeltaBridge, uri: str, result: Any) -> Any:
        return bridge.delta(uri, previous, result)

    _ask_full(ex, eligible, full_params, bridged)


def _params(ex: Exchange) -> dict[str, Any]:
    return dict(ex.params) if isinstance(ex.params, dict) else {}


def _ask_full(
    ex: Exchange,
    eligible: list[Backend],
    params: dict[str, Any],
    bridged: Callable[[DeltaBridge, str, Any], Any],
) -> None:
    """Ask the first eligible server for the document's full tokens; its answer, remapped into
    the announced legend, is `bridged` into the client's answer."""
    session: SessionState = ex.session
    backend = eligible[0]
    uri = str((params.get("textDocument") or {}).get("uri"))
    announcement = session.announcement
    legend_map = announcement.legend_maps().get(backend.name) if announcement else None
    if legend_map is not None and legend_map.identity:
        legend_map = None

    def on_msg(resp: Message) -> None:
        if answered_error(ex, backend, resp):
            return
        result = semantic_tokens.remapped(resp.get("result"), legend_map)
        ex.reply(bridged(session.semantic, uri, result))

    send(ex, backend, lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, params, on_msg)


REQUESTS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: route(
        Policy.FIRST, "semanticTokens", handler=full, result_shape=s.SEMANTIC_TOKENS
    ),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA: route(
        Policy.FIRST, "semanticTokens", handler=delta, result_shape=s.SEMANTIC_TOKENS
    ),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: route(
        Policy.FIRST,
        "semanticTokens",
        range=True,
        needs_option="range",
        params_shape=s.WITH_RANGE_PARAMS,
        result_shape=s.SEMANTIC_TOKENS,
    ),
}

SERVER_REQUESTS: dict[str, Route] = {
    lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH: route(
        Policy.REFRESH,
        "semanticTokens",
        handler=relay_refresh,
        instance=Pool.answer_for_every_session,
        client_capability="workspace.semanticTokens.refreshSupport",
    ),
}
