"""Command-line linters: what the parsers share.

A linter adapter turns one tool's output into LSP `Diagnostic` dicts. The parsers
(`biome`, `swiftlint`, `generic`) are pure functions of (output, path, text, config); running the
tool lives in `runner`. This module holds what they all need: the two error types, severity
names, converting a tool's line/column (in whatever unit it counts) into LSP positions on the
buffer's text, and deciding whether a path printed by a tool is the file that was linted.
"""

from __future__ import annotations

import os
import posixpath
import re
from bisect import bisect_right
from typing import Any

from lspmux.config.model import LinterConfig
from lspmux.text import Encoding, line_end, line_starts, position_to_offset, to_position
from lspmux.uris import file_path

#: Diagnostic severities by name (LSP: 1 error, 2 warning, 3 information, 4 hint).
SEVERITIES: dict[str, int] = {
    "fatal": 1,
    "error": 1,
    "err": 1,
    "warning": 2,
    "warn": 2,
    "info": 3,
    "information": 3,
    "note": 3,
    "hint": 4,
    "style": 4,
}

_WORD = re.compile(r"\w+")


class LinterOutputError(Exception):
    """A tool's output could not be understood (not JSON, wrong shape, bad numbers).

    The message names the tool and quotes the beginning of the output it could not read.
    """

    def __init__(self, message: str, *, tool: str = "", output: str | None = None) -> None:
        self.tool = tool
        self.reason = message
        self.excerpt = excerpt(output or "")
        detail = message
        if output is not None:
            if output.strip():
                detail += f" (output began: {self.excerpt!r})"
            else:
                detail += " (the output was empty)"
        #: The message without the tool's name.
        self.detail = detail
        super().__init__(f"{tool}: {detail}" if tool else detail)


class LinterFailure(Exception):
    """A linter run produced no usable result: not installed, timed out, crashed, or printed
    something that could not be parsed. The message is meant for the user (window/logMessage).

    `kind` names the way it failed ("missing", "timeout", "crash", "output", "io",
    "internal"), so a session reports each (linter, kind) once, not once per keystroke.
    """

    def __init__(self, message: str, kind: str = "failed") -> None:
        super().__init__(message)
        self.kind = kind


def excerpt(output: str, limit: int = 200) -> str:
    """The first `limit` characters of `output`, on one line."""
    flat = " ".join(output.strip().split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def source_of(config: LinterConfig) -> str:
    return config.source or config.name


def severity_of(value: Any, mapping: dict[str, str] | None = None, default: int = 2) -> int:
    """An LSP severity (1..4) from a tool's severity word or number.

    `mapping` maps the tool's own words (case-insensitively) to one of the names in SEVERITIES;
    unknown words fall back to the common names, then to `default`.
    """
    if value is None:
        return default
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value if 1 <= value <= 4 else default
    word = str(value).strip().lower()
    if mapping:
        for key, name in mapping.items():
            if key.lower() == word:
                return SEVERITIES.get(str(name).lower(), default)
    return SEVERITIES.get(word, default)


class Positions:
    """Converts a tool's (line, column) or offsets into LSP positions on `text`.

    Lines and columns given here are 0-based; `unit` says what a column counts: "utf-32" code
    points (most tools), "utf-8" bytes or "utf-16" code units. Everything outside the text is
    clamped into it, so a tool that ran on slightly different text never yields a bad range.
    """

    def __init__(self, text: str, encoding: Encoding = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.starts = line_starts(text)
        self._utf8: bytes | None = None

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def offset(self, line: int, column: int, unit: Encoding = "utf-32") -> int:
        line = min(max(line, 0), len(self.starts) - 1)
        return position_to_offset(self.text, self.starts, line, max(column, 0), unit)

    def offset_of_byte(self, byte: int) -> int:
        """The str offset of a UTF-8 byte offset into the text (inside a character: its end)."""
        if self.text.isascii():
            return max(0, min(byte, len(self.text)))
        if self._utf8 is None:
            self._utf8 = self.text.encode("utf-8")
        byte = max(0, min(byte, len(self._utf8)))
        return len(self._utf8[:byte].decode("utf-8", errors="ignore"))

    def line_bounds(self, line: int) -> tuple[int, int]:
        """(start, end) offsets of `line`'s content, line break excluded."""
        line = min(max(line, 0), len(self.starts) - 1)
        return self.starts[line], line_end(self.text, self.starts, line)

    def word_end(self, offset: int) -> int:
        """End of the word starting at `offset`, or `offset` + 1 character when there is none
        (never past the end of the line)."""
        line = max(0, min(len(self.starts) - 1, _line_of(self.starts, offset)))
        _, end = self.line_bounds(line)
        if offset >= end:
            return offset
        m = _WORD.match(self.text, offset, end)
        return m.end() if m else offset + 1

    def whole_line(self, line: int) -> dict[str, Any]:
        """The range of `line` from its first non-blank character to its end."""
        start, end = self.line_bounds(line)
        content = self.text[start:end]
        indent = len(content) - len(content.lstrip())
        if indent == len(content):
            indent = 0
        return self.range(start + indent, end)

    def range(self, start: int, end: int) -> dict[str, Any]:
        if end < start:
            end = start
        return {
            "start": to_position(self.text, self.starts, start, self.encoding),
            "end": to_position(self.text, self.starts, end, self.encoding),
        }

    def span(
        self,
        line: int,
        column: int | None,
        end_line: int | None = None,
        end_column: int | None = None,
        unit: Encoding = "utf-32",
    ) -> dict[str, Any]:
        """An LSP range from 0-based tool coordinates: no column → the whole line; no end →
        the word at the start (or one character)."""
        if column is None:
            return self.whole_line(line)
        start = self.offset(line, column, unit)
        if end_column is not None:
            end = self.offset(line if end_line is None else end_line, end_column, unit)
        elif end_line is not None and end_line != line:
            end = self.line_bounds(end_line)[1]
        else:
            end = self.word_end(start)
        return self.range(start, end)


def _line_of(starts: list[int], offset: int) -> int:
    return bisect_right(starts, offset) - 1


def make_diagnostic(
    *,
    range_: dict[str, Any],
    message: str,
    severity: int,
    source: str,
    code: str | int | None = None,
    href: str | None = None,
    tags: list[int] | None = None,
) -> dict[str, Any]:
    diag: dict[str, Any] = {"range": range_, "severity": severity, "source": source}
    if code is not None and code != "":
        diag["code"] = code
        if href:
            diag["codeDescription"] = {"href": href}
    diag["message"] = message or "(no message)"
    if tags:
        diag["tags"] = tags
    return diag


def same_file(reported: str | None, path: str) -> bool:
    """Whether a path printed by a tool names `path` (the file that was passed to it).

    Absolute paths must be equal (after normalisation, or once symlinks are resolved). A
    relative path (relative to the tool's working directory, which the parser does not know)
    must match the last components of `path`; one with ".." is compared by basename only.
    No path ("", "-", "<stdin>", "<nopath>") counts as the linted file: the tool read stdin.
    """
    if reported is None:
        return True
    reported = reported.strip()
    if reported in ("", "-", "<stdin>", "stdin", "<nopath>"):
        return True
    if reported.startswith("file:"):
        reported = file_path(reported) or reported
    rep = reported.replace("\\", "/")
    target = path.replace("\\", "/")
    if posixpath.isabs(rep):
        if posixpath.normpath(rep) == posixpath.normpath(target):
            return True
        return os.path.realpath(reported) == os.path.realpath(path)
    parts = [p for p in posixpath.normpath(rep).split("/") if p not in ("", ".")]
    if not parts:
        return False
    if ".." in parts:
        return parts[-1] == posixpath.basename(target)
    target_parts = posixpath.normpath(target).split("/")
    return target_parts[-len(parts) :] == parts


def get_path(item: Any, dotted: str) -> Any:
    """The value at a dotted path ("a.b.0.c") inside nested dicts/lists, or None."""
    if dotted == "":
        return item
    cur = item
    for part in dotted.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        elif isinstance(cur, list) and part.lstrip("-").isdigit():
            idx = int(part)
            cur = cur[idx] if -len(cur) <= idx < len(cur) else None
        else:
            return None
        if cur is None:
            return None
    return cur


__all__ = [
    "SEVERITIES",
    "LinterFailure",
    "LinterOutputError",
    "Positions",
    "excerpt",
    "get_path",
    "make_diagnostic",
    "same_file",
    "severity_of",
    "source_of",
]
