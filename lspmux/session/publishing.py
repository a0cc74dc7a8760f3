"""What one client is shown of the merged diagnostics: a server's publish into the session's
store (stale versions dropped; a shared server's result for another client's text answered by
re-sending this client's text, at most once per version), then pushed to the client — or, to a
client that pulls, one `workspace/diagnostic/refresh` per loop iteration."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lspmux.routing import methods as lsp
from lspmux.session.state import SessionState

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

PUBLISH = lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


class Publishing:
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
        self.session.conn_send({"jsonrpc": "2.0", "method": PUBLISH, "params": out})

    def clear(self, uri: str) -> None:
        """A closed document shows no diagnostics any more (push clients keep the last
        publish until told otherwise)."""
        if not self.session.pull_diagnostics:
            self.session.conn_send(
                {"jsonrpc": "2.0", "method": PUBLISH, "params": {"uri": uri, "diagnostics": []}}
            )

    def _refresh_client(self) -> None:
        self._refresh_pending = False
        link = self.session.link
        if link.conn is not None and not link.conn.closed and self.session.state == "running":
            link.conn.request(lsp.WORKSPACE_DIAGNOSTIC_REFRESH, None, lambda _r: None, timeout=30)
