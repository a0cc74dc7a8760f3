"""Backend instances keyed by what makes two servers differ (`InstanceKey`), and the fan-out
of what backends say to the sessions concerned.

In `lspmux proxy` the pool is private to one session; in the daemon every session shares it.
Either way a backend is created once per key — server, realpath(root), argv, environment and
settings — started on first use, and its notifications reach only the sessions attached to it:
diagnostics to those holding the document, progress to the session that owns the token, prompts
and edits to the most recently active session.

Settings follow the first client, as with the Rust lspmux: the client that made an instance
(its *owner*, or the oldest client still attached once the owner left) gave it its
`initializationOptions`, answers its `workspace/configuration` requests and is the one whose
`didChangeConfiguration` reaches it. A client whose `initializationOptions` differ from a
running instance's gets its own instance; one that sends none joins whichever runs (it asked
for nothing that could conflict). Each extra instance records why it exists, for `lspmux
status`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import orjson

from lspmux.backends.backend import Backend, Spawn
from lspmux.config import restricted
from lspmux.config.model import ServerConfig
from lspmux.memory import tree_memory
from lspmux.wire.messages import Message

if TYPE_CHECKING:
    from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.pool")


class KeyClient(Protocol):
    """What a backend's key takes from the client that asks for it."""

    client_id: str
    #: The client's own `initializationOptions` (None when it sent none).
    initialization_options: Any


Reply = Callable[[Any], None]


class ServerDispatch(Protocol):
    """How a server's messages are routed (`routing/table.ServerDispatch`, given to the pool by
    the session layer: the pool does not import the method table)."""

    def request(self, pool: Pool, backend: Backend, msg: Message, reply: Reply) -> None: ...

    def notification(self, pool: Pool, backend: Backend, msg: Message) -> None: ...


def _already_answered(_value: Any) -> None:
    """The reply a session gets for a server request the pool answered already."""


class PoolSession(Protocol):
    """What the pool needs of a session."""

    client_id: str
    last_active: float
    state: str  # new | running | shutdown | closed

    def backend_notification(self, backend: Backend, msg: Message) -> None: ...

    def backend_request(
        self, backend: Backend, msg: Message, reply: Callable[[Any], None]
    ) -> None: ...

    def backend_event(self, backend: Backend, event: str, detail: str) -> None: ...


@attrs.frozen
class InstanceKey:
    """What makes two server instances differ: one backend per key."""

    server: str
    root: str
    #: The argv as it runs: the executable's absolute path as found (symlinks kept: a rustup
    #: proxy is not rustup), then the arguments. `lspmux client` routing by file type and
    #: `--server-path rust-analyzer` so share one rust-analyzer.
    command: tuple[str, ...]
    #: The environment the server is given on top of the daemon's (configured `env` and the
    #: client's passed environment), sorted.
    env: tuple[tuple[str, str], ...]
    #: The client's `initializationOptions` as canonical JSON; None when it sent none.
    settings: str | None

    @classmethod
    def of(cls, server: ServerConfig, root: Path, argv: list[str], settings: Any) -> InstanceKey:
        return cls(
            server.name,
            str(root),
            (os.path.abspath(argv[0]), *argv[1:]) if argv else (),
            tuple(sorted(server.env.items())),
            None if settings is None else canonical_json(settings),
        )

    def differences(self, other: InstanceKey) -> list[str]:
        """What differs from `other` (the same server and root), in words."""
        out = []
        if self.command[:1] != other.command[:1]:
            out.append(f"the executable differs ({self.command[0]}, not {other.command[0]})")
        if self.command[1:] != other.command[1:]:
            out.append("arguments differ")
        if self.env != other.env:
            names = sorted({k for k, _ in set(self.env) ^ set(other.env)})
            out.append(f"environment differs ({', '.join(names)})")
        if self.settings != other.settings:
            out.append("initializationOptions differ")
        return out


def _same_but_settings(a: InstanceKey, b: InstanceKey) -> bool:
    return (a.server, a.root, a.command, a.env) == (b.server, b.root, b.command, b.env)


def canonical_json(value: Any) -> str:
    """`value` as JSON with sorted keys: equal settings give equal strings."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class Pool:
    def __init__(
        self,
        *,
        shared: bool = False,
        client_capabilities: Mapping[str, Any] | None = None,
        spawn: Spawn | None = None,
        dispatch: ServerDispatch | None = None,
    ) -> None:
        self.shared = shared
        #: How server messages are routed; a session sets it when it was not given.
        self.dispatch = dispatch
        #: What reads a server connection's plain answers in a run (`session/native.py`); a
        #: session sets it: the pool does not know the session's exchanges.
        self.answer_lane: Callable[[Connection], Callable[[list[Any], int], int] | None] | None = (
            None
        )
        self.spawn = spawn
        self.initialization_options: Any = None
        self.client_capabilities = client_capabilities
        self.backends: dict[InstanceKey, Backend] = {}
        self.sessions: dict[Backend, set[PoolSession]] = {}
        #: Per backend: the client that made it, and why it is not another instance's.
        self.owner: dict[Backend, str] = {}
        self.why: dict[Backend, str] = {}
        #: Sessions in the order they attached to each backend (the oldest answers for it).
        self._attached: dict[Backend, list[PoolSession]] = {}

    def get(
        self,
        server: ServerConfig,
        root: Path,
        argv: list[str] | None = None,
        *,
        client: KeyClient | None = None,
    ) -> Backend | None:
        """The backend for `client`'s key (server, root, argv, environment, its
        initializationOptions), created (not started) when needed; None when the server's
        executable cannot be found or it may not run there (in the server's restricted mode
        where the user has not trusted `root`). A client that sent no initializationOptions
        joins an instance of the same server, root, argv and environment whatever its
        settings."""
        canonical = Path(os.path.realpath(root))
        runs = restricted.for_root(server, canonical)  # restricted mode, unless trusted
        if runs is None:
            return None
        server = runs
        settings = client.initialization_options if client is not None else None
        if settings is None and client is None and not self.shared:
            settings = self.initialization_options
        resolved = argv or server.resolve_command(canonical)
        if resolved is None:
            return None
        key = InstanceKey.of(server, canonical, resolved, settings)
        backend = self.backends.get(key)
        if backend is None and settings is None:
            backend = next(
                (b for k, b in self.backends.items() if _same_but_settings(k, key)), None
            )
        if backend is not None:
            return backend
        backend = Backend(
            server,
            canonical,
            resolved,
            host=self,
            client_capabilities=self.client_capabilities,
            spawn=self.spawn,
            # The first client's initializationOptions reach the server (under the configured
            # ones), as with the Rust lspmux: they are part of the key, so every client of the
            # instance asked for the same (or for nothing).
            client_initialization_options=settings,
            pull_diagnostics=True,  # lspmux pulls from servers that offer it, for every client
        )
        if client is not None:
            self.owner[backend] = client.client_id
        why = self._why(key)
        if why:
            self.why[backend] = why
            siblings = sum(1 for k in self.backends if (k.server, k.root) == (key.server, key.root))
            backend.variant = f"#{siblings + 1}"
            log.info("%s: another instance for %s: %s", backend.label, self.owner.get(backend), why)
        self.backends[key] = backend
        self.sessions[backend] = set()
        return backend

    def _why(self, key: InstanceKey) -> str | None:
        """Why `key` needs an instance of its own: how it differs from the running instances
        of the same server and root (the first one's words, naming its client)."""
        for other, backend in self.backends.items():
            if (other.server, other.root) != (key.server, key.root):
                continue
            differences = key.differences(other)
            if differences:
                whose = self.owner.get(backend)
                suffix = f" from {whose}'s" if whose else ""
                return "; ".join(differences) + suffix
        return None

    def first_client(self, backend: Backend) -> PoolSession | None:
        """The client whose settings the instance follows: the oldest one still attached."""
        for session in self._attached.get(backend, ()):
            if session in self.sessions.get(backend, ()) and session.state != "closed":
                return session
        return None

    def attach(self, backend: Backend, session: PoolSession) -> None:
        self.sessions.setdefault(backend, set()).add(session)
        order = self._attached.setdefault(backend, [])
        if session not in order:
            order.append(session)

    def detach(self, session: PoolSession) -> list[Backend]:
        """Forget `session` everywhere; the backends it leaves without any session."""
        orphaned = []
        for backend, sessions in self.sessions.items():
            if session in sessions:
                sessions.discard(session)
                if not sessions:
                    orphaned.append(backend)
            order = self._attached.get(backend)
            if order is not None and session in order:
                order.remove(session)
        return orphaned

    def sessions_of(self, backend: Backend) -> set[PoolSession]:
        return self.sessions.get(backend, set())

    def remove(self, backend: Backend) -> None:
        """Forget a (stopped) backend: the next `get` for its key creates a new one."""
        self.sessions.pop(backend, None)
        self._attached.pop(backend, None)
        self.owner.pop(backend, None)
        self.why.pop(backend, None)
        for key, known in list(self.backends.items()):
            if known is backend:
                del self.backends[key]

    async def stop_all(self) -> None:
        backends = list(self.backends.values())
        await asyncio.gather(
            *(b.stop("lspmux is exiting", final=True) for b in backends), return_exceptions=True
        )

    # -- BackendHost ------------------------------------------------------------------------------

    def server_notification(self, backend: Backend, msg: Message) -> None:
        if self.dispatch is not None:
            self.dispatch.notification(self, backend, msg)
        else:
            self.tell(self.sessions_of(backend), backend, msg)

    def server_request(self, backend: Backend, msg: Message, reply: Reply) -> None:
        if self.dispatch is not None:
            self.dispatch.request(self, backend, msg, reply)
        else:  # a pool no session routes for (status, tests): nobody to ask
            log.info("%s: %s with no client attached; answering null", backend.label, msg["method"])
            reply(None)

    def tell(self, sessions: Iterable[PoolSession], backend: Backend, msg: Message) -> None:
        """A server notification to `sessions`."""
        for session in tuple(sessions):
            session.backend_notification(backend, msg)

    def tell_every_session(self, backend: Backend, msg: Message) -> None:
        """A server request the pool answered already, told to every session of the server."""
        for session in tuple(self.sessions_of(backend)):
            session.backend_request(backend, msg, _already_answered)

    def answer_for_every_session(self, backend: Backend, msg: Message, reply: Reply) -> None:
        """Backend-wide (progress, refresh): the server gets one answer (null), and every
        session hears of it."""
        reply(None)
        self.tell_every_session(backend, msg)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        for session in tuple(self.sessions_of(backend)):
            session.backend_event(backend, event, detail)

    # -- status -------------------------------------------------------------------------------------

    def describe(self, only: Collection[Backend] | None = None) -> list[dict[str, Any]]:
        """One row per instance (of `only` when given), for `lspmux status`: `rss` is the
        memory of the server's whole process tree (a launcher's node child counts)."""
        rows = []
        now = time.monotonic()
        for key, backend in self.backends.items():
            if only is not None and backend not in only:
                continue
            pid = backend.pid
            rows.append(
                {
                    "server": backend.name,
                    "root": str(backend.root),
                    "pid": pid,
                    "state": backend.state,
                    "clients": sorted(s.client_id for s in self.sessions_of(backend)),
                    "open_documents": len(backend.documents),
                    "rss": tree_memory(pid),
                    "progress": backend.progress_now(),
                    "uptime": (now - backend.started_at) if backend.started_at else None,
                    "restarts": backend.restarts,
                    "command": list(key.command),
                    #: Names only: values may be secrets, and the key holds them anyway.
                    "env": [name for name, _ in key.env],
                    "first_client": self.owner.get(backend),
                    #: Why this is not another instance of the same server and root.
                    "why": self.why.get(backend),
                }
            )
        return rows
