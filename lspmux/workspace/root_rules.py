"""The root rules: how cargo, the go command and the JavaScript package managers find the
workspace a file belongs to (roots.py's docstring describes each rule). Each rule reads
through a `Reader` and answers None when it finds nothing, so the markers decide.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from lspmux.workspace.manifests import (
    Parsed,
    Reader,
    inside,
    matches,
    normal,
    pattern_parts,
    upwards,
)

# -- cargo ---------------------------------------------------------------------------------------

_DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def _cargo(reader: Reader, start: Path) -> Path | None:
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
    home = normal(Path(os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")))
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
        return normal(folder / package["workspace"])
    return None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _cargo_excluded(workspace: dict[str, Any], root: Path, package: Path) -> bool:
    """cargo's `is_excluded`: under an `exclude` path and not under a literal `members` path."""
    excluded = any(inside(package, normal(root / e)) for e in _strings(workspace.get("exclude")))
    listed = any(inside(package, normal(root / m)) for m in _strings(workspace.get("members")))
    return excluded and not listed


def _cargo_member(reader: Reader, workspace: dict[str, Any], root: Path, package: Path) -> bool:
    """Whether `package` is a member of the workspace at `root`: the root package, a `members`
    glob, or a path dependency (transitively) of a member that lies inside the workspace."""
    members = _strings(workspace.get("members"))
    if any(matches(root, package, m) for m in members):
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
            if inside(dependency, root):
                todo.append(dependency)
    return False


def _expand(root: Path, pattern: str) -> Iterable[Path]:
    parts = pattern_parts(pattern)
    if not any(c in pattern for c in "*?["):
        return [normal(root.joinpath(*parts))]
    try:
        return [normal(p) for p in root.glob("/".join(parts)) if (p / "Cargo.toml").is_file()]
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
                    yield normal(folder / spec["path"])


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


def _go_work(reader: Reader, start: Path) -> Path | None:
    module = reader.nearest(start, ("go.mod",))
    if module is None:
        return None
    work = reader.nearest(module, ("go.work",))
    if work is None:
        return module
    parsed = reader.parsed(work / "go.work", "text")
    uses = go_work_uses(parsed["text"]) if parsed else []
    return work if any(normal(work / u) == module for u in uses) else module


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


def _js_patterns(reader: Reader, folder: Path, names: frozenset[str]) -> list[str] | None:
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


def _js_workspace(reader: Reader, start: Path) -> Path | None:
    package = reader.nearest(start, ("package.json",))
    if package is None:
        return None
    for folder in upwards(package):
        patterns = _js_patterns(reader, folder, reader.names(folder))
        if patterns is None:
            continue
        if folder == package:
            return folder
        included = [p for p in patterns if not p.startswith("!")]
        excluded = [p[1:] for p in patterns if p.startswith("!")]
        if any(matches(folder, package, p) for p in included) and not any(
            matches(folder, package, p) for p in excluded
        ):
            return folder
    return None


#: The rules a server may name as its `root_rule`.
RULES: dict[str, Callable[[Reader, Path], Path | None]] = {
    "cargo": _cargo,
    "go.work": _go_work,
    "js-workspace": _js_workspace,
}
ROOT_RULES: tuple[str, ...] = tuple(RULES)
