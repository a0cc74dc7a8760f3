"""Loading the configuration: finding the files, parsing and validating TOML, merging layers.

The effective `Config` is built from, in order (later wins):

1. the shipped defaults (`lspmux/config/defaults.toml`, the built-in server and linter table);
2. the user file, `$XDG_CONFIG_HOME/lspmux/config.toml` (default `~/.config/lspmux/config.toml`);
3. the project file: the nearest `lspmux.toml`, or `pyproject.toml` with a `[tool.lspmux]`
   table, from the project folder upward;
4. each `--config` file, in the order given.

Merging is per server and per linter, key by key: `settings`, `initialization_options`, `env`,
`json` and `options` are merged as nested tables, every other value (lists included) replaces
the earlier one. Validation is strict: a wrong key, type or value raises `ConfigError` naming
the file, the dotted key, what was found and what was expected. `format_config` renders the
result for `lspmux config`. The model itself lives in `lspmux.config.model`.
"""

from __future__ import annotations

import copy
import datetime
import difflib
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

import attrs

from lspmux.config.model import (
    COLUMN_UNITS,
    COMMAND_PLACEHOLDERS,
    JSON_MAPPING_KEYS,
    LINTER_FORMATS,
    REGEX_GROUPS,
    RUN_ON,
    SEVERITIES,
    Config,
    LinterConfig,
    ServerConfig,
)
from lspmux.routing.table import FEATURES

__all__ = [
    "DEFAULTS_LABEL",
    "DEFAULTS_PATH",
    "PROJECT_FILE",
    "ConfigError",
    "find_project_file",
    "format_config",
    "load_config",
    "user_config_path",
]

#: The built-in table shipped with the package.
DEFAULTS_PATH: Path = Path(__file__).resolve().parent / "defaults.toml"
#: What `Config.origins` says for a value from the built-in table or the model's defaults.
DEFAULTS_LABEL = "defaults"
#: The project file's name (searched from the project folder upward).
PROJECT_FILE = "lspmux.toml"
PYPROJECT_FILE = "pyproject.toml"

#: Keys whose values are merged as nested tables rather than replaced.
DEEP_MERGED: frozenset[str] = frozenset(
    {"settings", "initialization_options", "env", "json", "options"}
)


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.key = key


# -- where a value sits, for error messages ---------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key_part(key: str) -> str:
    """A key as TOML would write it in a dotted key: bare when it can be, quoted otherwise."""
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{_key_part(key)}" if prefix else _key_part(key)


@dataclass(frozen=True)
class _Where:
    """A file and a dotted key inside it; `fail` raises the error for a value found there."""

    file: str
    key: str = ""

    def child(self, key: str) -> _Where:
        return _Where(self.file, _join(self.key, key))

    def item(self, index: int) -> _Where:
        return _Where(self.file, f"{self.key}[{index}]")

    def fail(self, found: str, expected: str) -> NoReturn:
        where = f"{self.file}: {self.key}" if self.key else self.file
        raise ConfigError(f"{where}: {found}; expected {expected}", file=self.file, key=self.key)


def _describe(value: Any) -> str:
    """What a TOML value is, for "found ..." in messages."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({json.dumps(value)})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime.date | datetime.time):
        return f"a date/time ({value.isoformat()})"
    return f"a {type(value).__name__}"


def _hint(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


# -- value checkers: each returns the value (normalised) or raises through `where.fail` ------

Checker = Callable[[Any, _Where], Any]


def _boolean(value: Any, where: _Where) -> bool:
    if not isinstance(value, bool):
        where.fail(f"found {_describe(value)}", "true or false")
    return value


def _seconds(*, zero_ok: bool) -> Checker:
    expected = "a number of seconds ≥ 0 (0: never)" if zero_ok else "a number of seconds > 0"

    def check(value: Any, where: _Where) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            where.fail(f"found {_describe(value)}", expected)
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
            where.fail(f"found {value}", expected)
        return float(value)

    return check


def _string(value: Any, where: _Where) -> str:
    if not isinstance(value, str):
        where.fail(f"found {_describe(value)}", "a string")
    return value


def _choice(choices: Sequence[str]) -> Checker:
    expected = "one of: " + ", ".join(json.dumps(c) for c in choices)

    def check(value: Any, where: _Where) -> str:
        if not isinstance(value, str):
            where.fail(f"found {_describe(value)}", expected)
        if value not in choices:
            where.fail(f"{json.dumps(value)} is not allowed{_hint(value, choices)}", expected)
        return value

    return check


def _list_of(item: Checker, expected: str, *, non_empty: bool = False) -> Checker:
    def check(value: Any, where: _Where) -> tuple[Any, ...]:
        if not isinstance(value, list):
            where.fail(f"found {_describe(value)}", expected)
        if non_empty and not value:
            where.fail("found an empty list", expected)
        return tuple(item(v, where.item(i)) for i, v in enumerate(value))

    return check


def _non_empty_string(value: Any, where: _Where) -> str:
    if not isinstance(value, str) or not value:
        where.fail(f"found {_describe(value)}", "a non-empty string")
    return value


def _file_type(value: Any, where: _Where) -> str:
    expected = 'an extension like ".py" or a file name like "Dockerfile"'
    if not isinstance(value, str) or not value:
        where.fail(f"found {_describe(value)}", expected)
    if value == "." or "/" in value or "\\" in value or any(c in value for c in "*?["):
        where.fail(f"found {json.dumps(value)} (patterns and paths are not supported)", expected)
    return value


def _feature(value: Any, where: _Where) -> str:
    expected = "one of: " + ", ".join(sorted(FEATURES))
    if not isinstance(value, str):
        where.fail(f"found {_describe(value)}", expected)
    if value not in FEATURES:
        where.fail(
            f"{json.dumps(value)} is not a feature{_hint(value, sorted(FEATURES))}", expected
        )
    return value


def _exit_code(value: Any, where: _Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255:
        where.fail(f"found {_describe(value)}", "an exit code (an integer from 0 to 255)")
    return value


def _json_value(value: Any, where: _Where) -> Any:
    """Any value that can be sent to a server as JSON (TOML's dates and times cannot)."""
    if isinstance(value, dict):
        return {k: _json_value(v, where.child(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v, where.item(i)) for i, v in enumerate(value)]
    if isinstance(value, datetime.date | datetime.time):
        where.fail(
            f"found {_describe(value)}",
            "a string, number, boolean, list or table (dates cannot be sent as JSON)",
        )
    if isinstance(value, float) and not math.isfinite(value):
        where.fail(f"found {value}", "a finite number (JSON has no inf or nan)")
    return value


def _json_table(value: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(value, dict):
        where.fail(f"found {_describe(value)}", "a table")
    result: dict[str, Any] = _json_value(value, where)
    return result


def _env(value: Any, where: _Where) -> dict[str, str]:
    if not isinstance(value, dict):
        where.fail(f"found {_describe(value)}", 'a table of strings, e.g. { RUST_LOG = "info" }')
    for k, v in value.items():
        if not isinstance(v, str):
            where.child(k).fail(f"found {_describe(v)}", "a string (environment values are text)")
    return dict(value)


_COMMAND_EXAMPLE = 'a non-empty list of strings, e.g. ["ruff", "server"]'


def _command(value: Any, where: _Where) -> tuple[str, ...]:
    if isinstance(value, str):
        where.fail(f"found {_describe(value)}", _COMMAND_EXAMPLE)
    argv: tuple[str, ...] = _list_of(_non_empty_string, _COMMAND_EXAMPLE, non_empty=True)(
        value, where
    )
    return argv


_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")


def _linter_command(value: Any, where: _Where) -> tuple[str, ...]:
    argv = _command(value, where)
    for i, arg in enumerate(argv):
        for found in _PLACEHOLDER.findall(arg):
            if found not in COMMAND_PLACEHOLDERS:
                where.item(i).fail(
                    f"{json.dumps(found)} is not a placeholder",
                    "one of: " + ", ".join(COMMAND_PLACEHOLDERS),
                )
    return argv


def _url_template(value: Any, where: _Where) -> str:
    expected = 'a URL template using only {code}, e.g. "https://example.com/rules/{code}"'
    if not isinstance(value, str):
        where.fail(f"found {_describe(value)}", expected)
    try:
        value.format(code="X")
    except (KeyError, IndexError, ValueError):
        where.fail(f"{json.dumps(value)} has another placeholder", expected)
    return value


def _severity_map(value: Any, where: _Where) -> dict[str, str]:
    if not isinstance(value, dict):
        where.fail(f"found {_describe(value)}", 'a table, e.g. { info = "information" }')
    for tool_value, severity in value.items():
        _choice(SEVERITIES)(severity, where.child(tool_value))
    return dict(value)


def _field_path(value: Any, where: _Where) -> str:
    if not isinstance(value, str):
        where.fail(
            f"found {_describe(value)}", 'a dotted field path (a string, e.g. "range.start")'
        )
    return value


#: The shared settings of the generic parsers, allowed in `json` and checked in `options`.
_MAPPING_SETTING_CHECKS: dict[str, Checker] = {
    "severity_map": _severity_map,
    "default_severity": _choice(SEVERITIES),
    "code_prefix": _string,
    "code_url": _url_template,
    "column_unit": _choice(COLUMN_UNITS),
}


def _json_mapping(value: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(value, dict):
        where.fail(f"found {_describe(value)}", 'a table, e.g. { items = "", line = "line" }')
    for key, v in value.items():
        at = where.child(key)
        if key not in JSON_MAPPING_KEYS:
            at.fail(
                f"unknown key{_hint(key, JSON_MAPPING_KEYS)}",
                "one of: " + ", ".join(JSON_MAPPING_KEYS),
            )
        _MAPPING_SETTING_CHECKS.get(key, _field_path)(v, at)
    return dict(value)


def _linter_options(value: Any, where: _Where) -> dict[str, Any]:
    """Free-form parser options; the generic parsers' shared settings among them are checked."""
    options = _json_table(value, where)
    for key, check in _MAPPING_SETTING_CHECKS.items():
        if key in options:
            check(options[key], where.child(key))
    return options


def _regex(value: Any, where: _Where) -> str:
    expected = "a regular expression with named groups, at least (?P<line>...) and (?P<message>...)"
    if not isinstance(value, str):
        where.fail(f"found {_describe(value)}", expected)
    try:
        pattern = re.compile(value)
    except re.error as exc:
        where.fail(f"invalid regular expression ({exc})", expected)
    for group in pattern.groupindex:
        if group not in REGEX_GROUPS:
            where.fail(
                f"unknown group {json.dumps(group)}{_hint(group, REGEX_GROUPS)}",
                "groups among: " + ", ".join(REGEX_GROUPS),
            )
    missing = [g for g in ("line", "message") if g not in pattern.groupindex]
    if missing:
        where.fail("no group named " + " or ".join(json.dumps(g) for g in missing), expected)
    return value


def _server_name(name: str, where: _Where) -> None:
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_+-]*$", name):
        where.fail(
            f"{json.dumps(name)} is not a usable name",
            "letters, digits, '-', '_' or '+', starting with a letter or digit",
        )


_STRINGS = "a list of strings"

#: Every key a `[servers.NAME]` table may hold.
SERVER_KEYS: dict[str, Checker] = {
    "command": _command,
    "file_types": _list_of(_file_type, 'a list like [".py", "Dockerfile"]'),
    "language_ids": _list_of(_non_empty_string, _STRINGS),
    "root_markers": _list_of(_non_empty_string, _STRINGS),
    "role": _choice(("server", "linter")),
    "settings": _json_table,
    "initialization_options": _json_table,
    "only_features": _list_of(_feature, "a list of feature names"),
    "except_features": _list_of(_feature, "a list of feature names"),
    "disabled": _boolean,
    "env": _env,
    "request_timeout": _seconds(zero_ok=False),
    "idle_timeout": _seconds(zero_ok=True),
}

#: Every key a `[linters.NAME]` table may hold.
LINTER_KEYS: dict[str, Checker] = {
    "command": _linter_command,
    "file_types": _list_of(_file_type, 'a list like [".sh", "Dockerfile"]'),
    "language_ids": _list_of(_non_empty_string, _STRINGS),
    "root_markers": _list_of(_non_empty_string, _STRINGS),
    "format": _choice(LINTER_FORMATS),
    "input": _choice(("stdin", "file")),
    "json": _json_mapping,
    "regex": _regex,
    "one_based": _boolean,
    "ok_exit_codes": _list_of(_exit_code, "a list of exit codes"),
    "timeout": _seconds(zero_ok=False),
    "debounce": _seconds(zero_ok=True),
    "run_on": _list_of(_choice(RUN_ON), "a list of events"),
    "source": _non_empty_string,
    "options": _linter_options,
    "disabled": _boolean,
    "env": _env,
}

#: Top-level keys (besides the `servers` and `linters` tables).
GLOBAL_KEYS: dict[str, Checker] = {
    "request_timeout": _seconds(zero_ok=False),
    "idle_timeout": _seconds(zero_ok=True),
    "instance_timeout": _seconds(zero_ok=False),
    "allowed_servers": _list_of(_non_empty_string, "a list of commands or paths"),
}

_SECTIONS: dict[str, dict[str, Checker]] = {"servers": SERVER_KEYS, "linters": LINTER_KEYS}


# -- one file's validated content ------------------------------------------------------------


@dataclass
class _Layer:
    """One file's validated values: global keys, and per server/linter the keys it sets."""

    where: _Where
    label: str
    globals: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"servers": {}, "linters": {}}
    )


def _check_keys(table: Mapping[str, Any], known: Sequence[str], where: _Where) -> None:
    for key in table:
        if key not in known:
            where.child(key).fail(
                f"unknown key{_hint(key, known)}", "one of: " + ", ".join(sorted(known))
            )


def _check_document(doc: Mapping[str, Any], where: _Where, label: str) -> _Layer:
    layer = _Layer(where, label)
    _check_keys(doc, [*GLOBAL_KEYS, *_SECTIONS], where)
    for key, check in GLOBAL_KEYS.items():
        if key in doc:
            layer.globals[key] = check(doc[key], where.child(key))
    for section, schema in _SECTIONS.items():
        if section not in doc:
            continue
        at = where.child(section)
        entries = doc[section]
        if not isinstance(entries, dict):
            at.fail(f"found {_describe(entries)}", f"a table of {section}, e.g. [{section}.NAME]")
        for name, entry in entries.items():
            entry_at = at.child(name)
            _server_name(name, entry_at)
            if not isinstance(entry, dict):
                entry_at.fail(f"found {_describe(entry)}", f"a table: [{section}.{name}]")
            _check_keys(entry, list(schema), entry_at)
            layer.sections[section][name] = {
                key: schema[key](value, entry_at.child(key)) for key, value in entry.items()
            }
    return layer


# -- reading files --------------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}", file=str(path)) from None


def _tool_table(doc: Mapping[str, Any], path: Path) -> dict[str, Any] | None:
    """The `[tool.lspmux]` table of a parsed pyproject.toml, or None when it has none."""
    tool = doc.get("tool")
    if not isinstance(tool, dict) or "lspmux" not in tool:
        return None
    table = tool["lspmux"]
    if not isinstance(table, dict):
        _Where(str(path), "tool.lspmux").fail(f"found {_describe(table)}", "a table")
    return table


def _read_layer(path: Path, label: str) -> _Layer:
    doc = _read_toml(path)
    if path.name == PYPROJECT_FILE:
        table = _tool_table(doc, path)
        if table is None:
            raise ConfigError(
                f"{path}: no [tool.lspmux] table; expected lspmux settings under [tool.lspmux]",
                file=str(path),
            )
        return _check_document(table, _Where(str(path), "tool.lspmux"), label)
    return _check_document(doc, _Where(str(path)), label)


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/lspmux/config.toml`, or `~/.config/lspmux/config.toml`.

    A relative `XDG_CONFIG_HOME` is ignored, as the XDG base-directory spec asks.
    """
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = env.get("HOME")
        base = (Path(home) if home else Path.home()) / ".config"
    return base / "lspmux" / "config.toml"


def find_project_file(start: str | Path) -> Path | None:
    """The nearest `lspmux.toml`, or `pyproject.toml` holding `[tool.lspmux]`, from `start`
    (a folder, or a file whose folder is used) upward; None when there is none.

    In one folder `lspmux.toml` wins over `pyproject.toml`; a `pyproject.toml` without a
    `[tool.lspmux]` table does not stop the search.
    """
    here = Path(start).absolute()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
        pyproject = folder / PYPROJECT_FILE
        if pyproject.is_file() and _tool_table(_read_toml(pyproject), pyproject) is not None:
            return pyproject
    return None


# -- merging ---------------------------------------------------------------------------------


def _drop_origins(origins: dict[str, str], key: str) -> None:
    for stale in [k for k in origins if k == key or k.startswith(key + ".")]:
        del origins[stale]


def _record(origins: dict[str, str], key: str, value: Any, label: str) -> None:
    """Say that `value` (and, for a table, every leaf inside it) at `key` came from `label`."""
    origins[key] = label
    if isinstance(value, dict):
        for k, v in value.items():
            _record(origins, _join(key, k), v, label)


def _deep_merge(
    base: dict[str, Any], update: Mapping[str, Any], key: str, label: str, origins: dict[str, str]
) -> dict[str, Any]:
    merged = dict(base)
    origins[key] = label
    for k, v in update.items():
        sub = _join(key, k)
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = _deep_merge(merged[k], v, sub, label, origins)
        else:
            merged[k] = copy.deepcopy(v)
            _drop_origins(origins, sub)
            _record(origins, sub, v, label)
    return merged


@dataclass
class _State:
    """The merge so far: global values, entries in first-definition order, and origins."""

    globals: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"servers": {}, "linters": {}}
    )
    origins: dict[str, str] = field(default_factory=dict)
    #: The file (for error messages) that first defined each entry, by dotted key.
    defined_in: dict[str, str] = field(default_factory=dict)
    #: The file (for error messages) behind each dotted key's current value.
    files_of: dict[str, str] = field(default_factory=dict)


def _merge(state: _State, layer: _Layer) -> None:
    set_by = layer.where.file
    for key, value in layer.globals.items():
        state.globals[key] = value
        state.origins[key] = layer.label
        state.files_of[key] = set_by
    for section, entries in layer.sections.items():
        for name, values in entries.items():
            prefix = _join(section, name)
            target = state.sections[section].setdefault(name, {})
            if prefix not in state.defined_in:
                state.defined_in[prefix] = layer.where.file
                state.origins[prefix] = layer.label
            for key, value in values.items():
                dotted = _join(prefix, key)
                state.files_of[dotted] = set_by
                if key in DEEP_MERGED and isinstance(target.get(key), dict):
                    target[key] = _deep_merge(
                        target[key], value, dotted, layer.label, state.origins
                    )
                else:
                    target[key] = copy.deepcopy(value)
                    _record(state.origins, dotted, value, layer.label)


# -- building the model ----------------------------------------------------------------------


def _fail_entry(state: _State, prefix: str, key: str | None, found: str, expected: str) -> NoReturn:
    dotted = _join(prefix, key) if key else prefix
    file = state.files_of.get(dotted) or state.defined_in[prefix]
    _Where(file, dotted).fail(found, expected)


def _require_command(state: _State, section: str, name: str, values: Mapping[str, Any]) -> None:
    if "command" in values:
        return
    prefix = _join(section, name)
    known = [n for n in state.sections[section] if "command" in state.sections[section][n]]
    _fail_entry(
        state,
        prefix,
        None,
        f"no command, and no built-in entry is named {json.dumps(name)}{_hint(name, known)}",
        f'a new entry to set command, e.g. command = ["{name}"]',
    )


def _check_linter(state: _State, name: str, values: Mapping[str, Any]) -> None:
    """What a single file cannot show: a regex format needs a regex from some file."""
    if values.get("format", "json") == "regex" and "regex" not in values:
        _fail_entry(
            state,
            _join("linters", name),
            "format",
            'format = "regex" but no regex is set',
            "regex = a pattern with (?P<line>...) and (?P<message>...) groups",
        )


def _fill_origins(
    origins: dict[str, str], prefix: str, cls: type[Any], values: Mapping[str, Any]
) -> None:
    """Origins for fields no file set: the model's default ("defaults")."""
    for f in attrs.fields(cls):
        if f.name != "name" and f.name not in values:
            origins.setdefault(_join(prefix, f.name), DEFAULTS_LABEL)


def _build(state: _State, files: Sequence[str]) -> Config:
    origins = state.origins
    request_timeout = state.globals.get("request_timeout", 30.0)
    idle = state.globals.get("idle_timeout")
    idle_timeout = idle or None  # 0 means never
    for key in GLOBAL_KEYS:
        origins.setdefault(key, DEFAULTS_LABEL)

    servers: dict[str, ServerConfig] = {}
    for name, values in state.sections["servers"].items():
        _require_command(state, "servers", name, values)
        prefix = _join("servers", name)
        kwargs = dict(values)
        if "request_timeout" not in kwargs:
            kwargs["request_timeout"] = request_timeout
            origins[_join(prefix, "request_timeout")] = origins["request_timeout"]
        if "idle_timeout" in kwargs:
            kwargs["idle_timeout"] = kwargs["idle_timeout"] or None
        else:
            kwargs["idle_timeout"] = idle_timeout
            origins[_join(prefix, "idle_timeout")] = origins["idle_timeout"]
        _fill_origins(origins, prefix, ServerConfig, kwargs)
        servers[name] = ServerConfig(name=name, **kwargs)

    linters: dict[str, LinterConfig] = {}
    for name, values in state.sections["linters"].items():
        _require_command(state, "linters", name, values)
        _check_linter(state, name, values)
        _fill_origins(origins, _join("linters", name), LinterConfig, values)
        linters[name] = LinterConfig(name=name, **values)

    return Config(
        servers=servers,
        linters=linters,
        request_timeout=request_timeout,
        idle_timeout=idle_timeout,
        instance_timeout=state.globals.get("instance_timeout", 300.0),
        allowed_servers=state.globals.get("allowed_servers"),
        origins=dict(origins),
        files=tuple(files),
    )


def load_config(
    project_dir: Path | None = None,
    extra_files: Sequence[Path] = (),
    *,
    user_config: Path | Literal["default"] | None = "default",
    defaults: Path | None = None,
) -> Config:
    """Read, validate and merge the configuration files into the effective `Config`.

    `project_dir`: where the project file search starts (None: no project file).
    `extra_files`: `--config` files, merged last in the order given; each must exist (a
    `pyproject.toml` among them contributes its `[tool.lspmux]` table).
    `user_config`: "default" for the XDG location (skipped when absent), a path (which must
    exist), or None for no user file. `defaults`: a table to use instead of the shipped one.
    Raises `ConfigError` for a missing explicit file, bad TOML or an invalid value.
    """
    sources: list[tuple[Path, str]] = [(defaults or DEFAULTS_PATH, DEFAULTS_LABEL)]
    if user_config == "default":
        path = user_config_path()
        if path.is_file():
            sources.append((path, str(path)))
    elif user_config is not None:
        sources.append((user_config, str(user_config)))
    if project_dir is not None:
        project = find_project_file(project_dir)
        if project is not None:
            sources.append((project, str(project)))
    sources.extend((Path(extra), str(extra)) for extra in extra_files)

    state = _State()
    for path, label in sources:
        _merge(state, _read_layer(path, label))
    return _build(state, [str(path) for path, _ in sources])


# -- rendering (`lspmux config`) ---------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        inner = ", ".join(f"{_key_part(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    return json.dumps(str(value))


def _leaves(prefix: str, value: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(dotted key, value) for every leaf of a nested table; an empty table is a leaf."""
    out: list[tuple[str, Any]] = []
    for k, v in value.items():
        key = _join(prefix, str(k))
        if isinstance(v, Mapping) and v:
            out.extend(_leaves(key, v))
        else:
            out.append((key, v))
    return out


_ALWAYS_SHOWN = ("command", "file_types", "format")


#: Instances holding every field's default, to tell which values a file changed.
_MODEL_DEFAULTS: dict[type[Any], ServerConfig | LinterConfig] = {
    ServerConfig: ServerConfig(name="", command=()),
    LinterConfig: LinterConfig(name="", command=()),
}


def _entry_lines(
    entry: ServerConfig | LinterConfig, prefix: str, origins: Mapping[str, str]
) -> list[str]:
    lines: list[str] = []

    def emit(key: str, value: Any, dotted: str) -> None:
        origin = origins.get(dotted, DEFAULTS_LABEL)
        note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
        lines.append(f"{key} = {_toml_value(value)}{note}")

    for f in attrs.fields(type(entry)):
        if f.name == "name":
            continue
        value = getattr(entry, f.name)
        dotted = _join(prefix, f.name)
        if value is None:
            continue
        default = getattr(_MODEL_DEFAULTS[type(entry)], f.name)
        changed = value != default or origins.get(dotted, DEFAULTS_LABEL) != DEFAULTS_LABEL
        if isinstance(value, Mapping) and value:
            for key, leaf in _leaves(f.name, value):
                emit(key, leaf, f"{prefix}.{key}")
            continue
        if f.name in _ALWAYS_SHOWN or changed:
            emit(f.name, value, dotted)
    return lines


def _status(entry: ServerConfig | LinterConfig, root: str | Path | None) -> tuple[bool, str]:
    """(available, a comment saying why) for one server or linter."""
    resolved = entry.resolve_command(root)
    found = f"found: {resolved[0]}" if resolved else f"not found: {entry.command[0]}"
    if entry.disabled:
        return False, f"disabled ({found})"
    return resolved is not None, found


def _as_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    return value


def format_config(
    config: Config,
    *,
    only_available: bool = False,
    as_json: bool = False,
    root: str | Path | None = None,
) -> str:
    """The effective configuration as `lspmux config` prints it.

    Text: TOML-like, one table per server and linter with a comment saying whether its
    executable was found (looked up on PATH, then in `root`'s project folders), its command and
    file types, and every other value that differs from the model's default; a value set
    outside the shipped defaults ends with `# from <file>`. `as_json`: one JSON document with
    every field, `executable` and `available` per entry, and the origins.
    `only_available`: only servers and linters that are enabled and installed.
    """
    sections: dict[str, Mapping[str, ServerConfig | LinterConfig]] = {
        "servers": config.servers,
        "linters": config.linters,
    }
    if as_json:
        doc: dict[str, Any] = {
            "files": list(config.files),
            "request_timeout": config.request_timeout,
            "idle_timeout": config.idle_timeout,
        }
        for section, entries in sections.items():
            out: dict[str, Any] = {}
            for name, entry in entries.items():
                available, _ = _status(entry, root)
                if only_available and not available:
                    continue
                resolved = entry.resolve_command(root)
                fields = attrs.asdict(entry, recurse=False)
                fields.pop("name")
                out[name] = {
                    **_as_json(fields),
                    "executable": resolved[0] if resolved else None,
                    "available": available,
                }
            doc[section] = out
        doc["origins"] = dict(config.origins)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    lines = ["# lspmux: the effective configuration", "# files read, later ones win:"]
    for i, path in enumerate(config.files):
        lines.append(f"#   {path}" + ("  (built-in defaults)" if i == 0 else ""))
    origin = config.origins.get("request_timeout", DEFAULTS_LABEL)
    note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
    lines.append(f"request_timeout = {_toml_value(config.request_timeout)}{note}")
    if config.idle_timeout is None:
        lines.append("idle_timeout = 0  # never: idle servers keep running")
    else:
        origin = config.origins.get("idle_timeout", DEFAULTS_LABEL)
        note = f"  # from {origin}" if origin != DEFAULTS_LABEL else ""
        lines.append(f"idle_timeout = {_toml_value(config.idle_timeout)}{note}")

    counts: list[str] = []
    for section, entries in sections.items():
        available_count = 0
        for name, entry in entries.items():
            available, status = _status(entry, root)
            available_count += available
            if only_available and not available:
                continue
            prefix = _join(section, name)
            lines.append("")
            lines.append(f"[{prefix}]  # {status}")
            lines.extend(_entry_lines(entry, prefix, config.origins))
        counts.append(f"{available_count} of {len(entries)} {section}")
    lines.append("")
    lines.append("# available (enabled and installed): " + ", ".join(counts))
    return "\n".join(lines) + "\n"
