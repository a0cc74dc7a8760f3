"""Restricted mode: how a server runs for a workspace root the user has not trusted.

Some servers run the workspace's own code unless told not to: basedpyright and pyright run the
repository's `.venv/bin/python` to learn its search paths, typescript-language-server loads the
workspace's `node_modules/typescript`, rust-analyzer builds and runs build scripts and proc
macros. Like VS Code's Restricted Mode, each server entry of the built-in table may carry an
`untrusted` table (`[servers.NAME.untrusted]`): `settings` and `initialization_options` merged
over the entry's own (tables key by key, the restricted value wins), and `disabled = true` for a
server that cannot be kept from running project code. It applies to every root that is not a
folder the user trusted (`lspmux trust`, exactly that folder: see `lspmux.config.trust`).

String values may name what depends on the root, resolved when the server is started for it:

- `${python}`: a Python interpreter outside the root: the first `python3` (then `python`) on
  `PATH` whose folder and real path lie outside the root, else the one lspmux runs on;
- `${typescript_lib}`: the `typescript/lib` folder that the server's own installation would
  load (found from the real path of its executable, as Node resolves `require("typescript")`),
  when it lies outside the root.

A placeholder that cannot be resolved keeps the server from starting for that root (the log
says why): running it unrestricted is what restricted mode is there to prevent.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lspmux.config import trust
from lspmux.config.model import ServerConfig

log = logging.getLogger("lspmux.config")


class Unresolved(Exception):
    """A placeholder of a restricted value that has no answer for this root."""


def for_root(
    server: ServerConfig, root: str | Path, *, trusted: bool | None = None
) -> ServerConfig | None:
    """`server` as it runs for `root`: unchanged when it has no restricted mode or the user
    trusted `root`; else with its restricted settings; None (and a log line) when it may not
    run there."""
    if not server.untrusted:
        return server
    if trusted is None:
        trusted = trust.workspace_trusted(root)
    if trusted:
        return server
    try:
        runs = restricted(server, root)
    except Unresolved as exc:
        if trust.once("restricted", server.name, str(root)):
            log.warning(
                "%s is not started for %s: %s is not trusted, and %s (run `lspmux trust %s` "
                "to let it run as configured)",
                server.name,
                root,
                root,
                exc,
                root,
            )
        return None
    if trust.once("restricted-on", server.name, str(root)):
        log.info(
            "%s runs in restricted mode for %s, which is not trusted (`lspmux trust %s` lifts it)",
            server.name,
            root,
            root,
        )
    return runs


def restricted(server: ServerConfig, root: str | Path) -> ServerConfig:
    """`server` in its restricted mode for `root`; raises `Unresolved` when it has none it
    could run in there."""
    mode = server.untrusted
    if mode.get("disabled"):
        raise Unresolved("it would run the workspace's code")
    real_root = Path(os.path.realpath(root))
    settings = _resolve(mode.get("settings") or {}, server, real_root)
    init = _resolve(mode.get("initialization_options") or {}, server, real_root)
    return dataclasses.replace(
        server,
        settings=merge(server.settings, settings),
        initialization_options=(
            merge(server.initialization_options or {}, init)
            if init
            else server.initialization_options
        ),
    )


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` merged into `base`: tables key by key, recursively; otherwise `over` wins."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = merge(old, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _resolve(value: Any, server: ServerConfig, root: Path) -> Any:
    if isinstance(value, Mapping):
        return {k: _resolve(v, server, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, server, root) for v in value]
    if value == "${python}":
        return python_outside(root)
    if value == "${typescript_lib}":
        return typescript_lib(server, root)
    return value


def _outside(root: Path, path: str) -> bool:
    real = Path(os.path.realpath(path))
    return real != root and root not in real.parents


def python_outside(root: Path, environ: Mapping[str, str] | None = None) -> str:
    """A Python interpreter outside `root` (a real path): on PATH, else lspmux's own."""
    env = os.environ if environ is None else environ
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder or not os.path.isabs(folder) or not _outside(root, folder):
            continue
        for name in ("python3", "python"):
            candidate = os.path.join(folder, name)
            if (
                os.path.isfile(candidate)
                and os.access(candidate, os.X_OK)
                and _outside(root, candidate)
            ):
                return candidate
    if sys.executable and _outside(root, sys.executable):
        return sys.executable
    raise Unresolved(f"its restricted mode needs a Python interpreter outside {root}")


def typescript_lib(server: ServerConfig, root: Path) -> str:
    """The `typescript/lib` folder next to the server's own installation, outside `root`."""
    from lspmux.install.prefix import installed_executable  # `lspmux install`'s, first

    command = server.command[0] if server.command else None
    exe = (installed_executable(command) or shutil.which(command)) if command else None
    if exe is None or not _outside(root, exe):
        raise Unresolved("its restricted mode needs the server installed outside the workspace")
    here = Path(os.path.realpath(exe)).parent
    for folder in (here, *here.parents):
        lib = folder / "node_modules" / "typescript" / "lib"
        if (lib / "tsserver.js").is_file() and _outside(root, str(lib)):
            return str(lib)
    raise Unresolved(
        f"its restricted mode needs a TypeScript installed beside {exe} (npm install -g typescript)"
    )
