"""Biome's `--reporter=json` output (`biome lint` / `biome check`) as LSP diagnostics.

Two schemas exist in the wild:

- Biome 2.4+ (recorded with 2.6.8): `location.path` is a string, `location.start`/`end` are
  1-based `{line, column}` where a column counts code points (a tab is one), the end exclusive;
  `message` is a string; `advices` is a list of `{start, end, text}`.
- Biome ≤ 2.3 (recorded with 2.3.11): `location.path.file`, `location.span` = `[start, end]`
  UTF-8 byte offsets into the file; `message` is a list of markup parts `{"content": ...}`
  (`description` holds the plain text); `advices.advices` holds `{"log": [level, parts]}`.

Advice texts ("Safe fix: Use const instead.") are appended to the message, one per line, so
every client shows them. Biome's `format` pseudo-diagnostic (from `biome check`) becomes one
information diagnostic on the first line, unless `options.format_diagnostic = false`.
Diagnostics about other files are dropped; tool-level errors (a file it could not read, an
internal error) raise `LinterOutputError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters import (
    LinterOutputError,
    Positions,
    make_diagnostic,
    same_file,
    severity_of,
    source_of,
)
from lspmux.text import Encoding

TOOL = "biome"
RULES_URL = "https://biomejs.dev/linter/rules/"
FORMAT_MESSAGE = "File is not formatted (biome format)"
#: Categories that mean Biome could not do its job on the file (not a finding in it).
TOOL_ERROR_PREFIXES = ("internalError", "fs/")
_TAGS = {"unnecessaryCode": 1, "deprecatedCode": 2}
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def rule_url(category: str) -> str | None:
    """The documentation page of a `lint/<group>/<ruleName>` category."""
    if not category.startswith("lint/"):
        return None
    name = category.rsplit("/", 1)[-1]
    return RULES_URL + _CAMEL.sub("-", name).lower()


def parse(
    output: str,
    *,
    path: str,
    text: str,
    config: LinterConfig,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Diagnostics for `path` in Biome's JSON report `output`; positions refer to `text`."""
    report = _load(output)
    items = report.get("diagnostics")
    if not isinstance(items, list):
        raise LinterOutputError("no `diagnostics` list in the report", tool=TOOL, output=output)
    pos = Positions(text, encoding)
    source = source_of(config)
    want_format = config.options.get("format_diagnostic", True) is not False
    out: list[dict[str, Any]] = []
    formatted = False
    for item in items:
        if not isinstance(item, dict):
            raise LinterOutputError("a diagnostic is not an object", tool=TOOL, output=output)
        location = item.get("location") or {}
        if not isinstance(location, dict):
            raise LinterOutputError("a `location` is not an object", tool=TOOL, output=output)
        reported = location.get("path")
        if isinstance(reported, dict):
            reported = reported.get("file")
        if reported is not None and not isinstance(reported, str):
            raise LinterOutputError("a `location.path` is not a string", tool=TOOL, output=output)
        if not same_file(reported, path):
            continue
        category = str(item.get("category") or "")
        message = _message(item)
        if category.startswith(TOOL_ERROR_PREFIXES):
            raise LinterOutputError(f"{category}: {message}", tool=TOOL, output=output)
        if category == "format":
            if want_format and not formatted:
                formatted = True
                out.append(
                    make_diagnostic(
                        range_=pos.whole_line(0),
                        message=FORMAT_MESSAGE,
                        severity=3,
                        source=source,
                        code="format",
                    )
                )
            continue
        advice = [a for a in _advice(item) if a and a != message]
        if advice:
            message = "\n".join([message, *dict.fromkeys(advice)])
        tags = [_TAGS[t] for t in item.get("tags") or () if t in _TAGS]
        out.append(
            make_diagnostic(
                range_=_range(location, pos, output),
                message=message,
                severity=severity_of(item.get("severity"), default=1),
                source=source,
                code=category or None,
                href=rule_url(category),
                tags=tags,
            )
        )
    return out


def _load(output: str) -> dict[str, Any]:
    stripped = output.strip()
    if not stripped:
        raise LinterOutputError("no JSON report on stdout", tool=TOOL, output=output)
    try:
        report = json.loads(stripped)
    except ValueError:
        # Tolerate a line of chatter before the report (seen with some wrappers).
        start = stripped.find('{"summary"')
        if start < 0:
            start = stripped.find("\n{")
        try:
            report = json.loads(stripped[start:]) if start > 0 else None
        except ValueError:
            report = None
        if report is None:
            raise LinterOutputError("stdout is not JSON", tool=TOOL, output=output) from None
    if not isinstance(report, dict):
        raise LinterOutputError("the report is not a JSON object", tool=TOOL, output=output)
    return report


def _text_of(value: Any) -> str:
    """Plain text of a string or a list of markup parts `{"content": ...}`."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(part.get("content", "")) if isinstance(part, dict) else str(part) for part in value
        )
    return ""


def _message(item: dict[str, Any]) -> str:
    message = _text_of(item.get("message")).strip()
    if not message:
        message = str(item.get("description") or "").strip()
    return message


def _advice(item: dict[str, Any]) -> list[str]:
    advices = item.get("advices")
    texts: list[str] = []
    if isinstance(advices, list):  # 2.4+: [{start, end, text}]
        for advice in advices:
            if isinstance(advice, dict) and isinstance(advice.get("text"), str):
                texts.append(advice["text"].strip())
    elif isinstance(advices, dict):  # ≤ 2.3: {"advices": [{"log": [level, parts]}, ...]}
        for advice in advices.get("advices") or ():
            log = advice.get("log") if isinstance(advice, dict) else None
            if isinstance(log, list) and len(log) == 2:
                texts.append(_text_of(log[1]).strip())
    return texts


def _range(location: dict[str, Any], pos: Positions, output: str) -> dict[str, Any]:
    span = location.get("span")
    if isinstance(span, list) and len(span) == 2:
        try:
            a, b = int(span[0]), int(span[1])
        except (TypeError, ValueError):
            raise LinterOutputError(
                "a `span` is not two offsets", tool=TOOL, output=output
            ) from None
        return pos.range(pos.offset_of_byte(a), pos.offset_of_byte(b))
    start, end = location.get("start"), location.get("end")
    if isinstance(start, dict):
        try:
            line, column = int(start["line"]), int(start["column"])
            if isinstance(end, dict):
                end_line, end_column = int(end["line"]), int(end["column"])
            else:
                end_line, end_column = line, column
        except (KeyError, TypeError, ValueError):
            raise LinterOutputError(
                "a `location.start`/`end` lacks a numeric line or column", tool=TOOL, output=output
            ) from None
        if line <= 0:  # 0:0 means "the whole file": show it on the first line
            return pos.whole_line(0)
        a = pos.offset(line - 1, column - 1)
        b = pos.offset(end_line - 1, end_column - 1) if end_line > 0 else a
        return pos.range(a, b)
    return pos.whole_line(0)
