"""`textDocument/documentSymbol` for lspmux's own use (Locate), cached per document version.

Asks the file's eligible backends in configuration order and keeps the first non-empty answer;
an unchanged document is asked once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lspmux.backends.documents import HeldText
from lspmux.errors import ContentModified
from lspmux.routing import methods as lsp
from lspmux.routing.table import CLIENT_REQUESTS
from lspmux.session import forward, positions
from lspmux.session.state import SessionState

log = logging.getLogger("lspmux.session")

_ROUTE = CLIENT_REQUESTS[lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL]


async def document_symbols(
    session: SessionState, uri: str, text: str, version: int | None
) -> list[Any] | None:
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
        if not backend.supports(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, _ROUTE):
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
