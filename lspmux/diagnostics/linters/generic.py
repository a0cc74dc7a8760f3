"""Generic output mappings for any command-line linter, and the dispatch on `format`.

- `format = "json"`: the output is JSON (or JSON Lines, one object per line). `config.json`
  says where the list of findings is (`items`, a dotted path; "" = the top level) and which
  field of a finding holds each part (`line`, `column`, `end_line`, `end_column`, `severity`,
  `message`, `code`; each a dotted path, defaulting to line, column, endLine, endColumn,
  severity, message, code). An optional `file` field path (in `json` or `options`) skips
  findings about other files.
- `format = "regex"`: `config.regex` is matched over the output with re.MULTILINE; its named
  groups are line, column, end_line, end_column, severity, code, message and optionally file
  (a finding whose file is not the linted one is skipped).

Both read these settings from `config.options` (or from `config.json`, which wins):
`severity_map` (tool word → error/warning/information/hint), `default_severity` ("warning"),
`code_prefix` (prepended to the code: shellcheck's 2086 → "SC2086"), `code_url` (a template
with `{code}` for codeDescription.href) and `column_unit` ("utf-32" code points — the default —,
"utf-8" bytes or "utf-16" units). `config.one_based` says whether lines and columns start at 1.
A finding without a column covers its whole line; one without an end covers the word at its
start (or one character). End columns are exclusive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from lspmux.config.linter_checks import JSON_FIELD_PATHS
from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import (
    LinterOutputError,
    Positions,
    biome,
    get_path,
    make_diagnostic,
    same_file,
    severity_of,
    source_of,
    swiftlint,
)
from lspmux.text import Encoding

#: Where each field is read when the mapping does not say (the model's documented defaults).
FIELD_DEFAULTS: dict[str, str] = {k: v for k, v in JSON_FIELD_PATHS.items() if v is not None}

_UNITS: dict[str, Encoding] = {
    "utf-32": "utf-32",
    "utf-16": "utf-16",
    "utf-8": "utf-8",
    "chars": "utf-32",
    "codepoints": "utf-32",
    "bytes": "utf-8",
}
FORMATS = ("biome", "swiftlint", "json", "regex")

Parser = Callable[..., list[dict[str, Any]]]


def parse_output(
    config: LinterConfig,
    output: str,
    *,
    path: str,
    text: str,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Parse `output` with the parser `config.format` names."""
    parsers: dict[str, Parser] = {
        "biome": biome.parse,
        "swiftlint": swiftlint.parse,
        "json": parse_json,
        "regex": parse_regex,
    }
    parser = parsers.get(config.format)
    if parser is None:
        raise LinterOutputError(
            f"unknown format {config.format!r} (expected one of {', '.join(FORMATS)})",
            tool=config.name,
        )
    return parser(output, path=path, text=text, config=config, encoding=encoding)


class _Mapping:
    """The settings both generic formats share, read once per parse."""

    def __init__(self, config: LinterConfig) -> None:
        def setting(key: str, default: Any = None) -> Any:
            if key in config.json:
                return config.json[key]
            return config.options.get(key, default)

        self.tool = config.name
        self.source = source_of(config)
        self.shift = 1 if config.one_based else 0
        smap = setting("severity_map") or {}
        if not isinstance(smap, dict):
            raise LinterOutputError("`severity_map` must be a table", tool=self.tool)
        self.severity_map: dict[str, str] = {str(k): str(v) for k, v in smap.items()}
        self.default_severity = severity_of(setting("default_severity", "warning"))
        self.code_prefix = str(setting("code_prefix", "") or "")
        self.code_url: str | None = setting("code_url")
        if self.code_url is not None:
            try:
                str(self.code_url).format(code="X")
            except (KeyError, IndexError, ValueError):
                raise LinterOutputError(
                    f"`code_url` {self.code_url!r} may only use the placeholder {{code}}",
                    tool=self.tool,
                ) from None
        unit = str(setting("column_unit", "utf-32")).lower()
        if unit not in _UNITS:
            raise LinterOutputError(
                f"`column_unit` {unit!r} is not one of {', '.join(_UNITS)}", tool=self.tool
            )
        self.unit: Encoding = _UNITS[unit]

    def number(self, value: Any, what: str, output: str) -> int | None:
        """A 0-based number from the tool's value (None when absent)."""
        if value is None or value == "":
            return None
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise LinterOutputError(
                f"{what} {value!r} is not a number", tool=self.tool, output=output
            ) from None
        return max(n - self.shift, 0)

    def diagnostic(
        self,
        pos: Positions,
        values: dict[str, Any],
        output: str,
    ) -> dict[str, Any]:
        line = self.number(values.get("line"), "line", output)
        column = self.number(values.get("column"), "column", output)
        end_line = self.number(values.get("end_line"), "end line", output)
        end_column = self.number(values.get("end_column"), "end column", output)
        if line is None:
            rng = pos.whole_line(0)
        else:
            rng = pos.span(line, column, end_line, end_column, unit=self.unit)
        code = values.get("code")
        code_text = None if code is None or code == "" else f"{self.code_prefix}{code}"
        href = self.code_url.format(code=code_text) if self.code_url and code_text else None
        severity = values.get("severity")
        return make_diagnostic(
            range_=rng,
            message=str(values.get("message") or "").strip(),
            severity=(
                self.default_severity
                if severity is None or severity == ""
                else severity_of(severity, self.severity_map, self.default_severity)
            ),
            source=self.source,
            code=code_text,
            href=href,
        )


def parse_json(
    output: str,
    *,
    path: str,
    text: str,
    config: LinterConfig,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Findings from JSON output, read with the mapping in `config.json`."""
    mapping = _Mapping(config)
    fields = {key: str(config.json.get(key, default)) for key, default in FIELD_DEFAULTS.items()}
    file_field = config.json.get("file") or config.options.get("file")
    items = _json_items(output, str(config.json.get("items") or ""), mapping.tool)
    pos = Positions(text, encoding)
    out: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            raise LinterOutputError(
                "a finding is not a JSON object", tool=mapping.tool, output=output
            )
        if file_field:
            reported = get_path(item, str(file_field))
            if not same_file(None if reported is None else str(reported), path):
                continue
        values = {key: get_path(item, field) for key, field in fields.items()}
        out.append(mapping.diagnostic(pos, values, output))
    return out


def _json_items(output: str, items_path: str, tool: str) -> list[Any]:
    stripped = output.strip()
    if not stripped:
        raise LinterOutputError("no JSON on stdout", tool=tool, output=output)
    try:
        data = json.loads(stripped)
    except ValueError:  # JSON Lines: each line is one finding, `items` does not apply
        return _json_lines(stripped, tool, output)
    found = get_path(data, items_path)
    if not isinstance(found, list):
        where = f"at {items_path!r}" if items_path else "at the top level"
        raise LinterOutputError(f"no list of findings {where}", tool=tool, output=output)
    return found


def _json_lines(stripped: str, tool: str, output: str) -> list[Any]:
    items: list[Any] = []
    for line in stripped.splitlines():
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except ValueError:
            raise LinterOutputError("stdout is not JSON", tool=tool, output=output) from None
    return items


def parse_regex(
    output: str,
    *,
    path: str,
    text: str,
    config: LinterConfig,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Findings from text output, one per match of `config.regex`."""
    mapping = _Mapping(config)
    if not config.regex:
        raise LinterOutputError("format = 'regex' needs a `regex`", tool=mapping.tool)
    try:
        pattern = re.compile(config.regex, re.MULTILINE)
    except re.error as err:
        raise LinterOutputError(f"invalid regex: {err}", tool=mapping.tool) from None
    if "line" not in pattern.groupindex:
        raise LinterOutputError("the regex has no named group `line`", tool=mapping.tool)
    names = [n for n in (*FIELD_DEFAULTS, "file") if n in pattern.groupindex]
    pos = Positions(text, encoding)
    out: list[dict[str, Any]] = []
    for match in pattern.finditer(output):
        values = {name: match.group(name) for name in names}
        if "file" in values and not same_file(values["file"], path):
            continue
        if not values.get("message"):
            values["message"] = match.group(0)
        out.append(mapping.diagnostic(pos, values, output))
    return out
