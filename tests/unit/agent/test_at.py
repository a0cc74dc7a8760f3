"""The `at` forms: which form a string is, and where on the line it points."""

from __future__ import annotations

import pytest

from lspmux.agent.at import (
    LineCol,
    LocateAt,
    code_point_index,
    column_in_line,
    lsp_character,
    parse_at,
)
from lspmux.agent.errors import ToolError


@pytest.mark.parametrize(
    ("at", "symbol", "parsed"),
    [
        ("src/app.py:12:16", None, LineCol("src/app.py", 12, 16)),
        ("src/app.py:12", None, LineCol("src/app.py", 12)),
        ("src/app.py:12", "message#2", LineCol("src/app.py", 12, None, "message#2")),
        ("src/app.py:Greeter.greet@return <|>message", None,
         LocateAt("src/app.py:Greeter.greet@return <|>message")),
        ("app.py:12@foo(<|>x)", None, LocateAt("app.py:12@foo(<|>x)")),
        ("app.py:L12", None, LocateAt("app.py:L12")),
        ("app.py@x:1:2", None, LineCol("app.py@x", 1, 2)),
    ],
)  # fmt: skip
def test_forms(at: str, symbol: str | None, parsed: object) -> None:
    assert parse_at(at, symbol) == parsed


@pytest.mark.parametrize(
    ("at", "symbol", "message"),
    [
        ("", None, "empty"),
        ("a.py:0:1", None, "1-based"),
        ("a.py:3:0", None, "1-based"),
        ("a.py:Greeter", "x", "`symbol` goes with"),
        ("a.py:3:4", "x", "either a column or `symbol`"),
    ],
)
def test_bad_forms(at: str, symbol: str | None, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_at(at, symbol)


LINE = "    self.name = name  # rename name"


@pytest.mark.parametrize(
    ("at", "index"),
    [
        (LineCol("a", 1, 5), 4),
        (LineCol("a", 1), 4),  # first non-blank
        (LineCol("a", 1, None, "name"), 9),
        (LineCol("a", 1, None, "name#2"), 16),
        (LineCol("a", 1, None, "name#3"), 31),  # whole words: never inside `rename`
        (LineCol("a", 1, None, "= name"), 14),
    ],
)
def test_column_in_line(at: LineCol, index: int) -> None:
    assert column_in_line(LINE, at) == index


def test_column_errors() -> None:
    with pytest.raises(ToolError, match="occurs 3 time"):
        column_in_line(LINE, LineCol("a", 1, None, "name#4"))
    with pytest.raises(ToolError, match="does not occur on line 1"):
        column_in_line(LINE, LineCol("a", 1, None, "nope"))
    with pytest.raises(ToolError, match="past the end of line 1"):
        column_in_line("abc", LineCol("a", 1, 9))


def test_columns_after_non_ascii_are_code_points() -> None:
    line = 'naïve = "😀"; x = 1'
    index = line.index("x")
    assert lsp_character(line, index, "utf-16") == index + 1  # the emoji is 2 UTF-16 units
    assert lsp_character(line, index, "utf-8") == index + 1 + 3
    assert lsp_character(line, index, "utf-32") == index
    for encoding in ("utf-8", "utf-16", "utf-32"):
        assert code_point_index(line, lsp_character(line, index, encoding), encoding) == index  # type: ignore[arg-type]
