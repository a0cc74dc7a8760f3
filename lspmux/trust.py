"""`lspmux trust [DIR]`, `--revoke`, `--list`: the command over the trust database.

The database and what trust means live in `lspmux.config.trust`; this module finds the project
file that applies to a folder (as the loader would), records or removes it with the folder,
and lists what is trusted with whether each file changed since. It returns the lines to print.
"""

from __future__ import annotations

import os
from pathlib import Path

from lspmux.config.loader import ConfigError, find_project_file, load_config
from lspmux.config.model import PROJECT_BIN_DIRS
from lspmux.config.trust import (
    TrustDB,
    digest,
    load,
    revoked,
    save,
    trust_db_path,
    trusted,
)


def command(folder: Path, *, revoke: bool = False, listing: bool = False) -> list[str]:
    """What `lspmux trust [--revoke | --list] DIR` does, as the lines it prints."""
    db = load()
    if listing:
        return list_lines(db)
    real = Path(os.path.realpath(folder))
    file = find_project_file(real)
    if revoke:
        db, gone = revoked(db, real, file)
        save(db)
        if not gone:
            return [f"{real} was not trusted; nothing to revoke"]
        return [f"no longer trusted: {g}" for g in gone]
    allowed = what_trust_allows(real)
    path = save(trusted(db, real, file))
    lines = [f"trusted the folder {real}: executables in its {', '.join(PROJECT_BIN_DIRS)} may run"]
    if file is not None:
        sha = digest(Path(file).read_bytes())
        lines.append(
            f"trusted {file} as it is now (sha256 {sha[:16]}…); a change needs trust again"
        )
    else:
        lines.append("(no lspmux.toml or [tool.lspmux] applies to it)")
    lines += allowed
    lines.append(f"recorded in {path}")
    return lines


def what_trust_allows(folder: Path) -> list[str]:
    """What the configuration of `folder` uses once trusted and ignores until then, so the
    user sees what they allow."""
    try:
        config = load_config(folder, trust_db=TrustDB())
    except ConfigError as exc:
        return [f"warning: lspmux cannot use this configuration as it is: {exc}"]
    lines = []
    if config.untrusted_keys:
        lines.append("now used from it: " + ", ".join(config.untrusted_keys))
    if config.untrusted_executables:
        lines.append("now run from the workspace: " + ", ".join(config.untrusted_executables))
    return lines


def list_lines(db: TrustDB) -> list[str]:
    if not db.files and not db.dirs:
        return [f"nothing is trusted ({trust_db_path()})"]
    lines = [f"folder  {d}" for d in sorted(db.dirs)]
    for path, recorded in sorted(db.files.items()):
        try:
            state = "trusted" if digest(Path(path).read_bytes()) == recorded else "CHANGED"
        except OSError:
            state = "missing"
        lines.append(f"file    {path}  ({state})")
    return lines
