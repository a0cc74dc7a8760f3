"""The `at` argument of the agent tools: which of its three forms a string is, parsed.

| form | example | parsed |
|---|---|---|
| `path:line:col` (1-based, col in code points) | `src/app.py:12:16` | `LineCol` |
| `path:line` + optional `symbol` (`name#N`: the N-th occurrence) | `src/app.py:12` | `LineCol` |
| anything else: a Locate string (docs/locate.md) | `src/app.py:Greeter.greet@return <|>message` | `LocateAt` |

Pure functions; turning a `LineCol` into an LSP position needs the file's text
(`column_in_line`, `lsp_character`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from lspmux.agent.errors import ToolError
from lspmux.text import Encoding, _index_for_units, units

AT_FORMS = (
    "`at` is one of: a Locate string 'src/app.py:Greeter.greet@return <|>message'; "
    "'path:line:col' (1-based, col in characters) 'src/app.py:12:16'; "
    "'path:line' with symbol='message' (or 'message#2' for the 2nd occurrence on that line)"
)

_LINE_COL = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_SYMBOL_N = re.compile(r"^(?P<text>.+?)#(?P<n>\d+)$")


class LineCol(NamedTuple):
    """A position by numbers: 1-based line, 1-based column in code points (None: not given)."""

    path: str
    line: int
    col: int | None = None
    symbol: str | None = None


class LocateAt(NamedTuple):
    """A Locate string, resolved by lspmux's `locate/resolve`."""

    spec: str


def parse_at(at: str, symbol: str | None = None) -> LineCol | LocateAt:
    """Which form `at` is. A `symbol` goes with `path:line` only."""
    at = (at or "").strip()
    if not at:
        raise ToolError(f"`at` is empty. {AT_FORMS}")
    m = _LINE_COL.match(at)
    if m is None:
        if symbol:
            raise ToolError(
                f"`symbol` goes with an `at` of the form 'path:line' (got {at!r}). {AT_FORMS}",
                at=at,
            )
        return LocateAt(at)
    line = int(m["line"])
    col = int(m["col"]) if m["col"] is not None else None
    if line < 1 or (col is not None and col < 1):
        raise ToolError(f"lines and columns are 1-based; got {at!r}. {AT_FORMS}", at=at)
    if col is not None and symbol:
        raise ToolError(
            f"give either a column or `symbol`, not both (got {at!r} and symbol={symbol!r})",
            at=at,
        )
    return LineCol(m["path"], line, col, symbol or None)


def column_in_line(line_text: str, at: LineCol) -> int:
    """The 0-based code point index on the line `at` designates: its column, the start of its
    `symbol` (N-th occurrence; whole words first), or the first non-blank character."""
    if at.col is not None:
        if at.col - 1 > len(line_text):
            raise ToolError(
                f"column {at.col} is past the end of line {at.line} ({len(line_text)} "
                f"characters): {line_text.strip()!r}",
                line=at.line,
                line_text=line_text,
            )
        return at.col - 1
    if at.symbol is None:
        return len(line_text) - len(line_text.lstrip())
    text, n = at.symbol, 1
    m = _SYMBOL_N.match(at.symbol)
    if m is not None:
        text, n = m["text"], int(m["n"])
    hits = occurrences(line_text, text)
    if len(hits) < n or n < 1:
        found = f"occurs {len(hits)} time(s)" if hits else "does not occur"
        raise ToolError(
            f"{text!r} {found} on line {at.line}: {line_text.strip()!r}; "
            "check the line number or the symbol's spelling",
            line=at.line,
            line_text=line_text,
            symbol=at.symbol,
            count=len(hits),
        )
    return hits[n - 1]


def occurrences(line_text: str, text: str) -> list[int]:
    """Start indices of `text` in the line: whole-word matches when there are any, else all."""
    plain = [m.start() for m in re.finditer(re.escape(text), line_text)]
    left = r"(?<!\w)" if re.match(r"\w", text) else ""
    right = r"(?!\w)" if re.search(r"\w$", text) else ""
    words = [m.start() for m in re.finditer(left + re.escape(text) + right, line_text)]
    return words or plain


def lsp_character(line_text: str, index: int, encoding: Encoding) -> int:
    """The LSP character of code point `index` on a line, in `encoding`."""
    return units(line_text[:index], encoding)


def code_point_index(line_text: str, character: int, encoding: Encoding) -> int:
    """The code point index of an LSP character on a line (clamped to the line's end)."""
    return _index_for_units(line_text, character, encoding)
