"""Config value checkers: each key's rule for a value, and errors that name where it sits.

A checker takes a value and a `_Where` (file + dotted key) and returns the value normalised,
or raises `ConfigError` saying what was found and what was expected there. A model field
becomes a configuration key by naming its checker in its metadata (`key(...)`, used in
`lspmux.config.model`); `lspmux.config.checks` derives the key tables from those fields.
The linters' own value rules (formats, parsers' mappings) are in `lspmux.config.linter_checks`.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from lspmux.log_filters import FilterError
from lspmux.log_filters import parse as parse_log_filters
from lspmux.routing.features import FEATURES

#: What a daemon client's `lspMux` handshake may set for a server (`client_may_set`).
CLIENT_SETTABLE: tuple[str, ...] = ("args", "env", "cwd")

#: The metadata keys of a model field that is a configuration key.
CHECK = "lspmux.check"
DEEP_MERGE = "lspmux.deep_merge"
EXECUTABLE = "lspmux.executable"


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
    import difflib  # only for a wrong word: not on the start path

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


# -- value checkers: each returns the value (normalised) or raises through `where.fail` ------

Checker = Callable[[Any, _Where], Any]


def key(check: Checker, *, deep_merge: bool = False, executable: bool = False) -> Mapping[str, Any]:
    """The metadata that makes a model field a configuration key: its checker; `deep_merge`:
    files merge it as a nested table (else a later value replaces it); `executable`: it can
    make something run, so an untrusted project file may not set it."""
    return {CHECK: check, DEEP_MERGE: deep_merge, EXECUTABLE: executable}


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


def _seconds_or_false(value: Any, where: _Where) -> float | None:
    """`instance_timeout`: seconds (≥ 0), or `false` for never (None), as the Rust lspmux
    reads it."""
    expected = "a number of seconds ≥ 0, or false (never)"
    if value is False:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        where.fail(f"found {_describe(value)}", expected)
    if not math.isfinite(value) or value < 0:
        where.fail(f"found {value}", expected)
    return float(value)


def _address(value: Any, where: _Where) -> str:
    """`listen` / `connect`: the Rust lspmux's `["127.0.0.1", 27631]` or socket path, or
    lspmux's `unix:PATH` / `tcp:HOST:PORT`; kept as lspmux's address string."""
    from lspmux.daemon.address import CONFIG_FORMS, AddressError, from_config

    try:
        return str(from_config(value))
    except AddressError as exc:
        where.fail(f"found {_describe(value)}: {exc}", CONFIG_FORMS)


def _log_filters(value: Any, where: _Where) -> str:
    expected = 'a tracing filter like "info", "warn" or "lspmux=debug"'
    if not isinstance(value, str):
        where.fail(f"found {_describe(value)}", expected)
    try:
        parse_log_filters(value)
    except FilterError as exc:
        where.fail(str(exc), expected)
    return value


_ENV_PATTERN = re.compile(r"^[A-Za-z0-9_*?!\[\]-]+$")


def _env_pattern(value: Any, where: _Where) -> str:
    expected = 'an environment variable name or glob pattern, e.g. "PATH" or "CARGO_*"'
    if not isinstance(value, str) or not _ENV_PATTERN.match(value):
        where.fail(f"found {_describe(value)}", expected)
    return value


def _size(value: Any, where: _Where) -> int:
    expected = "a size in bytes, an integer ≥ 1024 (e.g. 67108864 for 64 MiB)"
    if isinstance(value, bool) or not isinstance(value, int):
        where.fail(f"found {_describe(value)}", expected)
    if value < 1024:
        where.fail(f"found {value}", expected)
    return value


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


def _family(value: Any, where: _Where) -> str:
    """A family of servers that do one job (`"python"`): a name, as a server's."""
    if not isinstance(value, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9_+-]*$", value):
        where.fail(f"found {_describe(value)}", 'a name like "python" (letters, digits, "-")')
    return value


def _path_pair(value: Any, where: _Where) -> str:
    """`"LOCAL=REMOTE"`, two absolute paths (as `--map` takes them)."""
    local, eq, remote = value.partition("=") if isinstance(value, str) else ("", "", "")
    if not eq or not local.startswith("/") or not remote.startswith("/"):
        where.fail(f"found {_describe(value)}", '"LOCAL=REMOTE", two absolute paths')
    return str(value)


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


def _package(value: Any, where: _Where) -> tuple[str, ...]:
    """`lspmux install`'s recipe: one pinned package or a list of them."""
    from lspmux.install.prefix import RECIPE_EXAMPLE, parse_recipe

    expected = f"{RECIPE_EXAMPLE}, or a non-empty list of them"
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        where.fail(f"found {_describe(value)}", expected)
    for index, item in enumerate(items):
        try:
            parse_recipe(item)
        except ValueError as exc:
            (where if isinstance(value, str) else where.item(index)).fail(str(exc), expected)
    return tuple(items)


def _server_name(name: str, where: _Where) -> None:
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_+-]*$", name):
        where.fail(
            f"{json.dumps(name)} is not a usable name",
            "letters, digits, '-', '_' or '+', starting with a letter or digit",
        )


_STRINGS = "a list of strings"

#: How a server's `project_check` output reads (lspmux/diagnostics/project.py parses each).
PROJECT_CHECK_FORMATS = ("pyright", "ruff", "cargo", "tsc", "gnu")

#: Every key a `[servers.NAME]` table may hold.
#: What `[servers.NAME.untrusted]` may hold: the restricted mode of a server, applied where
#: the workspace is not trusted (see `lspmux.config.restricted`).
UNTRUSTED_KEYS: tuple[str, ...] = ("settings", "initialization_options", "disabled")


def _untrusted(value: Any, where: _Where) -> dict[str, Any]:
    if not isinstance(value, dict):
        where.fail(f"found {_describe(value)}", "a table: [servers.NAME.untrusted]")
    result: dict[str, Any] = {}
    for key, item in value.items():
        at = where.child(key)
        if key == "disabled":
            result[key] = _boolean(item, at)
        elif key in UNTRUSTED_KEYS:
            result[key] = _json_table(item, at)
        else:
            at.fail(
                f"unknown key{_hint(key, UNTRUSTED_KEYS)}", "one of: " + ", ".join(UNTRUSTED_KEYS)
            )
    return result
