"""What an untrusted project configuration may still say, and what it may not.

A project file (`lspmux.toml`, `[tool.lspmux]`) the user has not trusted (`lspmux trust`, see
`lspmux.config.trust`) keeps only the keys that cannot change which program runs, with which
environment, or what a server is told to execute:

- kept: file types, language ids, root markers and `root_rule`, `role`,
  `only_features`/`except_features`, timeouts, `disabled = true`, a linter's output parsing
  (`format`, `json`, `regex`, `options`, `one_based`, `ok_exit_codes`, `source`, `input`,
  `run_on`, `debounce`), and the global timeouts;
- ignored: `command` and `env`; `settings` and `initialization_options` (servers run what
  some settings name: basedpyright's `python.pythonPath`, rust-analyzer's
  `check.overrideCommand`, ruff's `ruff.path`); `client_may_set`; `untrusted` (a server's
  restricted mode, see `lspmux.config.restricted`); `disabled = false` (turning
  on a server the user or the built-in table turned off); an entry the earlier layers do not
  define (it could only run the command it names); the global `allowed_servers`,
  `max_message_size`, `pass_environment` (what reaches a server's environment), `listen` and
  `connect` (where the daemon is).

Executables shipped in the workspace are not used either (`resolve_command` asks the trust
database); `untrusted_executables` lists those that would have been.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lspmux.config import trust
from lspmux.config.checkers import _join
from lspmux.config.checks import EXECUTABLE_GLOBALS, EXECUTABLE_KEYS
from lspmux.config.model import Config
from lspmux.config.resolve import PROJECT_BIN_DIRS, project_executable


def restrict(
    globals_: Mapping[str, Any],
    sections: Mapping[str, Mapping[str, Mapping[str, Any]]],
    known: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, Any], dict[str, dict[str, dict[str, Any]]], tuple[str, ...]]:
    """An untrusted file's global values and entries (`section` → name → values), without
    what it may not set; `known`: the entries of the layers before it. Returns the kept
    globals, the kept entries and the dotted keys that were ignored."""
    ignored: list[str] = [k for k in globals_ if k in EXECUTABLE_GLOBALS]
    kept_globals = {k: v for k, v in globals_.items() if k not in EXECUTABLE_GLOBALS}
    kept: dict[str, dict[str, dict[str, Any]]] = {}
    for section, entries in sections.items():
        kept[section] = {}
        for name, values in entries.items():
            prefix = _join(section, name)
            if name not in known.get(section, {}):
                ignored.append(prefix)
                continue
            entry = {}
            was_disabled = bool(known[section][name].get("disabled"))
            for key, value in values.items():
                if key in EXECUTABLE_KEYS or (key == "disabled" and not value and was_disabled):
                    ignored.append(_join(prefix, key))
                else:
                    entry[key] = value
            kept[section][name] = entry
    return kept_globals, kept, tuple(ignored)


def untrusted_executables(
    config: Config, root: Path, db: trust.TrustDB | None = None
) -> tuple[str, ...]:
    """The executables inside `root` that enabled servers and linters would run were `root`
    trusted (none are found on PATH); empty when it is trusted."""
    if not any(os.path.isdir(os.path.join(root, d)) for d in PROJECT_BIN_DIRS):
        return ()
    if (db or trust.load()).dir_trusted(root):
        return ()
    found = []
    commands = [s.command for s in config.servers.values() if not s.disabled]
    commands += [lt.command for lt in config.linters.values() if not lt.disabled]
    for command in commands:
        if not command or os.sep in command[0]:
            continue
        exe = command[0]
        if shutil.which(exe) is None:
            candidate = project_executable(exe, root)
            if candidate is not None:
                found.append(candidate)
    return tuple(found)


def notice(config: Config) -> str | None:
    """What to tell the user (once, as a `window/showMessage` and in the log) about what the
    project's untrusted configuration or workspace was not allowed to run; None when
    nothing was left out."""
    parts = []
    if config.untrusted_keys:
        parts.append(
            f"{config.project_file} is not trusted, so what it says about what to run was "
            f"ignored ({', '.join(config.untrusted_keys)})"
        )
    if config.untrusted_executables:
        parts.append(
            "executables shipped in the workspace were not used "
            f"({', '.join(config.untrusted_executables)})"
        )
    if not parts:
        return None
    return (
        "lspmux: " + "; ".join(parts) + f". Review them, then run `lspmux trust "
        f"{config.project_dir}` to allow them (`lspmux doctor` shows what is trusted)."
    )
