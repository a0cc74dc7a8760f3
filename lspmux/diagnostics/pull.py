"""Pulling diagnostics (`textDocument/diagnostic`, LSP 3.17) from backends that offer it.

A server that advertises `diagnosticProvider` (statically, like ruff, or by registration) may
never push. lspmux asks it after every open, change (debounced) and save, and whenever the
server sends `workspace/diagnostic/refresh`; the report becomes that server's slice in the
session's diagnostics store, exactly like a push. `resultId`s are kept per (server, document) so
an unchanged report costs nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lspmux.errors import JsonRpcError, ServerCancelled
from lspmux.routing import methods as lsp
from lspmux.session import positions

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.session.state import SessionState

log = logging.getLogger("lspmux.diagnostics")

#: Seconds to wait after a change before pulling (a newer change restarts the wait).
DEBOUNCE = 0.15


def offers_pull(backend: Backend) -> bool:
    return bool(backend.capabilities.get("diagnosticProvider")) or (
        lsp.TEXT_DOCUMENT_DIAGNOSTIC in backend.registered
    )


class Puller:
    """Per session: schedules pulls per (backend, uri) and stores the reports."""

    def __init__(self, session: SessionState) -> None:
        self.session = session
        self._result_ids: dict[tuple[int, str], str] = {}
        self._timers: dict[tuple[int, str], asyncio.TimerHandle] = {}
        #: Pulls sent and not yet answered, per (backend, uri).
        self._inflight: dict[tuple[int, str], int] = {}

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
            if "error" in resp:
                err = JsonRpcError.from_error(resp["error"])
                if isinstance(err, ServerCancelled) and err.retrigger:
                    self.schedule(backend, uri, delay=DEBOUNCE)
                else:
                    log.info("%s: diagnostic pull for %s failed: %s", backend.label, uri, err)
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

        if backend.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, params, done) is not None:
            self._inflight[key] = self._inflight.get(key, 0) + 1
