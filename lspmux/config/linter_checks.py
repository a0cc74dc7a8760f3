"""The linters' value checkers: command placeholders, output formats, the generic parsers'
mappings (`json`, `regex`, shared settings), and the words they may use.

`lspmux.diagnostics.linters` must handle every format and setting named here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lspmux.config.checkers import (
    Checker,
    _choice,
    _command,
    _describe,
    _hint,
    _json_table,
    _string,
    _Where,
)

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
