"""`lspmux reload`: which shared instances a reload concerns, and how each one is reloaded.

The Rust lspmux's reload is soft: it sends `rust-analyzer/reloadWorkspace` to the instance
whose workspace root contains the folder `lspmux reload` runs in (the longest such root), and
answers "no instance found" when there is none. lspmux does the same, with what a pool of
several servers needs:

- **which**: by folder (`cwd`), every server's innermost instance whose root is that folder or
  contains it; by exact root (`root`, what the agent tools' `reload` asks); or all of them;
- **how**: a server that has a reload method of its own (`SOFT_RELOAD`: rust-analyzer's
  `rust-analyzer/reloadWorkspace`, which re-reads Cargo.toml and the workspace without losing
  the warm caches) gets that request; any other server, one that is not running, or one that
  answers the request with "method not found", is restarted (stopped and started again with
  its open documents replayed), as it was before reloads were soft. `restart` asks for the
  restart everywhere.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable
from typing import Any

from lspmux.backends.backend import Backend
from lspmux.errors import JsonRpcError, MethodNotFound, RequestFailed

log = logging.getLogger("lspmux.daemon")

#: A server's own reload request, by the server's name (its `serverInfo.name`, its configured
#: name, or its executable's name).
SOFT_RELOAD: dict[str, str] = {"rust-analyzer": "rust-analyzer/reloadWorkspace"}

#: What a row says was done when a server was stopped and started again.
RESTART = "restart"


def soft_method(backend: Backend) -> str | None:
    """The reload request this server understands, or None."""
    names = (
        backend.server_info.get("name"),
        backend.name,
        os.path.basename(backend.argv[0]) if backend.argv else None,
    )
    for name in names:
        if isinstance(name, str) and name in SOFT_RELOAD:
            return SOFT_RELOAD[name]
    return None


def _contains(root: str, folder: str) -> bool:
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)


def for_folder(backends: Iterable[Backend], folder: str) -> list[Backend]:
    """Per server, the instance with the innermost root that is `folder` or contains it."""
    folder = os.path.realpath(folder)
    best: dict[str, Backend] = {}
    for backend in backends:
        root = os.path.realpath(backend.root)
        if not _contains(root, folder):
            continue
        held = best.get(backend.name)
        if held is None or len(root) > len(os.path.realpath(held.root)):
            best[backend.name] = backend
    return list(best.values())


def no_instance(folder: str, backends: Iterable[Backend]) -> RequestFailed:
    """The error for a folder no instance's root contains; it lists the instances there are."""
    running = [f"{b.name} for {b.root}" for b in backends]
    there = "the daemon runs " + "; ".join(running) if running else "the daemon runs no instance"
    return RequestFailed(
        f"lspmux: no instance's workspace root contains {folder} ({there}). Run reload in "
        "one of those folders, name one with --root, or reload every instance with --all"
    )


async def reload_one(backend: Backend, *, restart: bool) -> dict[str, Any]:
    """Reload one instance; a row saying how (`method`: the request sent, or "restart") and
    whether the server runs afterwards."""
    method = None if restart or backend.state != "running" else soft_method(backend)
    row: dict[str, Any] = {"server": backend.name, "root": str(backend.root), "pid": backend.pid}
    if method is not None:
        try:
            await backend.call(method, None)
        except MethodNotFound:
            log.info("%s: no %s; restarting it instead", backend.label, method)
        except JsonRpcError as exc:
            log.warning("%s: %s failed: %s", backend.label, method, exc.message)
            return {**row, "method": method, "running": backend.connected, "error": exc.message}
        else:
            log.info("%s: sent %s", backend.label, method)
            return {**row, "method": method, "running": backend.connected}
    running = await backend.restart("reload")
    return {**row, "method": RESTART, "running": running, "pid": backend.pid}


async def reload_instances(
    backends: list[Backend],
    root: str | None = None,
    *,
    cwd: str | None = None,
    everything: bool = False,
    restart: bool | None = None,
) -> dict[str, Any]:
    """Reload instances: by folder (`cwd`: every server's innermost instance whose root
    contains it; RequestFailed listing the instances when none does), by exact `root`, or all.
    Soft by folder or with `everything` (a server's own reload request, else a restart), a
    restart by `root` or with nothing named (what the agent tools ask); `restart` overrides."""
    if cwd is not None:
        targets = for_folder(backends, cwd)
        if not targets:
            raise no_instance(cwd, backends)
    elif root and not everything:
        wanted = os.path.realpath(root)
        targets = [b for b in backends if str(b.root) == wanted]
    else:
        targets = backends
    hard = restart if restart is not None else cwd is None and not everything
    log.info(
        "reload %s: %d instance(s)%s",
        cwd or root or "(all)",
        len(targets),
        " (restart)" if hard else "",
    )
    rows = await asyncio.gather(*(reload_one(b, restart=hard) for b in targets))
    return {"reloaded": rows, "restarted": [r for r in rows if r["method"] == RESTART]}
