"""What lspmux announces to a client, and keeps announcing as servers come and go.

The `initialize` answer is the union of what the configured servers serve (`capabilities.py`),
each less what its features may not serve here (`allowed`). What a server serves is known from
the capability cache of its earlier starts; a server relevant to the workspace that never ran
here is started before the answer (bounded by `INITIAL_START`), and what it registers at once
on `initialized` is waited for (`ServerLife.settled`: an answer, no fixed wait), so the first
start announces what the hundredth does; the other servers the workspace needs are started
right after the answer (`prestart`), not at the first file they handle. Later — a server
started for a file type the workspace scan did not see, a dynamic registration (basedpyright
registers only once it has read its settings), an unregistration — the difference is
registered or unregistered with a client that supports dynamic registration
(`ClientRegistrations`).

A transparent share (`--server-path`, `lspMux.server`: one named server for every file) is the
exception: its server is started before the answer, and the client gets that server's own
`initialize` result — `serverInfo`, `experimental` and every other capability as the server
sent them — with only what lspmux must say itself put in (`passed_through`). A session whose
servers cannot start fails `initialize` with what they wrote to stderr (`start_one`,
`after_starting`), instead of at the first request.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lspmux.backends import capabilities as caps
from lspmux.backends.provided import effective
from lspmux.config.model import Config, ServerConfig
from lspmux.config.needs import servers_for_workspace
from lspmux.errors import RequestFailed
from lspmux.routing.capabilities import BY_METHOD
from lspmux.routing.table import ROUTES
from lspmux.session.families import registrations as registrations_family
from lspmux.session.state import SessionState
from lspmux.workspace.roots import root_for

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend

log = logging.getLogger("lspmux.session")

#: Seconds `initialize` waits for servers that never ran here.
INITIAL_START = 15.0


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


def from_cache(
    session: SessionState, root: Path | None
) -> tuple[caps.Announcement, dict[str, Path], bool]:
    """The announcement the cache gives for this session's servers, the servers to start
    first because the workspace needs them and nothing is known of them (name → one file),
    and whether the workspace needs other servers too (known from the cache). Raises
    RequestFailed when the workspace needs servers and none of them is installed."""
    config = session.config
    runnable = [s for s in config.servers.values() if not s.disabled and s.resolve_command(root)]
    announcement = caps.announce(
        [s.name for s in runnable],
        pull_diagnostics=session.pull_diagnostics,
        position_encoding=session.encoding,
        load=lambda name: allowed(config.servers[name], caps.load_cached(name)),
    )
    wanted: dict[str, Path] = {}
    others = False
    enabled = {s.name for s in config.servers.values() if not s.disabled}
    # Servers restricted mode keeps off in a workspace not trusted: not "missing".
    kept_off = {
        s.name for s in config.servers.values() if s.disabled and s.untrusted.get("disabled")
    }
    runs = set(announcement.servers)
    if root is not None and (not announcement.complete or enabled - runs):
        # With every runnable server known, only whether none of those the workspace needs
        # runs is asked: the look stops at the first file of a server that runs.
        needed = servers_for_workspace(
            config, root, enabled | kept_off, enough=runs if announcement.complete else None
        )
        if needed and runs.isdisjoint(needed) and kept_off.isdisjoint(needed):
            try:
                none_installed(config, needed)
            except RequestFailed as exc:  # shown by every editor, not only in its log
                session.tell(exc.message, severity=1, shown=True)
                raise
        needed = {name: f for name, f in needed.items() if name in announcement.servers}
        wanted = {name: f for name, f in needed.items() if name not in announcement.known}
        others = len(wanted) < len(needed)
    return announcement, wanted, others


def prestart(session: SessionState, root: Path) -> None:
    """Once `initialize` is answered: start, without waiting, the announced servers some file
    of the workspace is for (those started for the answer are running already), so that they
    boot while the client sends `initialized` and opens its first file, instead of after. The
    look at the workspace's files runs in a thread: the client's first messages are relayed
    meanwhile."""
    announcement = session.announcement
    if announcement is None or session.state != "running":
        return
    session.spawn(_prestart(session, root, set(announcement.servers)))


async def _prestart(session: SessionState, root: Path, names: set[str]) -> None:
    config = session.config
    needed = await asyncio.to_thread(servers_for_workspace, config, root, names)
    if session.state != "running" or session.config is not config:
        return
    for name, found in needed.items():
        server = config.servers[name]
        backend = session.pool.get(server, root_for(server, found, session.roots), client=session)
        if backend is not None and backend.state != "running":
            session.spawn(backend.ensure_running())  # a failure is said at the first use


def none_installed(config: Config, needed: dict[str, Path]) -> None:
    """The workspace's files are for `needed` (name → one such file) and none is installed:
    RequestFailed saying which, unless a linter serves those files."""
    if any(config.linters_for(str(f), None) for f in needed.values()):
        return
    from lspmux.install.prefix import install_hint

    lines = [
        f"  {name}, for {f.name}: `{config.servers[name].command[0]}` not found"
        + (f"; install: {hint}" if (hint := install_hint(name, s.package, s.install)) else "")
        for name, f in needed.items()
        if (s := config.servers[name]).command
    ]
    firsts: dict[str, str] = {}  # the first installable server of each role (as doctor says)
    for name in needed:
        if config.servers[name].package:
            firsts.setdefault(config.servers[name].role, name)
    raise RequestFailed(
        "lspmux: none of the language servers this workspace needs is installed:\n"
        + "\n".join(lines)
        + (f"\nInstall with: lspmux install {' '.join(firsts.values())}" if firsts else "")
        + "\nInstall one (on the PATH lspmux runs with), or configure its command "
        "([servers.NAME] command = [...]), then reconnect; `lspmux config` shows what lspmux "
        "looks for."
    )


async def after_starting(
    session: SessionState,
    announcement: caps.Announcement,
    wanted: dict[str, Path],
    others: bool = False,
) -> caps.Announcement:
    """`announcement` completed with what the `wanted` servers serve once started. When these
    are all the servers the workspace needs (no `others`) and none could start, `initialize`
    fails with why (their stderr's last lines)."""
    failed: dict[str, Backend] = {}
    started_backends: dict[str, Backend] = {}

    def served(backend: Backend) -> dict[str, Any] | None:
        return allowed(
            backend.config, effective(backend.capabilities, backend.registrations.values())
        )

    async def start(name: str) -> dict[str, Any] | None:
        server = session.config.servers[name]
        root = root_for(server, wanted[name], session.roots)
        backend = session.pool.get(server, root, client=session)
        if backend is None:
            return None
        if not await backend.ensure_running(loaded=False):  # its answer is what counts here
            failed[name] = backend
            return None
        await backend.settled()  # what it registers at once on `initialized` is in the answer
        started_backends[name] = backend
        return served(backend)

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
            # What a server registered while the others started counts too: from the answer
            # on, a registration is told to the client by `ClientRegistrations.sync`.
            backend = started_backends.get(name)
            known = served(backend) if backend is not None else None
            announcement = announcement.with_known(
                name, started.known[name] if known is None else known
            )
    if failed and len(failed) == len(wanted) and not others:
        reasons = await asyncio.gather(*(b.start_failure() for b in failed.values()))
        raise RequestFailed("\n\n".join(reasons))
    return announcement


# -- a transparent share (one named server) ------------------------------------------------------


def one_server(config: Config) -> ServerConfig | None:
    """The server of a transparent share (`--server-path`, `lspMux.server`), or None when the
    session routes by file type."""
    # Only the daemon makes a OneServerConfig: a proxy, which never imports it, has none (and
    # does not pay ~5 ms at every start to define the class)
    admission = sys.modules.get("lspmux.daemon.admission")
    if admission is None or not isinstance(config, admission.OneServerConfig):
        return None
    servers = [s for s in config.servers.values() if not s.disabled]
    return servers[0] if len(servers) == 1 else None


async def start_one(session: SessionState, server: ServerConfig, root: Path) -> Backend:
    """The backend of a transparent share, running; `initialize` fails (RequestFailed) with
    what the server said when it cannot be found or cannot start."""
    backend = session.pool.get(server, root_for(server, root, session.roots), client=session)
    if backend is None:
        exe = server.command[0] if server.command else server.name
        raise RequestFailed(
            f"lspmux: the language server {exe!r} was not found (looked on the daemon's PATH "
            "and, for a trusted workspace, in its project folders). Install it, or give its "
            "full path (--server-path /path/to/server), then reconnect."
        )
    if backend.state == "failed" and not session.pool.sessions_of(backend):
        # It gave up restarting (a missing component, say), and nobody uses it: a new client
        # (after the user fixed it) gives it a fresh start.
        starting = backend.restart("a new client")
    else:  # its `initialize` answer is what the client is given: no wait for its load
        starting = backend.ensure_running(loaded=False)
    try:
        up = await asyncio.wait_for(starting, INITIAL_START * 4)
    except TimeoutError:
        up = False
    if not up:
        raise RequestFailed(await backend.start_failure())
    return backend


def passed_through(
    session: SessionState, server: ServerConfig, backend: Backend
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `initialize` result of a transparent share, and the capabilities in it: the
    server's own first answer, less the capabilities its features may not serve here, with
    what lspmux must say itself — the position encoding negotiated with this client (lspmux
    converts for the server) and `diagnosticProvider` (lspmux pulls from the server and
    delivers to each client by push, or by pull when the client can be told to pull again)."""
    result = dict(backend.initialize_result or {"capabilities": backend.capabilities})
    capabilities = allowed(server, dict(result.get("capabilities") or {})) or {}
    capabilities["positionEncoding"] = session.encoding
    capabilities.pop("diagnosticProvider", None)
    if session.pull_diagnostics:
        capabilities["diagnosticProvider"] = dict(caps.PULL_DIAGNOSTICS)
    result["capabilities"] = capabilities
    if "offsetEncoding" in result:  # clangd's extension says the same as positionEncoding
        result["offsetEncoding"] = session.encoding
    return result, capabilities


class ClientRegistrations:
    """What lspmux registered with its client since `initialize`, kept equal to what the
    backends serve: a server that comes up later or registers more is registered with the
    client (where it supports dynamic registration of that provider), one that stops serving
    something is unregistered."""

    def __init__(self, session: SessionState) -> None:
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
        gone = [{"id": i, "method": self.sent.pop(i)[0]} for i in stale]
        registrations_family.tell_client(session, registrations, gone)
