"""Which configured servers a workspace needs: a bounded, breadth-first look at its files.

`roots_of` reads the workspace folders from `initialize`'s params. Both are used by the
`initialize` answer (`session/announce.py`: which servers to start first, which
are missing) and by `lspmux proxy` before its event loop exists (`proxy.py`: the servers to
spawn while the rest of lspmux loads), so both start exactly the same servers. Standard
library and the config model only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lspmux.uris import file_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lspmux.config.model import Config

#: Files looked at to decide which servers a workspace needs (skipping VCS and dependency
#: folders); enough to find every language of a project, bounded for huge trees.
SCAN_LIMIT = 3000
#: Folders no scan looks into (VCS, dependencies, builds, caches): the session's choice of
#: servers here, `lspmux doctor` and the agent's file walk read the same set.
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "target", "build"}
    | {"dist", ".tox", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tools", ".build"}
)


#: lspmux's own files: they make no workspace need a server (a TOML one, say).
OWN_FILES = frozenset({"lspmux.toml"})


def roots_of(params: dict[str, Any]) -> list[Path]:
    """The workspace folders an `initialize` names (`workspaceFolders`, else `rootUri`, else
    `rootPath`); the first is the root the configuration is read for."""
    roots: list[Path] = []
    for folder in params.get("workspaceFolders") or []:
        if isinstance(folder, dict) and isinstance(folder.get("uri"), str):
            roots += [Path(p) for p in [file_path(folder["uri"])] if p is not None]
    if not roots and isinstance(params.get("rootUri"), str):
        roots += [Path(p) for p in [file_path(params["rootUri"])] if p is not None]
    if not roots and isinstance(params.get("rootPath"), str):
        roots.append(Path(params["rootPath"]))
    return roots


def servers_for_workspace(
    config: Config, root: Path, names: set[str], *, enough: set[str] | None = None
) -> dict[str, Path]:
    """Of the servers `names`, those some file of the workspace is for: name → one such file
    (a bounded, breadth-first look at the tree; done as soon as one of `enough` is found)."""
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
                if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                    queue.append(Path(entry.path))
                continue
            if entry.name in OWN_FILES:
                continue
            kind = os.path.splitext(entry.name)[1] or entry.name
            if kind in seen_types:
                continue
            seen_types.add(kind)
            for server in config.servers.values():  # disabled ones too, when named
                if (
                    server.name in names
                    and server.name not in found
                    and server.matches(entry.path, None)
                ):
                    found[server.name] = Path(entry.path)
                    if enough and server.name in enough:
                        return found
    return found
