"""Root confinement: every path a tool reads or writes resolves inside the workspace root.

Relative paths start at the root; `..`, absolute paths elsewhere and symlinks that lead out
are refused with a message naming the root. Labels print paths relative to the root, so an
agent can paste them back. Also which file a Locate string names, and one file per language
of a project (to start every server a workspace-wide question needs).
"""

from __future__ import annotations

import os
from pathlib import Path

from lspmux.agent.errors import ToolError
from lspmux.headless import LANGUAGE_IDS
from lspmux.uris import file_path


def confine(root: Path, given: str, *, must_exist: bool = True) -> Path:
    """The real path of `given` (relative to `root`, or absolute) when it lies inside `root`."""
    if not given:
        raise ToolError("no file given: name a file relative to the workspace root")
    raw = Path(given).expanduser()
    candidate = raw if raw.is_absolute() else root / raw
    real = Path(os.path.realpath(candidate))
    if not inside(root, real):
        raise ToolError(
            f"{given!r} lies outside the workspace root {root}; give a path inside it "
            "(relative paths start at the root)",
            path=given,
            root=str(root),
        )
    if must_exist and not real.is_file():
        raise ToolError(
            f"file not found: {given!r} (relative paths start at {root})",
            path=given,
            root=str(root),
        )
    return real


def inside(root: Path, path: Path) -> bool:
    """Whether the real `path` is `root` or below it (`root` is already real)."""
    return path == root or root in path.parents


def relative(root: Path, path: Path | str) -> str:
    """`path` relative to `root` when inside it, else as given (absolute)."""
    p = Path(path)
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return str(p)


def uri_to_path(uri: str) -> Path:
    """The file a `file:` URI names (lspmux.uris); a URI of another scheme a server answers
    with (`jdt://…`) stays as it is: the tools print it, and no file is read there."""
    return Path(file_path(uri) or uri)


def one_file_per_language(root: Path, seen: dict[str, Path]) -> dict[str, Path]:
    """`seen` plus the first file of each language not in it (a bounded walk)."""
    from lspmux.config.needs import SKIP_DIRS  # VCS, dependency and build folders

    found = dict(seen)
    budget = 5000
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and d[0] != ".")
        for name in sorted(filenames):
            language = LANGUAGE_IDS.get(os.path.splitext(name)[1])
            if language and language not in found and language not in ("json", "markdown"):
                found[language] = Path(dirpath) / name
        budget -= len(filenames) + 1
        if budget <= 0:
            break
    return found


def locate_file(root: Path, spec: str) -> Path | None:
    """The file a Locate string names (the shortest existing prefix), to open it first."""
    for i, ch in enumerate(spec):
        if ch in ":@":
            candidate = root / spec[:i]
            if candidate.is_file():
                real = Path(os.path.realpath(candidate))
                return real if inside(root, real) else None
    candidate = root / spec
    return candidate if candidate.is_file() else None
