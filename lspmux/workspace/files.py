"""File watching for a session's backends, whichever way the client goes: one object to wire.

`FileWatching(client_caps, send, roots)` picks the way once: when the client watches files
itself (`relay.client_watches`), backends' `workspace/didChangeWatchedFiles` registrations are
relayed to it with remapped ids and its notifications routed back; otherwise lspmux's own
`Watcher` watches the globs and calls `send(backend, params)`. The session calls:

- `register(backend, registration)` for each `Registration` of a backend's
  `client/registerCapability` whose method is `workspace/didChangeWatchedFiles`; it returns the
  registration to send the client (relaying) or None (watched here);
- `unregister(backend, unregistration)` likewise (the unregistration for the client, or None);
- `forget(backend)` when a backend stops (the unregistrations to send the client);
- `from_client(params)` for the client's own `workspace/didChangeWatchedFiles`: per backend,
  the params to send it (only the events its globs asked for);
- `start()` / `stop()` with the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Generic

from lspmux.uris import file_path
from lspmux.workspace.globs import K, events_of
from lspmux.workspace.relay import Relay, client_watches
from lspmux.workspace.watch import OnChanges, Watcher


class FileWatching(Generic[K]):
    def __init__(
        self,
        client_caps: Mapping[str, Any] | None,
        send: OnChanges[K],
        roots: Iterable[str] = (),
        *,
        debounce_ms: int = 200,
    ) -> None:
        self.roots = tuple(p for p in map(file_path, roots) if p is not None)
        self.relay: Relay[K] | None = Relay(client_caps) if client_watches(client_caps) else None
        self.watcher: Watcher[K] | None = (
            None if self.relay else Watcher(send, self.roots, debounce_ms=debounce_ms)
        )

    @property
    def relaying(self) -> bool:
        """Does the client watch (registrations go to it)?"""
        return self.relay is not None

    async def start(self) -> None:
        if self.watcher is not None:
            await self.watcher.start()

    async def stop(self) -> None:
        if self.watcher is not None:
            await self.watcher.stop()

    def add_root(self, root: str) -> None:
        path = file_path(root)
        if path is None or path in self.roots:
            return
        self.roots += (path,)
        if self.watcher is not None:
            self.watcher.add_root(path)

    def register(self, backend: K, registration: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.relay is not None:
            return self.relay.register(backend, registration)
        assert self.watcher is not None
        self.watcher.register(backend, str(registration["id"]), registration.get("registerOptions"))
        return None

    def unregister(self, backend: K, unregistration: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.relay is not None:
            return self.relay.unregister(backend, unregistration)
        assert self.watcher is not None
        self.watcher.unregister(backend, str(unregistration["id"]))
        return None

    def forget(self, backend: K) -> list[dict[str, Any]]:
        if self.relay is not None:
            return self.relay.forget(backend)
        assert self.watcher is not None
        self.watcher.forget(backend)
        return []

    def from_client(self, params: Mapping[str, Any]) -> dict[K, dict[str, Any]]:
        """The client's `didChangeWatchedFiles`, per backend. A client that watches is asked
        only for the globs relayed; one that does not may still send events (some editors
        report their own saves): they go to the backends whose watchers want them."""
        if self.relay is not None:
            return self.relay.route(params, self.roots)
        assert self.watcher is not None
        return self.watcher.registrations.route(events_of(params), self.roots)
