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

import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

#: A manifest's content, or None when it is missing or cannot be parsed.
Parsed = dict[str, Any] | None

#: How many results and parsed manifests are kept before the caches start over.
CACHE_LIMIT = 4096


class _Reader:
    """The folders and manifests one computation looked at, each with the stamp it had: a
    cached result is good while every stamp is unchanged."""

    def __init__(self) -> None:
        self.stamps: dict[str, tuple[int, int] | None] = {}
        self._listed: dict[str, frozenset[str]] = {}

    def names(self, folder: Path) -> frozenset[str]:
        """The entries of `folder` (empty when it cannot be listed), listed once."""
        key = str(folder)
        names = self._listed.get(key)
        if names is None:
            self.stamps[key] = _stamp(key)
            try:
                names = frozenset(os.listdir(key)) if self.stamps[key] is not None else frozenset()
            except OSError:
                names = frozenset()
            self._listed[key] = names
        return names

    def has(self, folder: Path, marker: str) -> bool:
        names = self.names(folder)
        if any(c in marker for c in "*?["):
            return any(fnmatchcase(n, marker) for n in names)
        return marker in names

    def nearest(self, start: Path, markers: Sequence[str], stop: Path | None = None) -> Path | None:
        """The nearest folder from `start` upwards holding one of `markers`, not above `stop`."""
        for folder in _upwards(start, stop):
            if any(self.has(folder, m) for m in markers):
                return folder
        return None

    def parsed(self, path: Path, kind: str) -> Parsed:
        """The manifest at `path` parsed as `kind` ("toml", "json", or "text": `{"text": ...}`),
        None when it is missing or broken."""
        key = str(path)
        stamp = self.stamps[key] = _stamp(key)
        if stamp is None:
            return None
        cached = _PARSED.get((key, kind))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            with open(key, "rb") as f:
                value = _PARSERS[kind](f.read())
        except (OSError, ValueError):  # tomllib's and json's errors are ValueErrors
            value = None
        if len(_PARSED) >= CACHE_LIMIT:
            _PARSED.clear()
        _PARSED[(key, kind)] = (stamp, value)
        return value


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _parse_toml(data: bytes) -> Parsed:
    return tomllib.loads(data.decode("utf-8"))


def _parse_json(data: bytes) -> Parsed:
    value = json.loads(data)
    return value if isinstance(value, dict) else None


_PARSERS: dict[str, Callable[[bytes], Parsed]] = {
    "toml": _parse_toml,
    "json": _parse_json,
    "text": lambda data: {"text": data.decode("utf-8", "replace")},
}
_PARSED: dict[tuple[str, str], tuple[tuple[int, int], Parsed]] = {}
_RESULTS: dict[tuple[Any, ...], tuple[Path, dict[str, tuple[int, int] | None]]] = {}


def _upwards(start: Path, stop: Path | None = None) -> Iterator[Path]:
    yield start
    if start == stop:
        return
    for folder in start.parents:
        yield folder
        if folder == stop:
            return


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _normal(path: Path) -> Path:
    """`path` absolute with `.` and `..` resolved lexically (as cargo and go do)."""
    return Path(os.path.normpath(os.path.abspath(path)))


# -- glob patterns over relative paths ----------------------------------------------------------


def _match(parts: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether the path components `parts` match the glob's components (`**` spans any number
    of components, other wildcards stay inside one)."""
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match(parts[1:], pattern[1:])


def _pattern_parts(pattern: str) -> list[str]:
    return [p for p in pattern.replace("\\", "/").split("/") if p and p != "."]


def _matches(root: Path, folder: Path, pattern: str) -> bool:
    if not _inside(folder, root):
        return False
    parts = folder.relative_to(root).parts
    return _match(parts, _pattern_parts(pattern))


# -- cargo ---------------------------------------------------------------------------------------

_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _cargo(reader: _Reader, start: Path) -> Path | None:
    package = reader.nearest(start, ("Cargo.toml",))
    if package is None:
        return reader.nearest(start, ("rust-project.json",))
    manifest = reader.parsed(package / "Cargo.toml", "toml")
    if manifest is None:
        return package
    own = _workspace_of(manifest, package)
    if own is not None:
        return own
    for folder in _cargo_ancestors(package):
        if "Cargo.toml" not in reader.names(folder):
            continue
        ancestor = reader.parsed(folder / "Cargo.toml", "toml")
        if ancestor is None:
            return package
        workspace = ancestor.get("workspace")
        if isinstance(workspace, dict):
            if _cargo_excluded(workspace, folder, package):
                continue  # cargo looks further up
            return folder if _cargo_member(reader, workspace, folder, package) else package
        pointer = _workspace_of(ancestor, folder)  # `package.workspace` of a package above
        if pointer is not None:
            return pointer
    return package


def _cargo_ancestors(package: Path) -> Iterator[Path]:
    """The folders above a package where cargo looks for its workspace: not above `CARGO_HOME`
    (a registry crate never joins a workspace in the home folder), not from `target/package`."""
    home = _normal(Path(os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")))
    previous: Path | None = None
    for folder in package.parents:
        if folder.parts[-2:] == ("target", "package") or previous == home:
            return
        yield folder
        previous = folder


def _workspace_of(manifest: dict[str, Any], folder: Path) -> Path | None:
    """The workspace a manifest says it belongs to: itself (`[workspace]`), or the folder its
    `package.workspace` names."""
    if isinstance(manifest.get("workspace"), dict):
        return folder
    package = manifest.get("package")
    if isinstance(package, dict) and isinstance(package.get("workspace"), str):
        return _normal(folder / package["workspace"])
    return None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _cargo_excluded(workspace: dict[str, Any], root: Path, package: Path) -> bool:
    """cargo's `is_excluded`: under an `exclude` path and not under a literal `members` path."""
    excluded = any(_inside(package, _normal(root / e)) for e in _strings(workspace.get("exclude")))
    listed = any(_inside(package, _normal(root / m)) for m in _strings(workspace.get("members")))
    return excluded and not listed


def _cargo_member(reader: _Reader, workspace: dict[str, Any], root: Path, package: Path) -> bool:
    """Whether `package` is a member of the workspace at `root`: the root package, a `members`
    glob, or a path dependency (transitively) of a member that lies inside the workspace."""
    members = _strings(workspace.get("members"))
    if any(_matches(root, package, m) for m in members):
        return True
    todo = [root, *(p for m in members for p in _expand(root, m))]
    seen: set[Path] = set()
    while todo and len(seen) < 256:
        member = todo.pop()
        if member in seen:
            continue
        seen.add(member)
        manifest = reader.parsed(member / "Cargo.toml", "toml")
        for dependency in _path_dependencies(manifest, member):
            if dependency == package:
                return True
            if _inside(dependency, root):
                todo.append(dependency)
    return False


def _expand(root: Path, pattern: str) -> Iterable[Path]:
    parts = _pattern_parts(pattern)
    if not any(c in pattern for c in "*?["):
        return [_normal(root.joinpath(*parts))]
    try:
        return [_normal(p) for p in root.glob("/".join(parts)) if (p / "Cargo.toml").is_file()]
    except (OSError, ValueError):
        return []


def _path_dependencies(manifest: Parsed, folder: Path) -> Iterator[Path]:
    if manifest is None:
        return
    tables = [manifest]
    target = manifest.get("target")
    if isinstance(target, dict):
        tables += [t for t in target.values() if isinstance(t, dict)]
    for table in tables:
        for name in _DEPENDENCY_TABLES:
            dependencies = table.get(name)
            if not isinstance(dependencies, dict):
                continue
            for spec in dependencies.values():
                if isinstance(spec, dict) and isinstance(spec.get("path"), str):
                    yield _normal(folder / spec["path"])


# -- go.work -------------------------------------------------------------------------------------

_COMMENT = re.compile(r"//.*$", re.M)
_USE = re.compile(r"^\s*use(?:\s*\(([^)]*)\)|\s+(\S.*?))\s*$", re.M)


def go_work_uses(text: str) -> list[str]:
    """The folders named by a go.work's `use` directives (single and block form), as written."""
    uses: list[str] = []
    for block, single in _USE.findall(_COMMENT.sub("", text)):
        for line in block.splitlines() if block else [single]:
            word = line.strip().strip('"`')
            if word:
                uses.append(word)
    return uses


def _go_work(reader: _Reader, start: Path) -> Path | None:
    module = reader.nearest(start, ("go.mod",))
    if module is None:
        return None
    work = reader.nearest(module, ("go.work",))
    if work is None:
        return module
    parsed = reader.parsed(work / "go.work", "text")
    uses = go_work_uses(parsed["text"]) if parsed else []
    return work if any(_normal(work / u) == module for u in uses) else module


# -- JavaScript / TypeScript monorepos -----------------------------------------------------------


def pnpm_packages(text: str) -> list[str]:
    """The `packages:` patterns of a pnpm-workspace.yaml: a block list or a flow list (`[a, b]`),
    quoted or not; other keys are ignored."""
    patterns: list[str] = []
    inside = False
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and not line.startswith("-"):
            key, _, rest = line.partition(":")
            inside = key.strip().strip("'\"") == "packages"
            rest = rest.strip()
            if inside and rest.startswith("["):
                patterns += [_unquote(p) for p in rest.strip("[]").split(",") if p.strip()]
                inside = False
            continue
        item = line.strip()
        if inside and item.startswith("-"):
            patterns.append(_unquote(item[1:]))
    return [p for p in patterns if p]


def _unquote(word: str) -> str:
    return word.strip().strip("'\"").strip()


def _js_patterns(reader: _Reader, folder: Path, names: frozenset[str]) -> list[str] | None:
    """The workspace patterns a folder declares (package.json `workspaces`, or
    pnpm-workspace.yaml), or None when it declares none."""
    if "pnpm-workspace.yaml" in names:
        parsed = reader.parsed(folder / "pnpm-workspace.yaml", "text")
        return pnpm_packages(parsed["text"]) if parsed else []
    if "package.json" not in names:
        return None
    manifest = reader.parsed(folder / "package.json", "json")
    workspaces = manifest.get("workspaces") if manifest else None
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    return _strings(workspaces) if isinstance(workspaces, list) else None


def _js_workspace(reader: _Reader, start: Path) -> Path | None:
    package = reader.nearest(start, ("package.json",))
    if package is None:
        return None
    for folder in _upwards(package):
        patterns = _js_patterns(reader, folder, reader.names(folder))
        if patterns is None:
            continue
        if folder == package:
            return folder
        included = [p for p in patterns if not p.startswith("!")]
        excluded = [p[1:] for p in patterns if p.startswith("!")]
        if any(_matches(folder, package, p) for p in included) and not any(
            _matches(folder, package, p) for p in excluded
        ):
            return folder
    return None


#: The rules a server may name as its `root_rule`.
RULES: dict[str, Callable[[_Reader, Path], Path | None]] = {
    "cargo": _cargo,
    "go.work": _go_work,
    "js-workspace": _js_workspace,
}
ROOT_RULES: tuple[str, ...] = tuple(RULES)


# -- the root ------------------------------------------------------------------------------------


def server_root(
    path: str | Path, rule: str | None, markers: Sequence[str], folders: Sequence[Path] = ()
) -> Path:
    """The root a server with this `rule` and `markers` picks for the file (or folder) `path`,
    given the client's workspace folders (see the module's docstring)."""
    start = _normal(Path(path))
    if not os.path.isdir(start):
        start = start.parent
    folders = tuple(_normal(Path(f)) for f in folders)
    key = (rule, tuple(markers), start, folders)
    cached = _RESULTS.get(key)
    if cached is not None and all(_stamp(p) == s for p, s in cached[1].items()):
        return cached[0]
    reader = _Reader()
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
    reader: _Reader,
    start: Path,
    rule: str | None,
    markers: Sequence[str],
    folders: tuple[Path, ...],
) -> Path:
    if rule is not None:
        found = RULES[rule](reader, start)
        if found is not None:
            return found
    holding = [f for f in folders if _inside(start, f)]
    folder = max(holding, key=lambda f: len(f.parts)) if holding else None
    marked = reader.nearest(start, markers, stop=folder)
    if marked is not None:
        return marked
    return folder if folder is not None else start


def clear_cache() -> None:
    """Forget every cached result and manifest (tests; a cached entry is re-checked anyway)."""
    _RESULTS.clear()
    _PARSED.clear()
