"""SwiftLint's `--reporter json` output as LSP diagnostics.

SwiftLint prints a JSON list of violations: `file`, 1-based `line`, 1-based `character`
(UTF-16 code units, like NSString; null for a whole-line violation), `severity` ("Error" /
"Warning"), `rule_id`, `reason`. It exits with 2 when an error-severity violation was found;
that is a normal run (put 2 in `ok_exit_codes`). A violation has no end: the range covers the
word at the start position (or one character), or the whole line (first non-blank character
to its end) when `character` is null.
"""

from __future__ import annotations

import json
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

TOOL = "swiftlint"
RULES_URL = "https://realm.github.io/SwiftLint/{rule}.html"


def parse(
    output: str,
    *,
    path: str,
    text: str,
    config: LinterConfig,
    encoding: Encoding = "utf-16",
) -> list[dict[str, Any]]:
    """Diagnostics for `path` in SwiftLint's JSON report `output`; positions refer to `text`."""
    try:
        violations = json.loads(output)
    except ValueError:
        raise LinterOutputError("stdout is not JSON", tool=TOOL, output=output) from None
    if not isinstance(violations, list):
        raise LinterOutputError("the report is not a JSON list", tool=TOOL, output=output)
    pos = Positions(text, encoding)
    source = source_of(config)
    out: list[dict[str, Any]] = []
    for v in violations:
        if not isinstance(v, dict):
            raise LinterOutputError("a violation is not an object", tool=TOOL, output=output)
        reported = v.get("file")
        if reported is not None and not isinstance(reported, str):
            raise LinterOutputError("a `file` is not a string", tool=TOOL, output=output)
        if not same_file(reported, path):
            continue
        line, character = v.get("line"), v.get("character")
        if not _is_int_or_none(line) or not _is_int_or_none(character):
            raise LinterOutputError(
                "`line` / `character` is not a number", tool=TOOL, output=output
            )
        line0 = (line or 1) - 1
        if character is None:
            rng = pos.whole_line(line0)
        else:
            rng = pos.span(line0, max(character - 1, 0), unit="utf-16")
        rule = v.get("rule_id")
        out.append(
            make_diagnostic(
                range_=rng,
                message=str(v.get("reason") or v.get("type") or ""),
                severity=severity_of(v.get("severity"), default=2),
                source=source,
                code=str(rule) if rule else None,
                href=RULES_URL.format(rule=rule) if rule else None,
            )
        )
    return out


def _is_int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))
