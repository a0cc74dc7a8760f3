"""What a daemon client may ask for in its `lspMux` handshake: which server, and whether it may
set that server's arguments, environment or working directory.

Responsible for: the allow-list (the servers of the daemon's own, trusted configuration —
built-in table, user file, `--config` files, never a project's `lspmux.toml` — plus
`allowed_servers`), the check of a client's `args`, `env` and `cwd` against the server's
`client_may_set` key, and the one-server configuration a `lspMux` connect runs. A client's
`args` or `env` that differ from the configured ones are refused unless the configured server
lists them in `client_may_set`; its `cwd` is ignored unless listed (a root comes from the
client's `initialize`, like any LSP client's). Pure functions over a `Config`; no I/O besides
looking executables up on PATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.errors import InvalidRequest, RequestFailed

#: Environment variables a client may not set for a server it starts, even when allowed.
UNSAFE_ENV_PREFIXES = ("LD_", "DYLD_")


def resolve_executable(command: str) -> str | None:
    """The real path of the program `command` names (PATH lookup for a bare name), or None."""
    if os.sep in command:
        return os.path.realpath(command) if os.access(command, os.X_OK) else None
    found = shutil.which(command)
    return os.path.realpath(found) if found else None


class AllowList:
    """The servers a client may name: command names, and the real paths they resolve to."""

    def __init__(self, config: Config) -> None:
        entries = config.allowed_servers
        if entries is None:
            entries = tuple(s.command[0] for s in config.servers.values() if s.command)
        self.entries = tuple(entries)
        self.names = {e for e in self.entries if os.sep not in e}
        self.paths = {p for e in self.entries if (p := resolve_executable(e)) is not None}

    def permits(self, server: str) -> bool:
        if os.sep not in server and server in self.names:
            return True
        resolved = resolve_executable(server)
        return resolved is not None and resolved in self.paths

    def refusal(self, server: str, config_file: str) -> str:
        return (
            f"lspmux: the daemon does not start {server!r}: it is not a configured server nor "
            f"in allowed_servers. To allow it, add it to {config_file}, e.g. "
            f'allowed_servers = ["{server}"] (or configure it as [servers.NAME] with '
            f'command = ["{server}"]), then restart the daemon'
        )


@attrs.frozen
class OneServerConfig(Config):
    """A configuration where one server serves every file, with no linters (`lspMux` connect
    and `--server-path`: exactly that server, like the Rust lspmux)."""

    def servers_for(self, path: str, language_id: str | None = None) -> list[ServerConfig]:
        return [s for s in self.servers.values() if not s.disabled]

    def linters_for(self, path: str, language_id: str | None = None) -> list[LinterConfig]:
        return []


def match_server(config: Config, server: str) -> ServerConfig | None:
    """The configured server `server` names: by name, by command name, then by real path."""
    base = os.path.basename(server)
    for s in config.servers.values():
        if s.name == base and s.command and os.path.basename(s.command[0]) == base:
            return s
    for s in config.servers.values():
        if s.command and os.path.basename(s.command[0]) == base:
            return s
    resolved = resolve_executable(server)
    if resolved is not None:
        for s in config.servers.values():
            if s.command and resolve_executable(s.command[0]) == resolved:
                return s
    return None


def one_server_config(
    config: Config, server: str, args: Sequence[str], env: Mapping[str, str]
) -> OneServerConfig:
    """`config` reduced to the one server a client named, reusing its configured settings."""
    match = match_server(config, server)
    safe_env = {k: v for k, v in env.items() if not k.startswith(UNSAFE_ENV_PREFIXES)}
    if match is not None:
        command = (server, *args) if args else (server, *match.command[1:])
        name = match.name
        if tuple(command[1:]) != tuple(match.command[1:]):
            name = f"{name}+{_digest(command)}"  # other arguments: another instance
        chosen = attrs.evolve(
            match, name=name, command=command, env={**match.env, **safe_env}, disabled=False
        )
    else:
        command = (server, *args)
        name = os.path.basename(server) + (f"+{_digest(command)}" if args else "")
        chosen = ServerConfig(
            name=name,
            command=command,
            env=safe_env,
            request_timeout=config.request_timeout,
            idle_timeout=config.idle_timeout,
        )
    return OneServerConfig(
        servers={chosen.name: chosen},
        linters={},
        request_timeout=config.request_timeout,
        idle_timeout=config.idle_timeout,
        instance_timeout=config.instance_timeout,
        allowed_servers=config.allowed_servers,
        origins=config.origins,
        files=config.files,
    )


def _digest(command: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(command).encode()).hexdigest()[:8]


@attrs.frozen
class ClientRequest:
    """What a `lspMux` connect asked for, validated and reduced to what it may have."""

    server: str | None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: The client's working directory when `client_may_set` allows it, else None (ignored).
    cwd: str | None = None
    #: What the client sent that was ignored (for the log).
    ignored: tuple[str, ...] = ()


def client_request(
    options: Mapping[str, Any], config: Config, allow: AllowList, config_file: str
) -> ClientRequest:
    """Check a `lspMux` connect's `server`, `args`, `env` and `cwd` against the daemon's own
    `config`. Raises InvalidRequest for a malformed value, RequestFailed for a refusal that
    says what to add to `config_file` to allow it."""
    server = options.get("server")
    if server is not None and (not isinstance(server, str) or not server):
        raise InvalidRequest("lspmux: lspMux.server must be a command name or path")
    args = options.get("args") or []
    env = options.get("env") or {}
    cwd = options.get("cwd")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InvalidRequest("lspmux: lspMux.args must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise InvalidRequest("lspmux: lspMux.env must map names to strings")
    if cwd is not None and not isinstance(cwd, str):
        raise InvalidRequest("lspmux: lspMux.cwd must be a path")
    if server is None:  # routing by file type: the configuration says what runs, and how
        ignored = tuple(k for k, v in (("args", args), ("env", env)) if v)
        return ClientRequest(None, cwd=None, ignored=(*ignored, *(("cwd",) if cwd else ())))
    if not allow.permits(server):
        raise RequestFailed(allow.refusal(server, config_file))
    match = match_server(config, server)
    may = set(match.client_may_set) if match is not None else set()
    asked = []
    if args and "args" not in may and (match is None or tuple(args) != match.command[1:]):
        asked.append("args")
    if env and "env" not in may and (match is None or _changes(match.env, env)):
        asked.append("env")
    if asked:
        name = match.name if match is not None else os.path.basename(server)
        raise RequestFailed(
            f"lspmux: the daemon does not let a client set the {' and '.join(asked)} of "
            f"{server!r}. To allow it, add client_may_set = {json.dumps(asked)} to "
            f"[servers.{name}] in {config_file}, then restart the daemon"
        )
    keep_cwd = cwd if cwd and "cwd" in may else None
    ignored = ("cwd",) if cwd and keep_cwd is None else ()
    return ClientRequest(server, tuple(args), dict(env), keep_cwd, ignored)


def _changes(configured: Mapping[str, str], asked: Mapping[str, str]) -> bool:
    """Whether `asked` sets a variable to something the configuration does not."""
    return any(configured.get(k) != v for k, v in asked.items())
