"""Diagnostics: what servers publish goes into the session's store (per source; the client sees
the union), pulled diagnostics are answered from that store, `workspace/diagnostic/refresh`
makes lspmux pull again, and `lspmux/diagnosticStatus` says which sources checked a file.
`Publishing` is what the client is shown: pushed, or a refresh to a client that pulls.
`Puller` asks the servers that offer pull diagnostics (each session has one)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import lspmux.encodings.shapes as s
from lspmux.backends.pool import Pool
from lspmux.errors import InvalidParams, JsonRpcError, ServerCancelled
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

log = logging.getLogger("lspmux.session")

DIAGNOSTIC_STATUS = "lspmux/diagnosticStatus"


#: Seconds to wait after a change before pulling (a newer change restarts the wait).
DEBOUNCE = 0.15


def offers_pull(backend: Backend) -> bool:
    return bool(backend.capabilities.get("diagnosticProvider")) or (
        lsp.TEXT_DOCUMENT_DIAGNOSTIC in backend.registered
    )


class Puller:
    """Pulling diagnostics (`textDocument/diagnostic`, LSP 3.17) from servers that offer it,
    per session: scheduled per (backend, uri), and the reports stored.

    A server that advertises `diagnosticProvider` (statically, like ruff, or by registration)
    may never push. lspmux asks it after every open, change (debounced) and save, and whenever
    the server sends `workspace/diagnostic/refresh`; the report becomes that server's slice in
    the session's diagnostics store, exactly like a push. `resultId`s are kept per (server,
    document) so an unchanged report costs nothing.

    One pull per text: while a pull for the document's current version is unanswered, a
    later trigger for that same text (a refresh, a registration, a save) is answered by it
    and sends nothing — basedpyright sends `workspace/diagnostic/refresh` when the analysis
    that answers the pull ends, often before the answer. A newer version pulls again (the
    older answer is dropped). If the pull that absorbed triggers fails, it is sent again."""

    def __init__(self, session: SessionState) -> None:
        self.session = session
        self._result_ids: dict[tuple[int, str], str] = {}
        self._timers: dict[tuple[int, str], asyncio.TimerHandle] = {}
        #: Pulls sent and not yet answered, per (backend, uri).
        self._inflight: dict[tuple[int, str], int] = {}
        #: (backend, uri) → (document version, token) of the newest pull not yet answered.
        self._pulling: dict[tuple[int, str], tuple[int, object]] = {}
        #: Keys whose unanswered pull absorbed later triggers (pulled again if it fails).
        self._coalesced: set[tuple[int, str]] = set()

    def schedule(self, backend: Backend, uri: str, *, delay: float = 0.0) -> None:
        if backend.state != "running" or not offers_pull(backend):
            return
        if not backend.config.feature_enabled("diagnostics"):
            return
        key = (id(backend), uri)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, self._pull, backend, uri)

    def schedule_all(self, backend: Backend) -> None:
        for doc in self.session.documents:
            if doc.uri in backend.documents:
                self.schedule(backend, doc.uri)

    def busy(self, uri: str, backend: Backend | None = None) -> bool:
        """Whether a pull for `uri` (from `backend`, or any) is scheduled or unanswered."""
        if backend is not None:
            key = (id(backend), uri)
            return key in self._timers or self._inflight.get(key, 0) > 0
        return any(k[1] == uri for k in self._timers) or any(
            k[1] == uri and n > 0 for k, n in self._inflight.items()
        )

    def forget(self, uri: str) -> None:
        for key in [k for k in self._timers if k[1] == uri]:
            self._timers.pop(key).cancel()
        for key in [k for k in self._result_ids if k[1] == uri]:
            del self._result_ids[key]
        for key in [k for k in self._pulling if k[1] == uri]:  # a reopened text pulls anew
            del self._pulling[key]
            self._coalesced.discard(key)

    def _pull(self, backend: Backend, uri: str) -> None:
        key = (id(backend), uri)
        self._timers.pop(key, None)
        doc = self.session.documents.get(uri)
        if doc is None:
            return
        held = backend.documents
        if uri in held and not held.holds(self.session, uri):  # a shared server has another's
            self.session.resync_document(backend, uri)  # at most once per version of ours
            if not held.holds(self.session, uri):
                return  # keep what this session has for its own text
        version = doc.version
        pulling = self._pulling.get(key)
        if pulling is not None and pulling[0] == version:
            self._coalesced.add(key)  # the pull on its way answers for this text
            log.debug("%s: %s v%d is being pulled already", backend.label, uri, version)
            return
        token = object()
        params: dict[str, Any] = {"textDocument": {"uri": uri}}
        provider = backend.capabilities.get("diagnosticProvider")
        if isinstance(provider, dict) and provider.get("identifier"):
            params["identifier"] = provider["identifier"]
        previous = self._result_ids.get(key)
        if previous is not None:
            params["previousResultId"] = previous

        def done(resp: dict[str, Any]) -> None:
            left = self._inflight.get(key, 1) - 1
            if left > 0:
                self._inflight[key] = left
            else:
                self._inflight.pop(key, None)
            absorbed = False
            if self._pulling.get(key, (None, None))[1] is token:
                del self._pulling[key]
                absorbed = key in self._coalesced
                self._coalesced.discard(key)
            if "error" in resp:
                err = JsonRpcError.from_error(resp["error"])
                if isinstance(err, ServerCancelled) and err.retrigger:
                    self.schedule(backend, uri, delay=DEBOUNCE)
                else:
                    log.info("%s: diagnostic pull for %s failed: %s", backend.label, uri, err)
                    if absorbed:  # the triggers it answered for are not answered
                        self.schedule(backend, uri, delay=DEBOUNCE)
                return
            if backend.position_encoding != self.session.encoding:
                resp = positions.answer_from(
                    self.session, backend, lsp.TEXT_DOCUMENT_DIAGNOSTIC, params
                )(resp)
            report = resp.get("result") or {}
            current = self.session.documents.get(uri)
            if current is None or current.version != version:
                return  # the text changed meanwhile; a newer pull is on its way
            if report.get("resultId"):
                self._result_ids[key] = report["resultId"]
            if report.get("kind") == "unchanged":
                return
            items = report.get("items") or []
            if self.session.store.update(uri, backend.name, items, version):
                self.session.publish(uri)

        self._pulling[key] = (version, token)
        self._coalesced.discard(key)  # triggers absorbed by an older text's pull: this answers
        if backend.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, params, done) is not None:
            self._inflight[key] = self._inflight.get(key, 0) + 1


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
    for any other file, to every session of the server. The server diagnoses: it is waited for
    (`Backend.silent`)."""
    backend.published = True
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


class Publishing:
    """What one client is shown of the merged diagnostics: a server's publish into the
    session's store (stale versions dropped; a shared server's result for another client's
    text answered by re-sending this client's text, at most once per version), then pushed
    to the client — or, to a client that pulls, one `workspace/diagnostic/refresh` per loop
    iteration. The session holds one (`session.publishing`)."""

    def __init__(self, session: SessionState) -> None:
        self.session = session
        #: (backend, uri) → the version of this session's text the backend last diagnosed
        #: for it, or was last re-sent (see `resync_document`).
        self._synced_for: dict[tuple[int, str], int] = {}
        self._refresh_pending = False

    def publish_from(self, backend: Backend, params: dict[str, Any]) -> None:
        session = self.session
        uri = params.get("uri")
        if not isinstance(uri, str):
            return
        if not backend.config.feature_enabled("diagnostics"):
            return
        version = params.get("version")
        doc = self.session.documents.get(uri)
        if doc is not None and uri in backend.documents:
            mine = backend.holder_version(uri, session, version)
            if mine is None:
                return  # stale: the server has seen a newer text since
            if not backend.documents.holds(session, uri):
                self.resync_document(backend, uri)  # computed for another client's text
                return
            self._synced_for[(id(backend), uri)] = doc.version
            version = mine
        if self.session.store.update(uri, backend.name, params.get("diagnostics") or [], version):
            self.publish(uri)

    def resync_document(self, backend: Backend, uri: str) -> None:
        """A shared backend holds the text of the client that changed the document last, so a
        publish for another client's text is never shown here. When this session has no
        diagnostics from `backend` for its current text yet, its text is sent back, at most
        once per version of this session's document (two clients cannot ping-pong)."""
        doc = self.session.documents.get(uri)
        key = (id(backend), uri)
        if doc is None or self._synced_for.get(key) == doc.version:
            return
        self._synced_for[key] = doc.version
        log.debug(
            "%s: re-sending %s to %s for its diagnostics",
            self.session.client_id,
            uri,
            backend.label,
        )
        backend.resync(self.session, uri)

    def publish(self, uri: str) -> None:
        """The merged diagnostics of `uri` changed: push them, or — to a client that pulls —
        ask it to pull again (one refresh for the changes of one loop iteration)."""
        if self.session.pull_diagnostics:
            if not self._refresh_pending:
                self._refresh_pending = True
                asyncio.get_running_loop().call_soon(self._refresh_client)
            return
        doc = self.session.documents.get(uri)
        out: dict[str, Any] = {"uri": uri, "diagnostics": self.session.store.merged(uri)}
        if doc is not None:
            out["version"] = doc.version
        self.session.conn_send(
            {"jsonrpc": "2.0", "method": lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "params": out}
        )

    def clear(self, uri: str) -> None:
        """A closed document shows no diagnostics any more (push clients keep the last
        publish until told otherwise)."""
        if not self.session.pull_diagnostics:
            self.session.conn_send(
                {
                    "jsonrpc": "2.0",
                    "method": lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                    "params": {"uri": uri, "diagnostics": []},
                }
            )

    def _refresh_client(self) -> None:
        self._refresh_pending = False
        link = self.session.link
        if link.conn is not None and not link.conn.closed and self.session.state == "running":
            link.conn.request(lsp.WORKSPACE_DIAGNOSTIC_REFRESH, None, lambda _r: None, timeout=30)


REQUESTS: dict[str, Route] = {
    DIAGNOSTIC_STATUS: route(Policy.LOCAL, "diagnostics", handler=status),
    lsp.TEXT_DOCUMENT_DIAGNOSTIC: route(
        Policy.DIAGNOSTICS,
        "diagnostics",
        handler=document_diagnostic,
        result_shape=s.DOCUMENT_REPORT,
    ),
    lsp.WORKSPACE_DIAGNOSTIC: route(
        Policy.DIAGNOSTICS,
        "diagnostics",
        handler=workspace_diagnostic,
        result_shape=s.WORKSPACE_REPORT,
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
        Policy.STORE,
        "diagnostics",
        handler=publish,
        instance=to_holders,
        params_shape=s.own_uri(s.keyed(diagnostics=s.DIAGNOSTICS)),
    ),
}
