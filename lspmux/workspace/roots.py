"""The root a language server itself would pick for a file: what one shared instance is keyed by.

`server_root(path, rule, markers, folders)` is the whole interface. A server names a *rule*
(`root_rule` in the defaults table) when its tool finds its workspace by reading manifests:

- `"cargo"` (rust-analyzer): the Cargo workspace root, as `cargo locate-project --workspace`
  finds it — the nearest `Cargo.toml` above the file is the package; the package's own
  `[workspace]` or `package.workspace = "path"`, else the nearest ancestor `[workspace]` that
  does not `exclude` it (cargo stops there), which is the root when its `members` (globs) or the
  path dependencies of its members include the package. No `Cargo.toml`: the nearest
  `rust-project.json`.
- `"go.work"` (gopls): the nearest `go.mod` is the module; the nearest `go.work` above it (the
  one the go command reads) is the root when one of its `use` directives names the module, else
  the module's folder.
- `"js-workspace"` (typescript-language-server, Biome, ESLint): the nearest `package.json` is the
  package; the nearest ancestor `package.json` with `"workspaces"` (a list, or
  `{"packages": [...]}`) or `pnpm-workspace.yaml` whose patterns include it is the root.

Like the tools, these rules look above the editor's workspace folders (a member opened as the
editor's folder still maps to its workspace). When a rule finds nothing — and for every server
without a rule — the root is the nearest folder holding one of the server's `root_markers`,
searched from the file up to the innermost workspace folder holding the file; with no marker on
the way, that workspace folder (so a project with no markers gets one server, not one per
folder). For a file outside every workspace folder the markers are searched all the way up,
and with none found the root is the file's own folder.

Nothing here raises on a broken manifest: bad TOML or JSON is a package on its own. Nothing runs
a tool. Results are cached per (rule, markers, folder of the file, workspace folders) together
with the modification times of every folder listed and manifest read; a cached root is used
while all of them are unchanged, so a repeated call costs a few `stat`s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from lspmux.workspace.manifests import CACHE_LIMIT, Reader, clear_parsed, inside, normal, stamp
from lspmux.workspace.root_rules import ROOT_RULES, RULES, go_work_uses, pnpm_packages

__all__ = ["ROOT_RULES", "clear_cache", "go_work_uses", "pnpm_packages", "root_for", "server_root"]

_RESULTS: dict[tuple[Any, ...], tuple[Path, dict[str, tuple[int, int] | None]]] = {}


# -- the root ------------------------------------------------------------------------------------


def server_root(
    path: str | Path, rule: str | None, markers: Sequence[str], folders: Sequence[Path] = ()
) -> Path:
    """The root a server with this `rule` and `markers` picks for the file (or folder) `path`,
    given the client's workspace folders (see the module's docstring)."""
    start = normal(Path(path))
    if not os.path.isdir(start):
        start = start.parent
    folders = tuple(normal(Path(f)) for f in folders)
    key = (rule, tuple(markers), start, folders)
    cached = _RESULTS.get(key)
    if cached is not None and all(stamp(p) == s for p, s in cached[1].items()):
        return cached[0]
    reader = Reader()
    root = _compute(reader, start, rule, markers, folders)
    if len(_RESULTS) >= CACHE_LIMIT:
        _RESULTS.clear()
    _RESULTS[key] = (root, reader.stamps)
    return root


class RootRules(Protocol):
    """What `root_for` reads of a server's configuration."""

    @property
    def root_rule(self) -> str | None: ...

    @property
    def root_markers(self) -> tuple[str, ...]: ...


def root_for(server: RootRules, path: str | Path, folders: Sequence[Path] = ()) -> Path:
    """`server_root` with the server's own rule and markers."""
    return server_root(path, server.root_rule, server.root_markers, folders)


def _compute(
    reader: Reader,
    start: Path,
    rule: str | None,
    markers: Sequence[str],
    folders: tuple[Path, ...],
) -> Path:
    if rule is not None:
        found = RULES[rule](reader, start)
        if found is not None:
            return found
    holding = [f for f in folders if inside(start, f)]
    folder = max(holding, key=lambda f: len(f.parts)) if holding else None
    marked = reader.nearest(start, markers, stop=folder)
    if marked is not None:
        return marked
    return folder if folder is not None else start


def clear_cache() -> None:
    """Forget every cached result and manifest (tests; a cached entry is re-checked anyway)."""
    _RESULTS.clear()
    clear_parsed()
