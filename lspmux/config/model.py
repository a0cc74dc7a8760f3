"""The typed configuration: servers, linters and global options, as lspmux uses them.

Loading, merging and validating TOML lives in `lspmux.config.loader`; this module only holds the
frozen model and the questions asked of it (does a file match, where is its root, may this
feature run, which executable runs: answered by `lspmux.config.resolve`). Nothing here reads a
config file.

Every configuration key is declared here once, as a field whose metadata (`checkers.key`)
names the checker of its value, and says whether files merge it as a nested table and whether
an untrusted project file may set it; `lspmux.config.checks` derives the key tables from it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, Literal

from lspmux.config import checkers as c
from lspmux.config import linter_checks as lc
from lspmux.config.checkers import key
from lspmux.config.choice import Choice
from lspmux.config.resolve import find_root, matches_file, resolve_command
from lspmux.workspace.roots import ROOT_RULES

log = logging.getLogger("lspmux.config")

Role = Literal["server", "linter"]

#: What `Config.origins` says for a value from the built-in table or the model's defaults.
DEFAULTS_LABEL = "defaults"

#: The default maximum size of one message, in bytes (`max_message_size`).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

#: The Rust lspmux's defaults for its keys: `instance_timeout` (5 minutes) and `gc_interval`.
DEFAULT_INSTANCE_TIMEOUT = 300.0
DEFAULT_GC_INTERVAL = 10.0


_STRINGS = key(c._list_of(c._non_empty_string, "a list of strings"))
_FEATURES = key(c._list_of(c._feature, "a list of feature names"))
_PACKAGE = key(c._package, executable=True)
_PAIRS = c._list_of(c._path_pair, 'a list like ["/home/me/proj=/srv/proj"]')


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value or ())


def _strings(value: Any) -> tuple[str, ...]:
    """One string or a list of them, as a tuple (`package = "pypi:ruff==0.17.6"`)."""
    return (value,) if isinstance(value, str) else tuple(value or ())


def _keep_tuples(record: object) -> None:
    """Set the tuple fields of a frozen `record` to tuples of what they were given (a file
    gives lists; None is empty; `package` may be one string, `_strings`): what attrs'
    converters did at construction, here from `__post_init__`. The fields are those annotated
    `tuple[...]` (not optional: `allowed_servers` keeps its None), found once per class."""
    cls: type = type(record)
    for name in _tuple_fields(cls):
        value = getattr(record, name)
        if name == "package":
            object.__setattr__(record, name, _strings(value))
        elif type(value) is not tuple:
            object.__setattr__(record, name, _tuple(value))


@cache
def _tuple_fields(cls: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in fields(cls)
        if str(f.type).startswith("tuple[") and "None" not in str(f.type)
    )


class _FileRules:
    """What servers and linters share: which files they take, where a file's root is, and
    the command resolved for a root."""

    __slots__ = ()  # the subclasses' own slots hold the fields: no `__dict__` per config

    command: tuple[str, ...]
    file_types: tuple[str, ...]
    language_ids: tuple[str, ...]
    root_markers: tuple[str, ...]

    def matches(self, path: str, language_id: str | None = None) -> bool:
        return matches_file(self.file_types, self.language_ids, path, language_id)

    def find_root(self, path: str | Path) -> Path:
        return find_root(self.root_markers, path)

    def resolve_command(self, root: str | Path | None = None) -> list[str] | None:
        return resolve_command(self.command, root)


@dataclass(frozen=True, slots=True)
class ServerConfig(_FileRules):
    """One language server (role "server") or an LSP-speaking linter (role "linter")."""

    name: str
    command: tuple[str, ...] = field(metadata=key(c._command, executable=True))
    file_types: tuple[str, ...] = field(
        default=(),
        metadata=key(c._list_of(c._file_type, 'a list like [".py", "Dockerfile"]')),
    )
    language_ids: tuple[str, ...] = field(default=(), metadata=_STRINGS)
    root_markers: tuple[str, ...] = field(default=(".git",), metadata=_STRINGS)
    #: How the server finds its workspace from a file (`lspmux.workspace.roots.ROOT_RULES`:
    #: "cargo", "go.work", "js-workspace"); None: the nearest root marker.
    root_rule: str | None = field(default=None, metadata=key(c._choice(ROOT_RULES)))
    role: Role = field(default="server", metadata=key(c._choice(("server", "linter"))))
    #: Servers that do the same job share a family ("python"): of the enabled ones with the
    #: same role and family only the first found runs (`lspmux.config.choice`). None: none.
    family: str | None = field(default=None, metadata=key(c._family))
    settings: Mapping[str, Any] = field(
        default_factory=dict, metadata=key(c._json_table, deep_merge=True, executable=True)
    )
    initialization_options: Mapping[str, Any] | None = field(
        default=None, metadata=key(c._json_table, deep_merge=True, executable=True)
    )
    only_features: tuple[str, ...] = field(default=(), metadata=_FEATURES)
    except_features: tuple[str, ...] = field(default=(), metadata=_FEATURES)
    disabled: bool = field(default=False, metadata=key(c._boolean))
    env: Mapping[str, str] = field(
        default_factory=dict, metadata=key(c._env, deep_merge=True, executable=True)
    )
    #: Seconds a request may take before the client gets an error and the server a cancel.
    request_timeout: float = field(default=30.0, metadata=key(c._seconds(zero_ok=False)))
    #: Seconds without use after which the server is shut down (started again on demand).
    #: None: never.
    idle_timeout: float | None = field(default=None, metadata=key(c._seconds(zero_ok=True)))
    #: Daemon: what a client's `lspMux` handshake may set for this server ("args", "env",
    #: "cwd"); anything else it asks for is refused (args, env) or ignored (cwd).
    client_may_set: tuple[str, ...] = field(
        default=(),
        metadata=key(
            c._list_of(c._choice(c.CLIENT_SETTABLE), 'a list like ["args", "env"]'), executable=True
        ),
    )
    #: Restricted mode: `settings`, `initialization_options` (merged over the ones above) and
    #: `disabled`, applied for a root the user has not trusted, so that the server does not run
    #: the workspace's code (`lspmux.config.restricted.for_root`).
    untrusted: Mapping[str, Any] = field(
        default_factory=dict, metadata=key(c._untrusted, deep_merge=True, executable=True)
    )
    #: How to install the server (shown when it is needed but not found).
    install: str | None = field(default=None, metadata=key(c._non_empty_string))
    #: What `lspmux install NAME` installs: "pypi:NAME==VERSION" / "npm:NAME@VERSION" pins.
    package: tuple[str, ...] = field(default=(), metadata=_PACKAGE)
    #: A command that checks the whole project at once (`lspmux diagnostics "*"`), run in the
    #: server's root, and how its output reads (`project_check_format`). [] = none.
    project_check: tuple[str, ...] = field(
        default=(),
        metadata=key(c._list_of(c._non_empty_string, c._COMMAND_EXAMPLE), executable=True),
    )
    project_check_format: str = field(
        default="gnu", metadata=key(c._choice(c.PROJECT_CHECK_FORMATS))
    )

    def __post_init__(self) -> None:
        _keep_tuples(self)

    def feature_enabled(self, feature: str) -> bool:
        """Whether `only_features` / `except_features` let this server serve `feature`."""
        if feature == "sync":
            return True
        if (
            self.role == "linter"
            and feature not in ("diagnostics", "codeAction")
            and not self.only_features
        ):
            return False
        if self.only_features and feature not in self.only_features:
            return False
        return feature not in self.except_features


@dataclass(frozen=True, slots=True)
class LinterConfig(_FileRules):
    """A command-line linter whose output lspmux parses into diagnostics."""

    name: str
    command: tuple[str, ...] = field(metadata=key(lc._linter_command, executable=True))
    file_types: tuple[str, ...] = field(
        default=(),
        metadata=key(c._list_of(c._file_type, 'a list like [".sh", "Dockerfile"]')),
    )
    language_ids: tuple[str, ...] = field(default=(), metadata=_STRINGS)
    root_markers: tuple[str, ...] = field(default=(".git",), metadata=_STRINGS)
    #: A built-in parser ("biome", "swiftlint") or a generic one ("json", "regex").
    format: str = field(default="json", metadata=key(c._choice(lc.LINTER_FORMATS)))
    #: How the buffer reaches the tool: "stdin", or "file" (a temporary file beside the original).
    input: Literal["stdin", "file"] = field(
        default="file", metadata=key(c._choice(("stdin", "file")))
    )
    #: For format = "json": where the list is and which fields to read (see docs/configuration.md).
    json: Mapping[str, Any] = field(
        default_factory=dict, metadata=key(lc._json_mapping, deep_merge=True)
    )
    #: For format = "regex": a pattern with named groups (line, column, end_line, end_column,
    #: severity, code, message).
    regex: str | None = field(default=None, metadata=key(lc._regex))
    #: Whether line/column numbers in the tool's output start at 1 (True) or 0.
    one_based: bool = field(default=True, metadata=key(c._boolean))
    #: Exit codes that mean "ran fine" (findings or not); others are failures unless they printed
    #: parseable output.
    ok_exit_codes: tuple[int, ...] = field(
        default=(0, 1),
        metadata=key(c._list_of(c._exit_code, "a list of exit codes")),
    )
    #: Seconds before a run is killed.
    timeout: float = field(default=30.0, metadata=key(c._seconds(zero_ok=False)))
    #: Seconds to wait after a change before linting (a newer change restarts the wait).
    debounce: float = field(default=0.3, metadata=key(c._seconds(zero_ok=True)))
    #: When to run: any of "open", "save", "change".
    run_on: tuple[str, ...] = field(
        default=("open", "save", "change"),
        metadata=key(c._list_of(c._choice(lc.RUN_ON), "a list of events")),
    )
    #: Diagnostic `source` (defaults to the linter's name).
    source: str | None = field(default=None, metadata=key(c._non_empty_string))
    #: Extra options of a built-in parser (e.g. biome's {"format_diagnostic": false}).
    options: Mapping[str, Any] = field(
        default_factory=dict, metadata=key(lc._linter_options, deep_merge=True)
    )
    disabled: bool = field(default=False, metadata=key(c._boolean))
    env: Mapping[str, str] = field(
        default_factory=dict, metadata=key(c._env, deep_merge=True, executable=True)
    )
    #: How to install the tool (shown when it is needed but not found).
    install: str | None = field(default=None, metadata=key(c._non_empty_string))
    #: What `lspmux install NAME` installs (as `ServerConfig.package`).
    package: tuple[str, ...] = field(default=(), metadata=_PACKAGE)

    def __post_init__(self) -> None:
        _keep_tuples(self)


@dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration: defaults, user and project files merged, in that order."""

    servers: Mapping[str, ServerConfig] = field(default_factory=dict)
    linters: Mapping[str, LinterConfig] = field(default_factory=dict)
    #: Default request timeout (seconds) for servers that do not set one.
    request_timeout: float = field(default=30.0, metadata=key(c._seconds(zero_ok=False)))
    #: Default idle timeout (seconds) for servers that do not set one; None (or 0): never.
    idle_timeout: float | None = field(default=None, metadata=key(c._seconds(zero_ok=True)))
    #: Daemon: seconds an instance may have no client before it is shut down; None: never
    #: (`instance_timeout = false`, as the Rust lspmux writes it).
    instance_timeout: float | None = field(
        default=DEFAULT_INSTANCE_TIMEOUT, metadata=key(c._seconds_or_false)
    )
    #: Daemon: the most seconds between two checks for instances without clients (checks run
    #: more often when `instance_timeout` is short).
    gc_interval: float = field(default=DEFAULT_GC_INTERVAL, metadata=key(c._seconds(zero_ok=False)))
    #: Daemon: where `lspmux server` listens, as an address (`unix:PATH`, `tcp:HOST:PORT`);
    #: None: the private Unix socket. `--listen` and `$LSPMUX_ADDRESS` win over it.
    listen: str | None = field(default=None, metadata=key(c._address, executable=True))
    #: Clients: the daemon's address `lspmux client`, `status` and `reload` use; None: the
    #: private Unix socket. `--connect` and `$LSPMUX_ADDRESS` win over it.
    connect: str | None = field(default=None, metadata=key(c._address, executable=True))
    #: The log level as a Rust `tracing` filter (`"info"`, `"lspmux=debug"`); None: info.
    #: `--log-level`, `$LSPMUX_LOG` and `$RUST_LOG` win over it (see `lspmux.log_filters`).
    log_filters: str | None = field(default=None, metadata=key(c._log_filters))
    #: Daemon: the servers a client may name (`--server-path`, `lspMux.server`), as command
    #: names or paths; None: the commands of the configured servers and their resolved paths.
    allowed_servers: tuple[str, ...] | None = field(
        default=None,
        metadata=key(
            c._list_of(c._non_empty_string, "a list of commands or paths"), executable=True
        ),
    )
    #: Daemon: the variables of a client's environment (`lspMux.env`) a server gets, and its
    #: instance is keyed by: names or globs, a leading `!` excluding (as the Rust lspmux's
    #: `pass_environment`; a name passes when it matches a pattern without `!` and none with).
    pass_environment: tuple[str, ...] = field(
        default=("*",),
        metadata=key(
            c._list_of(
                c._env_pattern, 'a list of variable names or globs, like ["*", "!WINDOWID"]'
            ),
            executable=True,
        ),
    )
    #: The largest message (bytes) read from a client or a server; a larger one gets an error
    #: and its connection is closed.
    max_message_size: int = field(
        default=DEFAULT_MAX_MESSAGE_SIZE, metadata=key(c._size, executable=True)
    )
    #: `lspmux client --remote`: `"LOCAL=REMOTE"` path pairs, after `--map` (docs/remote.md).
    #: Not from an untrusted project file: it decides which local files a server's edits name.
    remote_map: tuple[str, ...] = field(default=(), metadata=key(_PAIRS, executable=True))
    #: Where each effective value came from: dotted key → file path or "defaults".
    origins: Mapping[str, str] = field(default_factory=dict)
    #: Files that were read, in merge order.
    files: tuple[str, ...] = field(default=())
    #: The folder the project file was searched from (the workspace root), if any.
    project_dir: str | None = None
    #: The project's own file (`lspmux.toml` or pyproject.toml), if one was found.
    project_file: str | None = None
    #: Whether the user trusted the workspace folder (`project_dir`) itself: servers run in
    #: their restricted mode where not (None: no workspace).
    workspace_trusted: bool | None = None
    #: Whether the user trusted the project file's exact content (None: no project file).
    project_trusted: bool | None = None
    #: Dotted keys of the untrusted project file that were ignored (see config/untrusted.py).
    untrusted_keys: tuple[str, ...] = field(default=())
    #: Executables in the untrusted workspace that were not used.
    untrusted_executables: tuple[str, ...] = field(default=())

    #: Servers left out because another of their role and family was found (the default
    #: choice, `lspmux.config.choice`): name → why. They are `disabled` here.
    not_chosen: Mapping[str, Choice] = field(default_factory=dict)

    #: What to tell the user once (`window/showMessage`, log) about what the untrusted project
    #: was not allowed to run (see `lspmux.config.untrusted.notice`); None: nothing.
    trust_notice: str | None = None

    def __post_init__(self) -> None:
        _keep_tuples(self)

    def servers_for(self, path: str, language_id: str | None = None) -> list[ServerConfig]:
        """Enabled servers whose file types match, in configuration order."""
        return [s for s in self.servers.values() if not s.disabled and s.matches(path, language_id)]

    def linters_for(self, path: str, language_id: str | None = None) -> list[LinterConfig]:
        return [
            lt for lt in self.linters.values() if not lt.disabled and lt.matches(path, language_id)
        ]
