"""Where a server's or linter's files, root and executable are: which files it takes
(`matches_file`), the folder that is its root (`find_root`), and the executable that runs it
(`resolve_command`: what `lspmux install` put in its prefix, then PATH, then the workspace's
own bins — those only once the user trusts the workspace, asked of the trust database)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from lspmux.config import trust
from lspmux.install.prefix import installed_executable

log = logging.getLogger("lspmux.config")

#: Folders, relative to a workspace root, searched for a server's executable after PATH.
PROJECT_BIN_DIRS: tuple[str, ...] = ("node_modules/.bin", ".venv/bin", "venv/bin", "bin")


def matches_file(
    file_types: tuple[str, ...], language_ids: tuple[str, ...], path: str, language_id: str | None
) -> bool:
    """True when `path` ends in one of the extensions or is one of the basenames in
    `file_types`, or when `language_id` is one of `language_ids`."""
    if language_id is not None and language_id in language_ids:
        return True
    base = path.rsplit("/", 1)[-1]
    for ft in file_types:
        if ft.startswith("."):
            if base.endswith(ft) and len(base) > len(ft):
                return True
        elif base == ft:
            return True
    return False


def find_root(markers: tuple[str, ...], path: str | Path) -> Path:
    """The nearest ancestor of `path` holding one of `markers`; the file's folder if none.

    A marker is a file or folder name, or a glob pattern matched against names in the folder
    (`*.csproj`, `*.cabal`), for projects whose marker file is named after the project.
    """
    p = Path(path)
    start = p if os.path.isdir(p) else p.parent  # no OSError (a name too long for the OS)
    for folder in (start, *start.parents):
        for marker in markers:
            if _has_marker(folder, marker):
                return folder
    return start


def _has_marker(folder: Path, marker: str) -> bool:
    if any(c in marker for c in "*?["):
        return next(iter(folder.glob(marker)), None) is not None
    return os.path.exists(folder / marker)


def resolve_command(
    command: tuple[str, ...], root: str | Path | None = None, *, project_bins: bool | None = None
) -> list[str] | None:
    """The argv with its executable resolved (what `lspmux install` put in its prefix, then
    PATH, then project-local bins), or None.

    An executable inside the workspace (`PROJECT_BIN_DIRS` under `root`) is used only when
    `project_bins` is true; None asks the trust database whether the user trusted `root`
    (`lspmux trust`). One found but not trusted is left out, and the log says so once."""
    if not command:
        return None
    exe = command[0]
    if os.sep in exe:
        return list(command) if os.access(exe, os.X_OK) else None
    found = installed_executable(exe) or shutil.which(exe)
    if found is None and root is not None:
        candidate = project_executable(exe, root)
        if candidate is not None:
            if project_bins is None:
                project_bins = trust.workspace_trusted(root)
            if project_bins:
                found = candidate
            elif trust.once("bin", candidate):
                log.warning(
                    "%s is not used: %s is not trusted (an executable shipped in a workspace "
                    "runs only after `lspmux trust %s`); %s is not on PATH either",
                    candidate,
                    root,
                    root,
                    exe,
                )
    if found is None:
        return None
    return [found, *command[1:]]


def project_executable(exe: str, root: str | Path) -> str | None:
    """The first executable named `exe` in the project folders of `root`, trusted or not."""
    for folder in PROJECT_BIN_DIRS:
        candidate = Path(root) / folder / exe
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None
