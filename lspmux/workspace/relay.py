"""Relaying backends' watched-file registrations to a client that watches files itself.

When the client declares `workspace.didChangeWatchedFiles.dynamicRegistration`
(`client_watches`), lspmux does not watch: each backend registration is passed on to the client
under a fresh id (two backends may both use id "1"), its unregistration too, and the client's
`workspace/didChangeWatchedFiles` notifications go back to the backends whose globs ask for
them (`Relay.route`). A `RelativePattern` is turned into a string glob for a client without
`relativePatternSupport`. Pure: the session sends what these functions build.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, Generic

from lspmux.uris import file_path
from lspmux.workspace.globs import K, Registrations, events_of

DID_CHANGE_WATCHED_FILES = "workspace/didChangeWatchedFiles"


def _watched_files_caps(client_caps: Mapping[str, Any] | None) -> Mapping[str, Any]:
    workspace = (client_caps or {}).get("workspace") or {}
    return workspace.get("didChangeWatchedFiles") or {}


def client_watches(client_caps: Mapping[str, Any] | None) -> bool:
    """Does the client take dynamic `workspace/didChangeWatchedFiles` registrations (and so
    watch files itself)?"""
    return _watched_files_caps(client_caps).get("dynamicRegistration") is True


def client_takes_relative_patterns(client_caps: Mapping[str, Any] | None) -> bool:
    return _watched_files_caps(client_caps).get("relativePatternSupport") is True


def _escape_glob(path: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]{}," else c for c in path)


def for_client(options: Mapping[str, Any] | None, relative_ok: bool) -> dict[str, Any]:
    """The registerOptions to send the client: as they are, or with each RelativePattern
    spelled as a string glob under its base when the client cannot take RelativePatterns."""
    options = dict(options or {})
    if relative_ok:
        return options
    watchers = []
    for w in options.get("watchers") or []:
        glob = w.get("globPattern")
        if isinstance(glob, Mapping):
            base = glob.get("baseUri")
            base = base.get("uri") if isinstance(base, Mapping) else base
            path = file_path(str(base))
            if path is None:  # a folder on no disk here: nothing the client could watch
                continue
            prefix = _escape_glob(path).rstrip("/")
            w = {**w, "globPattern": f"{prefix}/{glob.get('pattern', '')}"}
        watchers.append(w)
    options["watchers"] = watchers
    return options


class Relay(Generic[K]):
    """Backend registration ids ↔ the ids the client knows, plus the globs to route by."""

    def __init__(
        self, client_caps: Mapping[str, Any] | None = None, prefix: str = "lspmux"
    ) -> None:
        self.registrations: Registrations[K] = Registrations()
        self._relative_ok = client_takes_relative_patterns(client_caps)
        self._prefix = prefix
        self._ids = itertools.count(1)
        self._to_client: dict[tuple[K, str], str] = {}
        self._to_backend: dict[str, tuple[K, str]] = {}
        self._methods: dict[str, str] = {}

    def register(self, backend: K, registration: Mapping[str, Any]) -> dict[str, Any]:
        """A backend's `Registration` (id, method, registerOptions) → the one for the client.
        Registering an id the backend already used replaces the old registration (and keeps
        its client id)."""
        backend_id = str(registration["id"])
        options = registration.get("registerOptions")
        if registration.get("method") == DID_CHANGE_WATCHED_FILES:
            self.registrations.register(backend, backend_id, options)
            options = for_client(options, self._relative_ok)
        client_id = self._to_client.get((backend, backend_id))
        if client_id is None:
            client_id = f"{self._prefix}-{next(self._ids)}"
            self._to_client[(backend, backend_id)] = client_id
            self._to_backend[client_id] = (backend, backend_id)
        self._methods[client_id] = str(registration["method"])
        out: dict[str, Any] = {"id": client_id, "method": registration["method"]}
        if options is not None:
            out["registerOptions"] = options
        return out

    def unregister(self, backend: K, unregistration: Mapping[str, Any]) -> dict[str, Any] | None:
        """A backend's `Unregistration` (id, method) → the one for the client (None: the
        client never heard of it)."""
        backend_id = str(unregistration["id"])
        client_id = self._to_client.pop((backend, backend_id), None)
        if client_id is None:
            return None
        del self._to_backend[client_id]
        del self._methods[client_id]
        self.registrations.unregister(backend, backend_id)
        return {"id": client_id, "method": unregistration["method"]}

    def forget(self, backend: K) -> list[dict[str, Any]]:
        """The backend stopped: the unregistrations to send the client for all it registered."""
        self.registrations.forget(backend)
        gone = [(key, cid) for key, cid in self._to_client.items() if key[0] == backend]
        out = []
        for key, client_id in gone:
            del self._to_client[key]
            del self._to_backend[client_id]
            out.append({"id": client_id, "method": self._methods.pop(client_id)})
        return out

    def backend_of(self, client_id: str) -> tuple[K, str] | None:
        """(backend, backend registration id) behind a client registration id."""
        return self._to_backend.get(client_id)

    def client_id(self, backend: K, backend_id: str) -> str | None:
        return self._to_client.get((backend, backend_id))

    def route(
        self, params: Mapping[str, Any], roots: tuple[str, ...] = ()
    ) -> dict[K, dict[str, Any]]:
        """The client's `didChangeWatchedFiles` params → per backend, the events it asked for."""
        return self.registrations.route(events_of(params), roots)
