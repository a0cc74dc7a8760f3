"""What lspmux announces to a client, and keeps announcing as servers come and go.

The `initialize` answer is the union of what the configured servers serve (`capabilities.py`),
each less what its features may not serve here (`allowed`). What a server serves is known from
the capability cache of its earlier starts; a server relevant to the workspace that never ran
here is started before the answer (bounded by `INITIAL_START`), so the first start announces
what the hundredth does. Later — a server started for a file type the workspace scan did not
see, a dynamic registration, an unregistration — the difference is registered or unregistered
with a client that supports dynamic registration (`sync_registrations`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as t

from lspmux.backends import capabilities as caps
from lspmux.backends.provided import BY_METHOD, effective
from lspmux.config.model import Config, ServerConfig
from lspmux.routing.table import ROUTES
from lspmux.session.host import SessionHost
from lspmux.workspace.roots import root_for

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

#: Seconds `initialize` waits for servers that never ran here, and for the registrations a
#: server sends right after `initialized`.
INITIAL_START = 15.0
REGISTRATION_GRACE = 0.3
#: Files looked at to decide which servers a workspace needs (skipping VCS and dependency
#: folders); enough to find every language of a project, bounded for huge trees.
SCAN_LIMIT = 3000
_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        "target",
        "build",
        "dist",
    }
)


def allowed(server: ServerConfig, served: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a server serves, less the capabilities its features may not serve here
    (`only_features`, `except_features`, a linter's role)."""
    if served is None:
        return None
    out = dict(served)
    for key, features in _FEATURES_OF_CAPABILITY.items():
        if key in out and not any(server.feature_enabled(f) for f in features):
            del out[key]
    return out


_FEATURES_OF_CAPABILITY: dict[str, set[str]] = {}
for _route in ROUTES.values():
    if _route.capability and _route.capability not in ("textDocumentSync", "workspace"):
        _FEATURES_OF_CAPABILITY.setdefault(_route.capability, set()).add(_route.feature)


def servers_for_workspace(config: Config, root: Path, names: set[str]) -> dict[str, Path]:
    """Of the servers `names`, those some file of the workspace is for: name → one such file
    (a bounded, breadth-first look at the tree)."""
    found: dict[str, Path] = {}
    seen_types: set[str] = set()
    queue = [root]
    looked = 0
    while queue and looked < SCAN_LIMIT and len(found) < len(names):
        folder = queue.pop(0)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            looked += 1
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS and not entry.name.startswith("."):
                    queue.append(Path(entry.path))
                continue
            kind = os.path.splitext(entry.name)[1] or entry.name
            if kind in seen_types:
                continue
            seen_types.add(kind)
            for server in config.servers_for(entry.path, None):
                if server.name in names and server.name not in found:
                    found[server.name] = Path(entry.path)
    return found


def from_cache(
    session: SessionHost, root: Path | None
) -> tuple[caps.Announcement, dict[str, Path]]:
    """The announcement the cache gives for this session's servers, and the servers to start
    first because the workspace needs them and nothing is known of them (name → one file)."""
    config = session.config
    runnable = [s for s in config.servers.values() if not s.disabled and s.resolve_command(root)]
    announcement = caps.announce(
        [s.name for s in runnable],
        pull_diagnostics=session.pull_diagnostics,
        position_encoding=session.encoding,
        load=lambda name: allowed(config.servers[name], caps.load_cached(name)),
    )
    wanted: dict[str, Path] = {}
    if root is not None and not announcement.complete:
        wanted = servers_for_workspace(config, root, set(announcement.missing))
    return announcement, wanted


async def after_starting(
    session: SessionHost, announcement: caps.Announcement, wanted: dict[str, Path]
) -> caps.Announcement:
    """`announcement` completed with what the `wanted` servers serve once started."""

    async def start(name: str) -> dict[str, Any] | None:
        server = session.config.servers[name]
        root = root_for(server, wanted[name], session.roots)
        backend = session.pool.get(server, root, client=session)
        if backend is None or not await backend.ensure_running():
            return None
        await asyncio.sleep(REGISTRATION_GRACE)  # registrations follow `initialized`
        return allowed(server, effective(backend.capabilities, backend.registrations.values()))

    log.info("%s: starting %s to learn what they serve", session.client_id, ", ".join(wanted))
    subset = caps.Announcement(
        tuple(s for s in announcement.servers if s in wanted or s in announcement.known),
        announcement.known,
        announcement.pull_diagnostics,
        announcement.position_encoding,
    )
    started = await caps.complete(subset, start, timeout=INITIAL_START)
    for name in wanted:
        if name in started.known:
            announcement = announcement.with_known(name, started.known[name])
    return announcement


class ClientRegistrations:
    """What lspmux registered with its client since `initialize`, kept equal to what the
    backends serve: a server that comes up later or registers more is registered with the
    client (where it supports dynamic registration of that provider), one that stops serving
    something is unregistered."""

    def __init__(self, session: SessionHost) -> None:
        self.session = session
        self.sent: dict[str, tuple[str, Any]] = {}  # our registration id → (method, options)
        self._ids = itertools.count(1)

    def sync(self, backend: Backend) -> None:
        session = self.session
        announcement = session.announcement
        if announcement is None or backend.name not in announcement.servers:
            return
        served = allowed(
            backend.config, effective(backend.capabilities, backend.registrations.values())
        )
        if served is None:
            return
        announcement = session.announcement = announcement.with_known(backend.name, served)
        current = announcement.capabilities
        told = session.announced
        new = caps.client_registrations(told, current, session.client_capabilities)
        registrations = []
        for method, options in new:
            reg_id = f"lspmux-{next(self._ids)}"
            self.sent[reg_id] = (method, options)
            registrations.append({"id": reg_id, "method": method, "registerOptions": options})
            key = BY_METHOD.get(method)
            if key == "executeCommandProvider":
                commands = list((told.get(key) or {}).get("commands") or [])
                told[key] = {"commands": commands + list(options.get("commands") or [])}
            elif key is not None:
                told[key] = options or True
        stale = caps.stale_client_registrations(self.sent, current)
        if registrations:
            self._send(t.CLIENT_REGISTER_CAPABILITY, {"registrations": registrations})
        if stale:
            gone = [{"id": i, "method": self.sent.pop(i)[0]} for i in stale]
            self._send(t.CLIENT_UNREGISTER_CAPABILITY, {"unregisterations": gone})

    def _send(self, method: str, params: Any) -> None:
        conn = getattr(self.session, "conn", None)
        if conn is not None and not conn.closed and self.session.state == "running":
            conn.request(method, params, lambda _r: None, timeout=30)
