"""Writing a plan to disk: every file checked, then each written atomically (temp + rename).

A file is written only if it still holds the text the edit was computed on; when any file
changed since, nothing at all is written and the error names the file. Files are staged as
temporary files beside their targets and moved into place with `os.replace`, so a reader
never sees half a file. A file reached through a symbolic link inside the root is written
where the link points (once that target is found inside the root): the link stays a link.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from lspmux.agent.edits import Plan
from lspmux.agent.errors import ToolError
from lspmux.agent.paths import inside, relative, uri_to_path


def read_disk(path: Path) -> str | None:
    """A file's text as the tools read it (UTF-8, newlines kept), None when it is missing."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, ValueError):
        return None  # ValueError: a path no file can have (a NUL from a server's `%00`)


def check_plan(plan: Plan, root: Path) -> None:
    """Refuse a plan that touches a path outside the root or a file changed since."""
    for change in plan.files.values():
        path = uri_to_path(change.uri)
        real = Path(os.path.realpath(path))
        if not inside(root, real):
            raise ToolError(
                f"the edit touches {path}, outside the workspace root {root}; nothing was written",
                path=str(path),
                root=str(root),
            )
        if read_disk(real) != change.before:
            raise ToolError(
                f"{relative(root, real)} changed on disk since the edit was computed; nothing "
                "was written. Ask again for a fresh preview, then apply it",
                path=relative(root, real),
                stale=True,
            )


def write_plan(plan: Plan, root: Path) -> list[Path]:
    """Check, then write every file of the plan; the paths written or removed."""
    check_plan(plan, root)
    staged: list[tuple[str, Path]] = []
    removed: list[Path] = []
    try:
        for change in plan.files.values():
            path = uri_to_path(change.uri)
            if change.after is None:
                if change.before is not None:
                    removed.append(path)
                continue
            if change.after == change.before:
                continue
            # Through a symbolic link, the file it points to (checked to lie inside the root)
            # is what changes; the link stays a link.
            target = Path(os.path.realpath(path))
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".lspmux", dir=target.parent
            )
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(change.after)
            with contextlib.suppress(OSError):
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            staged.append((tmp, target))
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    for path in removed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return [p for _, p in staged] + removed
