"""The typed configuration: servers, linters and global options, as lspmux uses them.

Loading, merging and validating TOML lives in `lspmux.config.loader`; this module only holds the
frozen model and the pure questions asked of it (does a file match, where is its root, may this
feature run, which executable runs). Nothing here reads a config file; `resolve_command` asks
the trust database whether a workspace's own executables may run.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from lspmux.config import trust
from lspmux.install.prefix import installed_executable

log = logging.getLogger("lspmux.config")

Role = Literal["server", "linter"]

#: What `Config.origins` says for a value from the built-in table or the model's defaults.
DEFAULTS_LABEL = "defaults"

#: Folders, relative to a workspace root, searched for a server's executable after PATH.
PROJECT_BIN_DIRS: tuple[str, ...] = ("node_modules/.bin", ".venv/bin", "venv/bin", "bin")

#: Output parsers a `LinterConfig.format` may name: the built-in ones and the two generic ones.
#: `lspmux.diagnostics.linters` must handle every one of them.
LINTER_FORMATS: tuple[str, ...] = ("biome", "swiftlint", "json", "regex")

#: Field paths of `LinterConfig.json` (format = "json"), each a dotted path inside one finding
#: (a numeric part indexes a list), with the path used when the key is left out. `file`, when
#: set, skips findings about other files.
JSON_FIELD_PATHS: dict[str, str | None] = {
    "line": "line",
    "column": "column",
    "end_line": "endLine",
    "end_column": "endColumn",
    "severity": "severity",
    "message": "message",
    "code": "code",
    "file": None,
}

#: How a column count is measured (`column_unit`), by the names a config may use.
COLUMN_UNITS: tuple[str, ...] = ("utf-32", "utf-16", "utf-8", "chars", "codepoints", "bytes")

#: Settings both generic formats read, from `LinterConfig.json` or `LinterConfig.options`
#: (json wins): the tool's severity words → LSP names, the severity when a finding has none,
#: a prefix for codes (shellcheck's 2086 → "SC2086"), a link template with `{code}`, and what
#: a column counts.
MAPPING_SETTINGS: tuple[str, ...] = (
    "severity_map",
    "default_severity",
    "code_prefix",
    "code_url",
    "column_unit",
)

#: Every key `LinterConfig.json` may hold: `items` (the dotted path from the top of the output
#: to the list of findings; "" when the output is that list, or JSON Lines), the field paths,
#: and the shared settings.
JSON_MAPPING_KEYS: tuple[str, ...] = ("items", *JSON_FIELD_PATHS, *MAPPING_SETTINGS)

#: Named groups a `LinterConfig.regex` may use (`line` and `message` are required; a finding
#: whose `file` group names another file is skipped).
REGEX_GROUPS: tuple[str, ...] = (
    "line",
    "column",
    "end_line",
    "end_column",
    "severity",
    "code",
    "message",
    "file",
)

#: Diagnostic severities, by their LSP names: the values of `json.severity_map`.
SEVERITIES: tuple[str, ...] = ("error", "warning", "information", "hint")

#: Placeholders a linter's argv may hold: the file linted (the temporary copy when input =
#: "file"), the workspace root, and the original file's basename.
COMMAND_PLACEHOLDERS: tuple[str, ...] = ("${file}", "${root}", "${filename}")

#: When a linter may run (`LinterConfig.run_on`).
RUN_ON: tuple[str, ...] = ("open", "save", "change")

#: What a daemon client's `lspMux` handshake may set for a server (`client_may_set`).
CLIENT_SETTABLE: tuple[str, ...] = ("args", "env", "cwd")

#: The default maximum size of one message, in bytes (`max_message_size`).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024

#: The Rust lspmux's defaults for its keys: `instance_timeout` (5 minutes) and `gc_interval`.
DEFAULT_INSTANCE_TIMEOUT = 300.0
DEFAULT_GC_INTERVAL = 10.0


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value or ())


def _strings(value: Any) -> tuple[str, ...]:
    """One string or a list of them, as a tuple (`package = "pypi:ruff==0.17.6"`)."""
    return (value,) if isinstance(value, str) else tuple(value or ())


class _FileRules:
    """What servers and linters share: which files they take, where a file's root is, and
    the command resolved for a root."""

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


@attrs.frozen
class ServerConfig(_FileRules):
    """One language server (role "server") or an LSP-speaking linter (role "linter")."""

    name: str
    command: tuple[str, ...] = attrs.field(converter=_tuple)
    file_types: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    language_ids: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    root_markers: tuple[str, ...] = attrs.field(default=(".git",), converter=_tuple)
    #: How the server finds its workspace from a file (`lspmux.workspace.roots.ROOT_RULES`:
    #: "cargo", "go.work", "js-workspace"); None: the nearest root marker.
    root_rule: str | None = None
    role: Role = "server"
    settings: Mapping[str, Any] = attrs.field(factory=dict)
    initialization_options: Mapping[str, Any] | None = None
    only_features: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    except_features: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    disabled: bool = False
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: Seconds a request may take before the client gets an error and the server a cancel.
    request_timeout: float = 30.0
    #: Seconds without use after which the server is shut down (started again on demand).
    #: None: never.
    idle_timeout: float | None = None
    #: Daemon: what a client's `lspMux` handshake may set for this server ("args", "env",
    #: "cwd"); anything else it asks for is refused (args, env) or ignored (cwd).
    client_may_set: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: Restricted mode: `settings`, `initialization_options` (merged over the ones above) and
    #: `disabled`, applied for a root the user has not trusted, so that the server does not run
    #: the workspace's code (`lspmux.config.restricted.for_root`).
    untrusted: Mapping[str, Any] = attrs.field(factory=dict)
    #: How to install the server (shown when it is needed but not found).
    install: str | None = None
    #: What `lspmux install NAME` installs: pinned packages, "pypi:NAME==VERSION" or
    #: "npm:NAME@VERSION" (`lspmux.install`).
    package: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: A command that checks the whole project at once (`lspmux diagnostics "*"`), run in the
    #: server's root, and how its output reads (`project_check_format`).
    project_check: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    project_check_format: str = "gnu"

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


@attrs.frozen
class LinterConfig(_FileRules):
    """A command-line linter whose output lspmux parses into diagnostics."""

    name: str
    command: tuple[str, ...] = attrs.field(converter=_tuple)
    file_types: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    language_ids: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    root_markers: tuple[str, ...] = attrs.field(default=(".git",), converter=_tuple)
    #: A built-in parser ("biome", "swiftlint") or a generic one ("json", "regex").
    format: str = "json"
    #: How the buffer reaches the tool: "stdin", or "file" (a temporary file beside the original).
    input: Literal["stdin", "file"] = "file"
    #: For format = "json": where the list is and which fields to read (see docs/configuration.md).
    json: Mapping[str, Any] = attrs.field(factory=dict)
    #: For format = "regex": a pattern with named groups (line, column, end_line, end_column,
    #: severity, code, message).
    regex: str | None = None
    #: Whether line/column numbers in the tool's output start at 1 (True) or 0.
    one_based: bool = True
    #: Exit codes that mean "ran fine" (findings or not); others are failures unless they printed
    #: parseable output.
    ok_exit_codes: tuple[int, ...] = attrs.field(default=(0, 1), converter=_tuple)
    #: Seconds before a run is killed.
    timeout: float = 30.0
    #: Seconds to wait after a change before linting (a newer change restarts the wait).
    debounce: float = 0.3
    #: When to run: any of "open", "save", "change".
    run_on: tuple[str, ...] = attrs.field(default=("open", "save", "change"), converter=_tuple)
    #: Diagnostic `source` (defaults to the linter's name).
    source: str | None = None
    #: Extra options of a built-in parser (e.g. biome's {"format_diagnostic": false}).
    options: Mapping[str, Any] = attrs.field(factory=dict)
    disabled: bool = False
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: How to install the tool (shown when it is needed but not found).
    install: str | None = None
    #: What `lspmux install NAME` installs (as `ServerConfig.package`).
    package: tuple[str, ...] = attrs.field(default=(), converter=_strings)


@attrs.frozen
class Config:
    """The effective configuration: defaults, user and project files merged, in that order."""

    servers: Mapping[str, ServerConfig] = attrs.field(factory=dict)
    linters: Mapping[str, LinterConfig] = attrs.field(factory=dict)
    #: Default request timeout (seconds) for servers that do not set one.
    request_timeout: float = 30.0
    #: Default idle timeout (seconds) for servers that do not set one; None: never.
    idle_timeout: float | None = None
    #: Daemon: seconds an instance may have no client before it is shut down; None: never
    #: (`instance_timeout = false`, as the Rust lspmux writes it).
    instance_timeout: float | None = DEFAULT_INSTANCE_TIMEOUT
    #: Daemon: the most seconds between two checks for instances without clients (checks run
    #: more often when `instance_timeout` is short).
    gc_interval: float = DEFAULT_GC_INTERVAL
    #: Daemon: where `lspmux server` listens, as an address (`unix:PATH`, `tcp:HOST:PORT`);
    #: None: the private Unix socket. `--listen` and `$LSPMUX_ADDRESS` win over it.
    listen: str | None = None
    #: Clients: the daemon's address `lspmux client`, `status` and `reload` use; None: the
    #: private Unix socket. `--connect` and `$LSPMUX_ADDRESS` win over it.
    connect: str | None = None
    #: The log level as a Rust `tracing` filter (`"info"`, `"lspmux=debug"`); None: info.
    #: `--log-level`, `$LSPMUX_LOG` and `$RUST_LOG` win over it (see `lspmux.log_filters`).
    log_filters: str | None = None
    #: Daemon: the servers a client may name (`--server-path`, `lspMux.server`), as command
    #: names or paths; None: the commands of the configured servers and their resolved paths.
    allowed_servers: tuple[str, ...] | None = None
    #: Daemon: the variables of a client's environment (`lspMux.env`) a server gets, and its
    #: instance is keyed by: names or globs, a leading `!` excluding (as the Rust lspmux's
    #: `pass_environment`; a name passes when it matches a pattern without `!` and none with).
    pass_environment: tuple[str, ...] = attrs.field(default=("*",), converter=_tuple)
    #: The largest message (bytes) read from a client or a server; a larger one gets an error
    #: and its connection is closed.
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    #: Where each effective value came from: dotted key → file path or "defaults".
    origins: Mapping[str, str] = attrs.field(factory=dict)
    #: Files that were read, in merge order.
    files: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
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
    untrusted_keys: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: Executables in the untrusted workspace that were not used.
    untrusted_executables: tuple[str, ...] = attrs.field(default=(), converter=_tuple)

    #: What to tell the user once (`window/showMessage`, log) about what the untrusted project
    #: was not allowed to run (see `lspmux.config.untrusted.notice`); None: nothing.
    trust_notice: str | None = None

    def servers_for(self, path: str, language_id: str | None = None) -> list[ServerConfig]:
        """Enabled servers whose file types match, in configuration order."""
        return [s for s in self.servers.values() if not s.disabled and s.matches(path, language_id)]

    def linters_for(self, path: str, language_id: str | None = None) -> list[LinterConfig]:
        return [
            lt for lt in self.linters.values() if not lt.disabled and lt.matches(path, language_id)
        ]


# -- pure helpers ---------------------------------------------------------------------------


def matches_file(
    file_types: tuple[str, ...], language_ids: tuple[str, ...], path: str, language_id: str | None
) -> bool:
    """True when `path` ends in one of the extensions or is one of the basenames in
    `file_types`, or when `language_id` is one of `language_ids`."""
    if language_id is not None and language_id in language_ids:
        return True
    base = path.rsplit("/", 1)[-1]
    for ft in file_types:
        if ft.startswith("."):
            if base.endswith(ft) and len(base) > len(ft):
                return True
        elif base == ft:
            return True
    return False


def find_root(markers: tuple[str, ...], path: str | Path) -> Path:
    """The nearest ancestor of `path` holding one of `markers`; the file's folder if none.

    A marker is a file or folder name, or a glob pattern matched against names in the folder
    (`*.csproj`, `*.cabal`), for projects whose marker file is named after the project.
    """
    p = Path(path)
    start = p if os.path.isdir(p) else p.parent  # no OSError (a name too long for the OS)
    for folder in (start, *start.parents):
        for marker in markers:
            if _has_marker(folder, marker):
                return folder
    return start


def _has_marker(folder: Path, marker: str) -> bool:
    if any(c in marker for c in "*?["):
        return next(iter(folder.glob(marker)), None) is not None
    return os.path.exists(folder / marker)


def resolve_command(
    command: tuple[str, ...], root: str | Path | None = None, *, project_bins: bool | None = None
) -> list[str] | None:
    """The argv with its executable resolved (what `lspmux install` put in its prefix, then
    PATH, then project-local bins), or None.

    An executable inside the workspace (`PROJECT_BIN_DIRS` under `root`) is used only when
    `project_bins` is true; None asks the trust database whether the user trusted `root`
    (`lspmux trust`). One found but not trusted is left out, and the log says so once."""
    if not command:
        return None
    exe = command[0]
    if os.sep in exe:
        return list(command) if os.access(exe, os.X_OK) else None
    found = installed_executable(exe) or shutil.which(exe)
    if found is None and root is not None:
        candidate = project_executable(exe, root)
        if candidate is not None:
            if project_bins is None:
                project_bins = trust.workspace_trusted(root)
            if project_bins:
                found = candidate
            elif trust.once("bin", candidate):
                log.warning(
                    "%s is not used: %s is not trusted (an executable shipped in a workspace "
                    "runs only after `lspmux trust %s`); %s is not on PATH either",
                    candidate,
                    root,
                    root,
                    exe,
                )
    if found is None:
        return None
    return [found, *command[1:]]


def project_executable(exe: str, root: str | Path) -> str | None:
    """The first executable named `exe` in the project folders of `root`, trusted or not."""
    for folder in PROJECT_BIN_DIRS:
        candidate = Path(root) / folder / exe
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None
