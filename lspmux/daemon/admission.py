"""What a daemon client may ask for in its `lspMux` handshake: which server, with which
arguments, environment and working directory.

Trust follows the user and the content, not the argv. The daemon's socket admits only its own
user, who could run any program anyway, so a client may name any server, with arguments, an
environment and a cwd, as the Rust lspmux allows. The executable is looked up on the
*client's* PATH (from the environment it sent; the daemon's own when it sent none) and is
refused only when it lies inside one of the client's workspace folders that the user has not
trusted (`lspmux trust`) — an executable a repository ships — unless that folder is on the
daemon's own PATH (the user put it there).

A user who wants the stricter rule keeps it with `allowed_servers` in their own configuration:
then only those servers (and the configured ones) may be named, and a client's `args` or `env`
that differ from the configured ones are refused unless the configured server lists them in
`client_may_set`; its `cwd` is ignored unless listed.

The client's environment reaches a server, and its instance key, filtered by
`pass_environment` (names or globs, `!` excluding; default `["*"]`, as the Rust lspmux).

Pure functions over a `Config`; no I/O besides looking executables up.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from lspmux.config import trust
from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.errors import InvalidRequest, RequestFailed


def resolve_executable(command: str) -> str | None:
    """The real path of the program `command` names (PATH lookup for a bare name), or None."""
    if os.sep in command:
        return os.path.realpath(command) if os.access(command, os.X_OK) else None
    found = shutil.which(command)
    return os.path.realpath(found) if found else None


def resolve_for_client(command: str, path: str | None, cwd: str | None) -> str | None:
    """The program `command` names as the client means it: a bare name on the client's `path`
    (the daemon's PATH when None), a relative path from the client's `cwd`. Not resolved
    through symlinks (the server runs as the client named it); None when not found."""
    if os.sep in command:
        full = os.path.join(cwd, command) if cwd and not os.path.isabs(command) else command
        full = os.path.normpath(full)
        return full if os.path.isfile(full) and os.access(full, os.X_OK) else None
    return shutil.which(command, path=path)


def passed_environment(env: Mapping[str, str], patterns: Sequence[str]) -> dict[str, str]:
    """The variables of `env` that `pass_environment` lets through: a name passes when it
    matches a pattern without `!` and no pattern with one (shell globs, case-sensitive)."""
    positive = [p for p in patterns if not p.startswith("!")]
    negative = [p[1:] for p in patterns if p.startswith("!")]
    return {
        k: v
        for k, v in env.items()
        if any(fnmatch.fnmatchcase(k, p) for p in positive)
        and not any(fnmatch.fnmatchcase(k, p) for p in negative)
    }


def workspace_folders(params: Mapping[str, Any]) -> list[str]:
    """The folders a client's `initialize` names: its workspace folders, else `rootUri`,
    else `rootPath`."""
    from lspmux.uris import file_path

    uris = [
        f["uri"]
        for f in params.get("workspaceFolders") or []
        if isinstance(f, dict) and isinstance(f.get("uri"), str)
    ]
    if not uris and isinstance(params.get("rootUri"), str):
        uris.append(params["rootUri"])
    found = [p for p in map(file_path, uris) if p is not None]
    if not found and isinstance(params.get("rootPath"), str):
        found.append(params["rootPath"])
    return found


def untrusted_workspace(executable: str, folders: Iterable[str | Path]) -> str | None:
    """The untrusted workspace folder `executable` lies inside, or None: an executable a
    repository ships runs only once the user trusted it. A folder on the daemon's own PATH
    does not count (the user chose to run what it holds)."""
    real = os.path.realpath(executable)
    on_path = {os.path.realpath(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d}
    if os.path.dirname(real) in on_path:
        return None
    for folder in folders:
        root = os.path.realpath(folder)
        if root == os.sep:
            continue
        if real.startswith(root.rstrip(os.sep) + os.sep) and not trust.workspace_trusted(root):
            return root
    return None


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


@dataclasses.dataclass(frozen=True, slots=True)
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
    config: Config,
    server: str,
    args: Sequence[str],
    env: Mapping[str, str],
    executable: str | None = None,
) -> OneServerConfig:
    """`config` reduced to the one server a client named, reusing its configured settings.
    `executable`: where the client's PATH found it (else `server` is looked up when it
    starts). Its arguments and environment are part of the instance key (backends/pool.py),
    not of its name."""
    match = match_server(config, server)
    program = executable or server
    if match is not None:
        command = (program, *args) if args else (program, *match.command[1:])
        chosen = dataclasses.replace(
            match, command=command, env={**match.env, **env}, disabled=False
        )
    else:
        chosen = ServerConfig(
            name=os.path.basename(server),
            command=(program, *args),
            env=dict(env),
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
        pass_environment=config.pass_environment,
        max_message_size=config.max_message_size,
        origins=config.origins,
        files=config.files,
    )


def with_environment(config: Config, env: Mapping[str, str]) -> Config:
    """`config` with a client's passed environment given to every server and linter (routing
    by file type): each of their instances is keyed by it too."""
    if not env:
        return config
    return dataclasses.replace(
        config,
        servers={
            n: dataclasses.replace(s, env={**s.env, **env}) for n, s in config.servers.items()
        },
        linters={
            n: dataclasses.replace(lt, env={**lt.env, **env}) for n, lt in config.linters.items()
        },
    )


@attrs.frozen
class ClientRequest:
    """What a `lspMux` connect asked for, validated and reduced to what it may have."""

    server: str | None
    args: tuple[str, ...] = ()
    #: The client's environment as `pass_environment` lets it through.
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: The client's working directory (the last fallback for its root), None when ignored.
    cwd: str | None = None
    #: What the client sent that was ignored (for the log).
    ignored: tuple[str, ...] = ()
    #: Where the client's PATH found `server` (None: looked up when it starts).
    executable: str | None = None


def client_request(
    options: Mapping[str, Any],
    config: Config,
    allow: AllowList,
    config_file: str,
    folders: Sequence[str] = (),
) -> ClientRequest:
    """Check a `lspMux` connect's `server`, `args`, `env` and `cwd` against the daemon's own
    `config`; `folders`: the client's workspace folders (from its `initialize`). Raises
    InvalidRequest for a malformed value, RequestFailed for a refusal that says what to do."""
    server = options.get("server")
    if server is not None and (not isinstance(server, str) or not server):
        raise InvalidRequest("lspmux: lspMux.server must be a command name or path")
    args = options.get("args") or []
    env = options.get("env") or {}
    cwd = options.get("cwd")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InvalidRequest("lspmux: lspMux.args must be a list of strings")
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise InvalidRequest("lspmux: lspMux.env must map names to strings")
    if cwd is not None and not isinstance(cwd, str):
        raise InvalidRequest("lspmux: lspMux.cwd must be a path")
    passed = passed_environment(env, config.pass_environment)
    if config.allowed_servers is not None:
        return _strict_request(server, args, passed, cwd, config, allow, config_file)
    if server is None:  # routing by file type: the configuration says what runs
        return ClientRequest(None, env=passed, cwd=cwd, ignored=("args",) if args else ())
    executable = resolve_for_client(server, env.get("PATH"), cwd)
    if executable is None:
        where = "the PATH the client sent" if "PATH" in env else "the daemon's PATH"
        raise RequestFailed(
            f"lspmux: cannot find the server {server!r} on {where}"
            + (f" (from {cwd})" if cwd and os.sep in server else "")
            + ": install it, or name it by its absolute path (--server-path /path/to/server)"
        )
    # the client's workspace folders; its cwd when it names none (the root it gets then)
    shipped_by = untrusted_workspace(executable, list(folders) or ([cwd] if cwd else []))
    if shipped_by is not None:
        raise RequestFailed(
            f"lspmux: the daemon does not start {executable}: it lies inside {shipped_by}, "
            f"which you have not trusted (an executable a workspace ships runs only after "
            f"`lspmux trust {shipped_by}`)"
        )
    return ClientRequest(server, tuple(args), passed, cwd, (), executable)


def _strict_request(
    server: str | None,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    config: Config,
    allow: AllowList,
    config_file: str,
) -> ClientRequest:
    """`allowed_servers` is set: only those servers, and `client_may_set` for the rest."""
    if server is None:
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
            f"lspmux: allowed_servers is set, and then the daemon does not let a client set "
            f"the {' and '.join(asked)} of {server!r}. To allow it, add client_may_set = "
            f"{json.dumps(asked)} to [servers.{name}] in {config_file} (or remove "
            f"allowed_servers: a client of your own user may then name any server"
            + ("; or narrow pass_environment" if "env" in asked else "")
            + "), then restart the daemon"
        )
    keep_cwd = cwd if cwd and "cwd" in may else None
    ignored = ("cwd",) if cwd and keep_cwd is None else ()
    return ClientRequest(server, tuple(args), dict(env), keep_cwd, ignored)


def _changes(configured: Mapping[str, str], asked: Mapping[str, str]) -> bool:
    """Whether `asked` sets a variable to something the configuration does not."""
    return any(configured.get(k) != v for k, v in asked.items())
