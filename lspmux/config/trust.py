"""The trust database: the project configurations and workspace folders the user trusted.

A project's `lspmux.toml` (or `[tool.lspmux]` in its pyproject.toml) may name what to run, and a
workspace may ship executables (`bin/gopls`, `node_modules/.bin/biome`, `.venv/bin/ruff`).
Opening a repository must not run what its author chose, so both are used only after the user
said so with `lspmux trust DIR`, like `direnv allow` or Neovim's `vim.secure.trust()`:

- a *file* entry is the file's own location (its folder's real path and its name: a symbolic
  link is keyed where the link is, not where it points, so that a repository cannot borrow
  the trust of another project's file by linking to it) and the SHA-256 of its exact bytes:
  any change to the file (even a space) makes it untrusted again until it is trusted anew;
- a *folder* entry is a real path: executables found in the project folders of a workspace root
  (`PROJECT_BIN_DIRS`) are used, and servers run without their restricted mode, when that root
  is exactly the folder. A root nested inside it (a dependency with its own `package.json`
  under `node_modules`, a vendored module, a repository cloned there later) is a workspace of
  its own, and needs trust of its own.

The database is one JSON file, `$XDG_DATA_HOME/lspmux/trust.json` (default
`~/.local/share/lspmux/trust.json`), mode 0600 in a 0700 folder, written atomically. A missing
file trusts nothing; an unreadable or corrupt one trusts nothing and says so in the log (fail
closed). Reads are cached on the file's (mtime, size), since the question is asked per server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lspmux import dirs

log = logging.getLogger("lspmux.config")

TRUST_FILE = "trust.json"
_VERSION = 1


def trust_db_path() -> Path:
    """`$XDG_DATA_HOME/lspmux/trust.json`, or `~/.local/share/lspmux/trust.json` (Linux)."""
    return dirs.data_dir() / TRUST_FILE


def digest(data: bytes) -> str:
    import hashlib  # here, not at start: only a project file is hashed (~4 ms to import)

    return hashlib.sha256(data).hexdigest()


def file_key(path: str | Path) -> str:
    """Where a file entry is recorded: the real path of the file's folder, joined with the
    file's own name (a symbolic link stays itself: trust does not follow it)."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


@dataclass(frozen=True, slots=True)
class TrustDB:
    """What the user trusted: file (`file_key`) → SHA-256 of its content, and folder real
    paths."""

    files: Mapping[str, str] = field(default_factory=dict)
    dirs: tuple[str, ...] = ()

    def file_trusted(self, path: str | Path, content: bytes | None = None) -> bool:
        """Whether the file at `path` (where it is, not where a link points), as it is now
        (or with `content`), was trusted."""
        recorded = self.files.get(file_key(path))
        if recorded is None:
            return False
        if content is None:
            try:
                content = Path(path).read_bytes()
            except OSError:
                return False
        return recorded == digest(content)

    def dir_trusted(self, folder: str | Path) -> bool:
        """Whether `folder` is itself a trusted folder. A folder inside a trusted one is not:
        it is another workspace root (a dependency, a vendored or cloned repository)."""
        return os.path.realpath(folder) in self.dirs


_cache: dict[str, tuple[tuple[int, int], TrustDB]] = {}


def load(path: Path | None = None) -> TrustDB:
    """The database at `path` (default: `trust_db_path()`); empty when there is none."""
    path = path or trust_db_path()
    try:
        st = path.stat()
    except FileNotFoundError:
        return TrustDB()
    except OSError as exc:
        log.warning("cannot read the trust database %s (%s): trusting nothing", path, exc)
        return TrustDB()
    key = (st.st_mtime_ns, st.st_size)
    cached = _cache.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        doc = json.loads(path.read_bytes())
        db = _from_json(doc)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning(
            "the trust database %s is unreadable (%s): trusting nothing; run `lspmux trust "
            "DIR` again for the folders you trust",
            path,
            exc,
        )
        return TrustDB()
    _cache[str(path)] = (key, db)
    return db


def _from_json(doc: Any) -> TrustDB:
    files = doc["files"]
    dirs = doc["dirs"]
    if not isinstance(files, dict) or not isinstance(dirs, list):
        raise TypeError("expected files (an object) and dirs (a list)")
    return TrustDB(
        files={str(k): str(v) for k, v in files.items()}, dirs=tuple(str(d) for d in dirs)
    )


def save(db: TrustDB, path: Path | None = None) -> Path:
    """Write `db` atomically to `path` (default: `trust_db_path()`), private to the user."""
    path = path or trust_db_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    doc = {"version": _VERSION, "files": dict(sorted(db.files.items())), "dirs": sorted(db.dirs)}
    import tempfile  # only when the user trusts something: not on the start path

    fd, tmp = tempfile.mkstemp(prefix=".trust-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _cache.pop(str(path), None)
    return path


def trusted(db: TrustDB, folder: Path, file: Path | None) -> TrustDB:
    """`db` with `folder` trusted, and `file` with its current content."""
    files = dict(db.files)
    if file is not None:
        files[file_key(file)] = digest(Path(file).read_bytes())
    real = os.path.realpath(folder)
    dirs = db.dirs if real in db.dirs else (*db.dirs, real)
    return TrustDB(files=files, dirs=dirs)


def revoked(db: TrustDB, folder: Path, file: Path | None) -> tuple[TrustDB, list[str]]:
    """`db` without `folder` and `file`; and what was removed."""
    real = os.path.realpath(folder)
    gone = [d for d in db.dirs if d == real]
    files = dict(db.files)
    if file is not None and files.pop(file_key(file), None) is not None:
        gone.append(file_key(file))
    return TrustDB(files=files, dirs=tuple(d for d in db.dirs if d != real)), gone


def workspace_trusted(root: str | Path) -> bool:
    """Whether executables inside the workspace `root` may be run, and servers run there
    without their restricted mode: the user trusted exactly this folder."""
    return load().dir_trusted(root)


_told: set[tuple[str, ...]] = set()


def once(*key: str) -> bool:
    """True the first time this process asks with `key`: to say something only once."""
    if key in _told:
        return False
    _told.add(key)
    return True
