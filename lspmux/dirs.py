"""The folders lspmux keeps its files in, named once: config, data, cache, state, runtime.

Config, data, cache and state come from `platformdirs` (the maintained answer to "where does
each OS want these"): on Linux and the BSDs the XDG base directories — `$XDG_CONFIG_HOME/lspmux`
else `~/.config/lspmux` (the file the Rust lspmux reads too), `$XDG_DATA_HOME` else
`~/.local/share`, `$XDG_CACHE_HOME` else `~/.cache`, `$XDG_STATE_HOME` else `~/.local/state`; a
relative `XDG_*` value is ignored, as the spec asks. macOS gets the same XDG layout
(platformdirs' `Unix`, not its `~/Library/…` default): `~/.config/lspmux/config.toml` is
where lspmux has always looked there, as docs/configuration.md says. Windows gets
platformdirs' folders (under `%LOCALAPPDATA%`). The import (~10 ms, most of it
`tempfile`) happens on the first call, not at import, and only where the XDG rule is not plain
(`plain_dir`: Windows, or no usable `$HOME`): on Linux and macOS the proxy loads its config,
trust database and capability cache before it spawns the servers, without platformdirs.

The runtime folder (the daemon's socket) is not platformdirs': its `user_runtime_dir` checks,
may create and warns about `$XDG_RUNTIME_DIR`, and falls back to `/run/user/<uid>`, where
lspmux wants a plain name the client can compute on its fast path: `$XDG_RUNTIME_DIR/lspmux`,
else `<tmp>/lspmux-<uid>`; the daemon makes that folder private itself (daemon/address.py).
"""

from __future__ import annotations

import os
import sys
from functools import cache

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the client imports this; typing costs ms
if TYPE_CHECKING:  # pathlib too (~5 ms): the client and the verbs use the `*_name` strings
    from collections.abc import Mapping
    from pathlib import Path

    from platformdirs.api import PlatformDirsABC

APP = "lspmux"
CONFIG_FILE = "config.toml"


@cache
def _dirs() -> PlatformDirsABC:
    if sys.platform == "win32":
        from platformdirs import PlatformDirs

        return PlatformDirs(APP, appauthor=False)
    from platformdirs.unix import Unix  # the XDG layout, on macOS too

    return Unix(APP, appauthor=False)


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/lspmux`, else `~/.config/lspmux` (Linux)."""
    from pathlib import Path

    return Path(config_dir_name())


def config_dir_name() -> str:
    """`config_dir()` as a string (without pathlib: the client reads it at every start)."""
    plain = plain_dir("config")
    return plain if plain is not None else _dirs().user_config_dir


#: Each kind of folder: its XDG variable and its default under `$HOME` (the XDG spec's).
_XDG = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "data": ("XDG_DATA_HOME", ".local/share"),
    "cache": ("XDG_CACHE_HOME", ".cache"),
    "state": ("XDG_STATE_HOME", ".local/state"),
}


def plain_dir(kind: str) -> str | None:
    """platformdirs' folder of `kind` ("config", "data", "cache", "state") where its rule is
    plain, without importing it (every client start reads the user file's `connect`, every
    proxy start its config and caches; the import costs ~10 ms): an absolute `$XDG_*_HOME`,
    else an absolute `$HOME`'s default. None elsewhere (Windows, no usable HOME): platformdirs
    knows those. tests/unit/test_dirs.py checks both agree."""
    if sys.platform == "win32":
        return None
    variable, default = _XDG[kind]
    xdg = os.environ.get(variable, "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, APP)
    if os.path.isabs(os.environ.get("HOME", "")):
        return os.path.join(os.path.expanduser("~/" + default), APP)
    return None


def user_config_file() -> Path:
    """`$XDG_CONFIG_HOME/lspmux/config.toml`, else `~/.config/lspmux/config.toml` (Linux): the
    user's configuration file, shared with the Rust lspmux."""
    return config_dir() / CONFIG_FILE


def user_config_file_name() -> str:
    """`user_config_file()` as a string (without pathlib: the client reads it at every start)."""
    return os.path.join(config_dir_name(), CONFIG_FILE)


def data_dir() -> Path:
    """`$XDG_DATA_HOME/lspmux`, else `~/.local/share/lspmux` (Linux): the trust database."""
    from pathlib import Path

    plain = plain_dir("data")
    return Path(plain if plain is not None else _dirs().user_data_dir)


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/lspmux`, else `~/.cache/lspmux` (Linux): recorded capabilities."""
    from pathlib import Path

    plain = plain_dir("cache")
    return Path(plain if plain is not None else _dirs().user_cache_dir)


def state_dir() -> Path:
    """`$XDG_STATE_HOME/lspmux`, else `~/.local/state/lspmux` (Linux)."""
    from pathlib import Path

    plain = plain_dir("state")
    return Path(plain if plain is not None else _dirs().user_state_dir)


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_RUNTIME_DIR/lspmux` when it is set (an absolute path), else `<tmp>/lspmux-<uid>`
    (`TMPDIR`, `TEMP` or `TMP`, else /tmp): where the daemon's socket lives."""
    from pathlib import Path

    return Path(runtime_dir_name(environ))


def runtime_dir_name(environ: Mapping[str, str] | None = None) -> str:
    """`runtime_dir()` as a string (without pathlib: the client finds the socket with it)."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return os.path.join(os.path.normpath(runtime), APP)
    tmp = env.get("TMPDIR") or env.get("TEMP") or env.get("TMP") or "/tmp"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(os.path.normpath(tmp), f"{APP}-{uid}")
