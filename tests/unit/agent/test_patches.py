"""Unified diffs applied to texts, and the problems an edit introduces or fixes."""

from __future__ import annotations

import difflib

import pytest

from lspmux.agent.errors import ToolError
from lspmux.agent.patches import apply_hunks, difference, parse_diff

BEFORE = "".join(f"line {i}\n" for i in range(1, 21))


def _udiff(before: str, after: str, name: str = "app.py") -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True),
            f"a/{name}", f"b/{name}",
        )
    )  # fmt: skip


@pytest.mark.parametrize(
    "after",
    [
        BEFORE.replace("line 3\n", "line three\n"),
        BEFORE.replace("line 1\n", "") + "line 21\n",
        "new first\n" + BEFORE.replace("line 10\n", "line 10\nmiddle\n"),
        BEFORE.rstrip("\n"),  # "\ No newline at end of file"
        "",
    ],
)
def test_a_diff_applied_gives_the_text_it_was_made_from(after: str) -> None:
    (patch,) = parse_diff(_udiff(BEFORE, after))
    assert (patch.old, patch.new) == ("app.py", "app.py")
    assert apply_hunks(BEFORE, patch.hunks, "app.py") == after


def test_a_hunk_is_found_when_lines_moved_and_refused_when_gone() -> None:
    (patch,) = parse_diff(_udiff(BEFORE, BEFORE.replace("line 15\n", "fifteen\n")))
    moved = "extra\nextra\n" + BEFORE
    assert apply_hunks(moved, patch.hunks, "app.py") == moved.replace("line 15\n", "fifteen\n")
    with pytest.raises(ToolError, match=r"hunk 1 of app.py does not apply: expected 'line 12'"):
        apply_hunks(BEFORE.replace("line 12\n", "changed\n"), patch.hunks, "app.py")


def test_created_files_and_several_files() -> None:
    diff = _udiff("", "print(1)\n", "new.py").replace("a/new.py", "/dev/null") + _udiff(
        "x = 1\n", "x = 2\n", "b.py"
    )
    created, changed = parse_diff(diff)
    assert (created.old, created.new) == (None, "new.py")
    assert apply_hunks("", created.hunks, "new.py") == "print(1)\n"
    assert apply_hunks("x = 1\n", changed.hunks, "b.py") == "x = 2\n"
    with pytest.raises(ToolError, match="no `--- a/path`"):
        parse_diff("just text")


def _row(line: int, code: str, text: str, source: str = "ruff") -> dict[str, object]:
    return {"path": "a.py", "line": line, "source": source, "code": code,
            "message": f"{code} here", "line_text": text}  # fmt: skip


def test_difference_ignores_problems_that_only_moved() -> None:
    before = [_row(3, "F401", "import os"), _row(9, "F821", "x = nope")]
    after = [_row(4, "F401", "import os"), _row(5, "F821", "y = nme"), _row(5, "F821", "y = nme")]
    introduced, fixed = difference(before, after)
    assert [(r["line"], r["code"]) for r in introduced] == [(5, "F821"), (5, "F821")]
    assert [(r["line"], r["code"]) for r in fixed] == [(9, "F821")]
