"""Which configured servers a file needs but are not installed, and how to install them.

Used by `status` and by every tool whose request no server could take (the error then names
the missing server and the install command instead of only saying that nobody answered). The
install commands come from one table, config/defaults.toml: `lspmux install NAME` for an entry
with a `package` recipe, else its `install` field (a user's or project's file may set its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lspmux.install.prefix import install_hint


def load(root: Path, configs: list[Path]) -> Any:
    from lspmux.config.loader import load_config

    return load_config(root, list(configs))


def hint(config: Any, name: str) -> str | None:
    """The install command of server or linter `name` in `config`, if the table has one."""
    for table in (config.servers, config.linters):
        found = table.get(name) if isinstance(table, dict) else None
        if found is not None:
            return install_hint(found.name, found.package, found.install)
    return None


def missing_for(root: Path, configs: list[Path], path: Path) -> list[tuple[str, str | None]]:
    """(server, install hint) for each enabled server of `path` whose executable is missing."""
    try:
        config = load(root, configs)
    except Exception:
        return []
    return [
        (s.name, install_hint(s.name, s.package, s.install))
        for s in config.servers_for(str(path))
        if not s.disabled and s.resolve_command(root) is None
    ]


def describe_missing(missing: list[tuple[str, str | None]]) -> str:
    return "; ".join(f"{name} (install: {hint})" if hint else name for name, hint in missing)
