"""Backend instances keyed by (server definition, canonical workspace root), and the fan-out of
what backends say to the sessions concerned.

In `lspmux proxy` the pool is private to one session; in the daemon every session shares it.
Either way a backend is created once per (server, realpath(root)), started on first use, and
its notifications reach only the sessions attached to it: diagnostics to those holding the
document, progress to the session that owns the token, prompts and edits to the most recently
active session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from lspmux.backends.backend import Backend, Spawn
from lspmux.config import restricted
from lspmux.config.model import ServerConfig
from lspmux.routing.table import SERVER_NOTIFICATIONS, SERVER_REQUESTS, Policy
from lspmux.wire.messages import Message

log = logging.getLogger("lspmux.pool")


class PoolSession(Protocol):
    """What the pool needs of a session."""

    client_id: str
    last_active: float

    def backend_notification(self, backend: Backend, msg: Message) -> None: ...

    def backend_request(
        self, backend: Backend, msg: Message, reply: Callable[[Any], None]
    ) -> None: ...

    def backend_event(self, backend: Backend, event: str, detail: str) -> None: ...


class Pool:
    def __init__(
        self,
        *,
        shared: bool = False,
        client_capabilities: Mapping[str, Any] | None = None,
        spawn: Spawn | None = None,
    ) -> None:
        self.shared = shared
        self.spawn = spawn
        self.initialization_options: Any = None
        self.client_capabilities = client_capabilities
        self.backends: dict[tuple[str, str], Backend] = {}
        self.sessions: dict[Backend, set[PoolSession]] = {}
        self.created_at = time.monotonic()

    def get(
        self, server: ServerConfig, root: Path, argv: list[str] | None = None
    ) -> Backend | None:
        """The backend for (server, root), created (not started) when needed, in the
        server's restricted mode where the user has not trusted `root`; None when the server's
        executable cannot be found or it may not run there."""
        canonical = Path(os.path.realpath(root))
        key = (server.name, str(canonical))
        backend = self.backends.get(key)
        if backend is not None:
            return backend
        runs = restricted.for_root(server, canonical)  # restricted mode, unless trusted
        argv = argv or (runs.resolve_command(canonical) if runs is not None else None)
        if runs is None or argv is None:
            return None
        server = runs
        backend = Backend(
            server,
            canonical,
            argv,
            host=self,
            client_capabilities=self.client_capabilities,
            spawn=self.spawn,
            # A private pool serves one client: its initializationOptions reach its servers
            # (under the configured ones). A shared server is not one client's.
            client_initialization_options=None if self.shared else self.initialization_options,
            pull_diagnostics=True,  # lspmux pulls from servers that offer it, for every client
        )
        self.backends[key] = backend
        self.sessions[backend] = set()
        return backend

    def attach(self, backend: Backend, session: PoolSession) -> None:
        self.sessions.setdefault(backend, set()).add(session)

    def detach(self, session: PoolSession) -> list[Backend]:
        """Forget `session` everywhere; the backends it leaves without any session."""
        orphaned = []
        for backend, sessions in self.sessions.items():
            if session in sessions:
                sessions.discard(session)
                if not sessions:
                    orphaned.append(backend)
        return orphaned

    def sessions_of(self, backend: Backend) -> set[PoolSession]:
        return self.sessions.get(backend, set())

    def remove(self, backend: Backend) -> None:
        """Forget a (stopped) backend: the next `get` for its key creates a new one."""
        self.sessions.pop(backend, None)
        for key, known in list(self.backends.items()):
            if known is backend:
                del self.backends[key]

    async def stop_all(self) -> None:
        backends = list(self.backends.values())
        await asyncio.gather(
            *(b.stop("lspmux is exiting") for b in backends), return_exceptions=True
        )

    def kill_all(self) -> None:
        for backend in self.backends.values():
            backend.kill_now()

    # -- BackendHost ------------------------------------------------------------------------------

    def server_notification(self, backend: Backend, msg: Message) -> None:
        sessions = tuple(self.sessions_of(backend))
        route = SERVER_NOTIFICATIONS.get(msg["method"])
        if route is not None and route.policy is Policy.STORE and len(sessions) > 1:
            uri = (msg.get("params") or {}).get("uri")
            doc = backend.documents.get(uri) if isinstance(uri, str) else None
            if doc is not None:  # an open document: only to the sessions holding it
                sessions = tuple(s for s in sessions if s in doc.holders)
        for session in sessions:
            session.backend_notification(backend, msg)

    def server_request(self, backend: Backend, msg: Message, reply: Callable[[Any], None]) -> None:
        sessions = self.sessions_of(backend)
        route = SERVER_REQUESTS.get(msg["method"])
        policy = route.policy if route is not None else Policy.RELAY
        if policy in (Policy.REGISTER, Policy.PROGRESS, Policy.REFRESH):
            # Backend-wide: every session hears of it; the server gets one answer (null).
            reply(None)
            for session in tuple(sessions):
                session.backend_request(backend, msg, lambda _v: None)
            return
        if not sessions:
            log.info("%s: %s with no client attached; answering null", backend.label, msg["method"])
            reply(None)
            return
        # Edits and prompts go to the session that caused them: the one whose command this
        # backend is running (executeCommand → applyEdit; the latest sent, when several are),
        # else one waiting for this backend, else one holding a document the request names,
        # else the most recently active one.
        running = [(c, s) for s in sessions if (c := _running_command(s, backend)) is not None]
        if running:
            max(running, key=lambda pair: pair[0])[1].backend_request(backend, msg, reply)
            return
        candidates = [s for s in sessions if _waits_on(s, backend)] or [
            s for s in sessions if _holds_any(backend, s, _uris_in(msg.get("params")))
        ]
        target = max(candidates or sessions, key=lambda s: s.last_active)
        target.backend_request(backend, msg, reply)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        for session in tuple(self.sessions_of(backend)):
            session.backend_event(backend, event, detail)

    # -- status -------------------------------------------------------------------------------------

    def describe(self) -> list[dict[str, Any]]:
        """One row per instance, for `lspmux status`."""
        rows = []
        now = time.monotonic()
        for backend in self.backends.values():
            rss = None
            pid = backend.pid
            if pid is not None:
                try:
                    import psutil

                    rss = psutil.Process(pid).memory_info().rss
                except Exception:
                    rss = None
            rows.append(
                {
                    "server": backend.name,
                    "root": str(backend.root),
                    "pid": pid,
                    "state": backend.state,
                    "clients": sorted(s.client_id for s in self.sessions_of(backend)),
                    "open_documents": len(backend.documents),
                    "rss": rss,
                    "uptime": (now - backend.started_at) if backend.started_at else None,
                    "restarts": backend.restarts,
                }
            )
        return rows


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
COMMANDS = frozenset(("workspace/executeCommand", "codeAction/resolve", "codeLens/resolve"))


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
