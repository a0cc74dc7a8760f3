"""Edits as an agent writes them, and what they change in the diagnostics (pure functions).

- `parse_diff` / `apply_hunks`: a unified diff (`--- a/path` / `+++ b/path` / `@@ -l,n +l,n @@`,
  as `git diff` and `diff -u` print it, and as the editing tools answer) applied to a text; a
  hunk whose lines are not where it says is looked for nearby, and refused with the line it
  expected when it is nowhere.
- `difference`: the problems an edit introduces and the ones it fixes, comparing diagnostics
  by (file, source, code, message, text of their line) so that lines moved by the edit do not
  count as new.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, NamedTuple

from lspmux.agent.errors import ToolError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: How many lines away from where it says a hunk may be found.
FUZZ = 50


class Hunk(NamedTuple):
    old_start: int  # 1-based; 0 for a hunk that inserts into an empty file
    lines: list[tuple[str, str]]  # (" ", "-" or "+", the line with its line break)


class FilePatch(NamedTuple):
    old: str | None  # the path before (None: created)
    new: str | None  # the path after (None: deleted)
    hunks: list[Hunk]


def _path(header: str) -> str | None:
    name = header.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse_diff(diff: str) -> list[FilePatch]:
    """The files of a unified diff and their hunks."""
    patches: list[FilePatch] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if not (line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old, new = _path(line[4:]), _path(lines[i + 1][4:])
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and (m := _HUNK.match(lines[i])):
            old_len = int(m[2]) if m[2] is not None else 1
            new_len = int(m[4]) if m[4] is not None else 1
            body: list[tuple[str, str]] = []
            i += 1
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < old_len or seen_new < new_len):
                text = lines[i]
                tag, rest = (text[0], text[1:]) if text not in ("\n", "\r\n") else (" ", text)
                if tag == "\\":  # "\ No newline at end of file": the previous line has none
                    if body:
                        prev_tag, prev = body[-1]
                        body[-1] = (prev_tag, prev.rstrip("\r\n"))
                    i += 1
                    continue
                if tag not in " -+":
                    raise ToolError(f"diff: line {i + 1} is not part of a hunk: {text.rstrip()!r}")
                body.append((tag, rest))
                seen_old += tag in " -"
                seen_new += tag in " +"
                i += 1
            if i < len(lines) and lines[i].startswith("\\"):
                prev_tag, prev = body[-1]
                body[-1] = (prev_tag, prev.rstrip("\r\n"))
                i += 1
            hunks.append(Hunk(int(m[1]), body))
        if old is None and new is None:
            raise ToolError("diff: a file patch has /dev/null on both sides")
        patches.append(FilePatch(old, new, hunks))
    if not patches:
        raise ToolError("diff: no `--- a/path` / `+++ b/path` file header found (a unified diff)")
    return patches


def apply_hunks(text: str, hunks: list[Hunk], label: str) -> str:
    """`text` with the hunks applied in order; ToolError naming the hunk that does not fit."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    pos = 0  # next line of `lines` not yet copied
    for n, hunk in enumerate(hunks, 1):
        old = [t for tag, t in hunk.lines if tag in " -"]
        want = max(0, hunk.old_start - 1) if old else hunk.old_start
        at = _find(lines, old, want, pos)
        if at is None:
            first = old[0].rstrip("\r\n") if old else ""
            raise ToolError(
                f"diff: hunk {n} of {label} does not apply: expected {first!r} near line "
                f"{hunk.old_start} (the file changed since the diff was made?)",
                file=label,
                hunk=n,
            )
        out += lines[pos:at]
        out += [t for tag, t in hunk.lines if tag in " +"]
        pos = at + len(old)
    out += lines[pos:]
    return "".join(out)


def _find(lines: list[str], old: list[str], want: int, pos: int) -> int | None:
    def fits(at: int) -> bool:
        if at < pos or at + len(old) > len(lines):
            return False
        return all(_same(lines[at + k], old[k]) for k in range(len(old)))

    for delta in range(FUZZ + 1):
        for at in (want - delta, want + delta) if delta else (want,):
            if fits(at):
                return at
    return None


def _same(a: str, b: str) -> bool:
    return a.rstrip("\r\n") == b.rstrip("\r\n") and (a.endswith("\n") or not b.endswith("\n"))


# -- what an edit changes in the diagnostics ---------------------------------------------------


def _key(row: dict[str, Any]) -> tuple[str, ...]:
    return (
        row["path"],
        row["source"].lower(),
        row["code"],
        " ".join(row["message"].split()),
        row.get("line_text", "").strip(),
    )


def difference(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(introduced, fixed): rows of `after` not in `before`, and of `before` not in `after`,
    counted (two identical problems where there was one is one introduced)."""
    return _minus(after, before), _minus(before, after)


def _minus(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of `rows` left once each row of `other` took away one equal to it."""
    left = Counter(_key(r) for r in other)
    out: list[dict[str, Any]] = []
    for row in rows:
        k = _key(row)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(row)
    return out
