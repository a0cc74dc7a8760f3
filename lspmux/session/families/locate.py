"""lspmux's own `locate/*` methods: a position or a range found by what is written there (see
docs/locate.md), and the `textDocument/documentSymbol` Locate asks the servers for. The Locate
engine loads at its first use, not at start."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable
from typing import Any

from lspmux.backends.documents import HeldText
from lspmux.errors import ContentModified
from lspmux.routing import methods as lsp
from lspmux.routing.capabilities import capability_of
from lspmux.routing.route import Policy, Route, route
from lspmux.session import forward, positions
from lspmux.session.exchange import Exchange
from lspmux.session.families import forwarded
from lspmux.session.state import SessionState

LOCATE_RESOLVE = "locate/resolve"
LOCATE_RESOLVE_RANGE = "locate/resolveRange"
LOCATE_DESCRIBE = "locate/describe"


def resolve(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.resolve(session, ex.params or {})


def resolve_range(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.resolve_range(session, ex.params or {})


def describe(session: SessionState, ex: Exchange) -> Awaitable[Any]:
    from lspmux.locate import methods

    return methods.describe(session, ex.params or {})


log = logging.getLogger("lspmux.session")

#: The route a client's documentSymbol takes, with its capability as the table gives it: which
#: servers Locate may ask (the table, which assembles this module's routes, is not imported).
_SYMBOLS = dataclasses.replace(
    forwarded.REQUESTS[lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL],
    capability=capability_of(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL),
)


async def document_symbols(
    session: SessionState, uri: str, text: str, version: int | None
) -> list[Any] | None:
    """`textDocument/documentSymbol` for Locate, cached per document version: the file's
    eligible servers are asked in configuration order and the first non-empty answer kept; an
    unchanged document is asked once."""
    cache: dict[str, tuple[Any, list[Any] | None]] = session.__dict__.setdefault(
        "_symbol_cache", {}
    )
    key = (version, hash(text)) if version is None else (version, None)
    hit = cache.get(uri)
    if hit is not None and hit[0] == key:
        return hit[1]
    backends = await forward.ensure_running(session.backends_for(uri))
    result: list[Any] | None = None
    # A file the client has not opened is opened on the backends for the question only.
    borrowed = uri not in session.documents
    holder = HeldText(text)  # Locate's own holder of the file, for this question only
    if borrowed:
        for backend in backends:
            language_id = backend.config.language_ids[0] if backend.config.language_ids else ""
            backend.open_document(holder, uri, language_id, 0, text)
    try:
        result = await _ask(session, backends, uri)
    finally:
        if borrowed:
            for backend in backends:
                backend.close_document(holder, uri)
    cache[uri] = (key, result)
    return result


#: How long a server still loading its project (rust-analyzer answers ContentModified, "waiting
#: for cargo metadata", until it has) is asked again for a document's symbols.
LOADING_WAIT = 30.0


async def _call_loaded(backend: Any, params: dict[str, Any]) -> Any:
    """documentSymbol, asked again while the server answers ContentModified (still loading)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOADING_WAIT
    delay = 0.05
    while True:
        try:
            return await backend.call(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params)
        except ContentModified:
            if loop.time() + delay > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def _ask(session: SessionState, backends: list[Any], uri: str) -> list[Any] | None:
    result: list[Any] | None = None
    for backend in backends:
        if not backend.supports(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, _SYMBOLS):
            continue
        params = {"textDocument": {"uri": uri}}
        try:
            answer = await _call_loaded(backend, params)
            if backend.position_encoding != session.encoding:
                convert = positions.answer_from(
                    session, backend, lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params
                )
                answer = convert({"result": answer})["result"]
        except Exception as exc:
            log.info("%s: documentSymbol failed: %s", backend.label, exc)
            continue
        if answer:
            result = answer
            break
        if result is None:
            result = answer
    return result


REQUESTS: dict[str, Route] = {
    LOCATE_RESOLVE: route(Policy.LOCAL, "locate", handler=resolve),
    LOCATE_RESOLVE_RANGE: route(Policy.LOCAL, "locate", handler=resolve_range),
    LOCATE_DESCRIBE: route(Policy.LOCAL, "locate", handler=describe),
}
