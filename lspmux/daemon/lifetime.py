"""When the daemon ends on its own: idle for `idle_timeout`, or replaced by a new install.

- Idle exit: a daemon with no client, no shared instance (the reaper stops those after
  `instance_timeout`), no connection in its handshake and no hosted agent session for
  `idle_timeout` seconds (`lspmux server --idle-timeout`, env `LSPMUX_IDLE_TIMEOUT`; default
  10 minutes; 0 never) exits, its work done. So a daemon started by `lspmux client` or
  `lspmux mcp` does not outlive its use by more than `instance_timeout + idle_timeout`.
- Upgrade: at start the daemon notes what lspmux is installed (`installed`: the version and
  the newest modification time of the package's files). When a client connects and that has
  changed (pipx, uv or pip upgraded it, or a checkout's files changed), the daemon hands over:
  it stops listening (its socket removed, the address's lock released), serves the clients it
  has (that one included) to their end, then exits; the next client finds no daemon and
  starts the new one (`lspmux client` does that itself). Nothing is cut off mid-session.
  The look is cheap at each connect: the package's folders and `__init__.py`, and all its
  files at most every `WALK_EVERY` seconds.
"""

from __future__ import annotations

import os
from pathlib import Path

import lspmux

IDLE_ENV = "LSPMUX_IDLE_TIMEOUT"
#: Seconds without clients or instances before the daemon exits.
DEFAULT_IDLE = 600.0


def idle_timeout(given: float | None, environ: dict[str, str] | None = None) -> float | None:
    """The idle timeout: `given` (the command line), else `LSPMUX_IDLE_TIMEOUT`, else 600 s;
    None (never) for 0. ValueError naming the variable for a value that is not a number."""
    env = os.environ if environ is None else environ
    if given is None:
        text = env.get(IDLE_ENV, "").strip()
        try:
            given = float(text) if text else DEFAULT_IDLE
        except ValueError:
            raise ValueError(f"{IDLE_ENV}={text!r}: expected seconds (0: never)") from None
    if given < 0:
        raise ValueError(f"idle timeout {given:g}: expected seconds >= 0 (0: never)")
    return given or None


#: How long a full look at the package's files serves (`installed`): a client's connect asks,
#: and walking ~250 files costs about a millisecond; its folders and `__init__.py` (where the
#: version is) are looked at every time, which is what an upgrade or a checkout changes.
WALK_EVERY = 2.0


class _Look:
    """The last full look: what it found, when, and the folders' and `__init__.py`'s stamps."""

    def __init__(self, found: tuple[str, int], at: float, stamps: list[int]) -> None:
        self.found, self.at, self.stamps = found, at, stamps


_last: dict[str, tuple[list[str], _Look]] = {}


def installed(package: Path | None = None) -> tuple[str, int]:
    """What lspmux is installed now: (version, newest mtime in ns of the package's files).
    A walk of the package's ~250 files (about a millisecond) at most every WALK_EVERY seconds
    while its folders (a file added, removed or replaced, as installers and git do) and its
    `__init__.py` (the version) are unchanged; an edit in place of another file is seen at the
    first look after that."""
    import time

    root = str(package or Path(lspmux.__file__).parent)
    now = time.monotonic()
    last = _last.get(root)
    if last is not None:
        folders, look = last
        if now - look.at < WALK_EVERY and _stamps(folders, root) == look.stamps:
            return look.found
    newest = 0
    folders = []
    stack = [root]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith((".py", ".toml", ".json")):
                    newest = max(newest, entry.stat().st_mtime_ns)
    found = (_version_on_disk(Path(root)), newest)
    _last[root] = (folders, _Look(found, now, _stamps(folders, root)))
    return found


def _stamps(folders: list[str], root: str) -> list[int]:
    """The folders' modification times and `__init__.py`'s (-1 for one that is gone)."""
    out = []
    for path in (*folders, os.path.join(root, "__init__.py")):
        try:
            out.append(os.stat(path).st_mtime_ns)
        except OSError:
            out.append(-1)
    return out


def _version_on_disk(root: Path) -> str:
    """`__version__` as the package's `__init__.py` on disk says it (not the imported one)."""
    try:
        text = (root / "__init__.py").read_text(encoding="utf-8")
    except OSError:
        return "?"
    for line in text.splitlines():
        if line.startswith("__version__"):
            return line.partition("=")[2].strip().strip("\"'")
    return "?"


class Idle:
    """Since when the daemon has had nothing to do (None: busy)."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.since: float | None = None

    def check(self, busy: bool, now: float) -> bool:
        """Whether the daemon has been idle for the timeout, given whether it is `busy` now."""
        if busy or self.timeout is None:
            self.since = None
            return False
        if self.since is None:
            self.since = now
        return now - self.since >= self.timeout
