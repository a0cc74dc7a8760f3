"""Semantic tokens: full and delta requests are asked of the first eligible server as full
results (lspmux computes the deltas itself, `routing/semantic_tokens.py`), with token indices
remapped into the legend lspmux announced; range requests are forwarded as they are; a
server's refresh reaches the clients that take it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import lspmux.encodings.shapes as s
from lspmux.backends.pool import Pool
from lspmux.routing import methods as lsp
from lspmux.routing import semantic_tokens
from lspmux.routing.route import Policy, Route, route
from lspmux.session.exchange import Exchange
from lspmux.session.forward import answered_error, send
from lspmux.session.relay import relay_refresh
from lspmux.session.state import SessionState
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend


def full(ex: Exchange, route: Route, eligible: list[Backend]) -> None:
    session: SessionState = ex.session
    backend = eligible[0]
    client_params = ex.params if isinstance(ex.params, dict) else {}
    method, params = semantic_tokens.backend_request(ex.method, client_params)
    announcement = session.announcement
    legend_map = announcement.legend_maps().get(backend.name) if announcement else None
    if legend_map is not None and legend_map.identity:
        legend_map = None

    def on_msg(resp: Message) -> None:
        if answered_error(ex, backend, resp):
            return
        ex.reply(session.semantic.answer(ex.method, client_params, resp.get("result"), legend_map))

    send(ex, backend, method, params, on_msg)


REQUESTS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: route(
        Policy.FIRST, "semanticTokens", handler=full, result_shape=s.SEMANTIC_TOKENS
    ),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA: route(
        Policy.FIRST, "semanticTokens", handler=full, result_shape=s.SEMANTIC_TOKENS
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
