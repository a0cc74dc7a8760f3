"""Which configured servers a file needs but are not installed, and how to install them.

Used by `status` and by every tool whose request no server could take (the error then names
the missing server and the install command instead of only saying that nobody answered). The
install commands are one table: the `install` field of each server and linter in
config/defaults.toml (a user's or project's file may set its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load(root: Path, configs: list[Path]) -> Any:
    from lspmux.config.loader import load_config

    return load_config(root, list(configs))


def hint(config: Any, name: str) -> str | None:
    """The install command of server or linter `name` in `config`, if the table has one."""
    for table in (config.servers, config.linters):
        found = table.get(name) if isinstance(table, dict) else None
        if found is not None and found.install:
            return str(found.install)
    return None


def missing_for(root: Path, configs: list[Path], path: Path) -> list[tuple[str, str | None]]:
    """(server, install hint) for each enabled server of `path` whose executable is missing."""
    try:
        config = load(root, configs)
    except Exception:
        return []
    return [
        (s.name, s.install)
        for s in config.servers_for(str(path))
        if not s.disabled and s.resolve_command(root) is None
    ]


def describe_missing(missing: list[tuple[str, str | None]]) -> str:
    return "; ".join(f"{name} (install: {hint})" if hint else name for name, hint in missing)
