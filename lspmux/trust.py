"""`lspmux trust [DIR]`, `--revoke`, `--list`: the command over the trust database.

The database and what trust means live in `lspmux.config.trust`; this module finds the project
file that applies to a folder (as the loader would), records or removes it with the folder,
and lists what is trusted with whether each file changed since. It returns the lines to print.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lspmux.config.loader import ConfigError, find_project_file, load_config
from lspmux.config.model import Config
from lspmux.config.resolve import PROJECT_BIN_DIRS
from lspmux.config.trust import (
    TrustDB,
    digest,
    file_key,
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
    allowed = what_trust_allows(real, file)
    path = save(trusted(db, real, file))
    lines = [
        f"trusted the folder {real}: executables in its own {', '.join(PROJECT_BIN_DIRS)} may "
        "run (not those of a project nested inside it, which needs `lspmux trust` of its own)"
    ]
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


def what_trust_allows(folder: Path, file: Path | None = None) -> list[str]:
    """What the configuration of `folder` runs once trusted and not until then — each
    command, environment and setting the project file names, the workspace's executables,
    the servers that leave their restricted mode — so that the user sees what they allow."""
    real = os.path.realpath(folder)
    allowed = TrustDB(
        files={file_key(file): digest(Path(file).read_bytes())} if file is not None else {},
        dirs=(real,),
    )
    try:
        before = load_config(folder, trust_db=TrustDB(), warn=False)
    except ConfigError as exc:
        return [f"warning: lspmux cannot use this configuration as it is: {exc}"]
    try:
        after = load_config(folder, trust_db=allowed, warn=False)
    except ConfigError as exc:
        return [
            "now used from it: " + ", ".join(before.untrusted_keys),
            f"warning: trusted, this configuration is not valid, and lspmux cannot use it: {exc}",
        ]
    lines = []
    if before.untrusted_keys:
        lines.append("now used from it:")
        lines += [f"  {line}" for key in before.untrusted_keys for line in _values(after, key)]
    if before.untrusted_executables:
        lines.append("now run from the workspace: " + ", ".join(before.untrusted_executables))
    lifted = [
        name
        for name, server in after.servers.items()
        if server.untrusted and not server.disabled and not server.untrusted.get("disabled")
    ]
    lifted += [
        f"{name} (not started until now)"
        for name, server in after.servers.items()
        if server.untrusted.get("disabled") and not server.disabled
    ]
    if lifted:
        lines.append(
            "servers that now run without their restricted mode for this folder (a project "
            "inside it stays restricted): " + ", ".join(lifted)
        )
    return lines


def _values(config: Config, key: str) -> list[str]:
    """`key = value` lines for an ignored dotted key, read from the trusted `config`: for a
    whole entry, what it runs (command, env)."""
    parts = key.split(".")
    if len(parts) == 1:
        return [f"{key} = {_show(getattr(config, key, None))}"]
    section = config.servers if parts[0] == "servers" else config.linters
    entry = section.get(parts[1])
    if entry is None:
        return [key]
    fields = parts[2:] or ["command", *(["env"] if entry.env else [])]
    return [f"{parts[0]}.{parts[1]}.{f} = {_show(getattr(entry, f, None))}" for f in fields]


def _show(value: Any, limit: int = 400) -> str:
    if isinstance(value, tuple):
        value = list(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
