"""The helpers every linter parser shares: positions, paths, severities, errors."""

from __future__ import annotations

import pytest

from lspmux.diagnostics.linters import (
    LinterOutputError,
    Positions,
    get_path,
    same_file,
    severity_of,
)

TEXT = "a = 1\n\tvar é😀 = x;\r\n  indented line  \n"


def test_positions_convert_code_points_bytes_and_units_to_utf16() -> None:
    pos = Positions(TEXT)
    # Line 1: "\tvar é😀 = x;" — "x" is code point 10, UTF-16 unit 11, UTF-8 byte 14.
    x = pos.offset(1, 10, "utf-32")
    assert TEXT[x] == "x"
    assert pos.offset(1, 11, "utf-16") == x
    assert pos.offset(1, 14, "utf-8") == x
    assert pos.range(x, x + 1) == {
        "start": {"line": 1, "character": 11},
        "end": {"line": 1, "character": 12},
    }
    assert Positions(TEXT, "utf-8").range(x, x)["start"] == {"line": 1, "character": 14}
    assert TEXT[pos.offset_of_byte(len("a = 1\n\tvar é😀 = ".encode()))] == "x"


def test_positions_word_line_and_clamping() -> None:
    pos = Positions(TEXT)
    var = pos.offset(1, 1)
    assert TEXT[var : pos.word_end(var)] == "var"
    semicolon = TEXT.index(";")
    assert pos.word_end(semicolon) == semicolon + 1  # not a word: one character
    assert pos.whole_line(2) == {
        "start": {"line": 2, "character": 2},
        "end": {"line": 2, "character": 17},  # to the end, trailing blanks included
    }
    # Past the end of a line or of the text: clamped, never an invalid range.
    assert pos.span(0, 99) == {
        "start": {"line": 0, "character": 5},
        "end": {"line": 0, "character": 5},
    }
    assert pos.span(99, 0)["start"]["line"] == 3
    assert pos.span(1, None) == {
        "start": {"line": 1, "character": 1},
        "end": {"line": 1, "character": 13},
    }


@pytest.mark.parametrize(
    ("reported", "path", "same"),
    [
        ("test.js", "/home/dev/project/test.js", True),
        ("src/test.js", "/home/dev/project/src/test.js", True),
        ("./src/test.js", "/home/dev/project/src/test.js", True),
        ("other/test.js", "/home/dev/project/src/test.js", False),
        ("est.js", "/home/dev/project/test.js", False),
        ("/home/dev/project/test.js", "/home/dev/project/test.js", True),
        ("/home/dev/project/../project/test.js", "/home/dev/project/test.js", True),
        ("/elsewhere/test.js", "/home/dev/project/test.js", False),
        ("../project/test.js", "/home/dev/project/test.js", True),
        ("file:///home/dev/project/t%20x.js", "/home/dev/project/t x.js", True),
        (None, "/p/x.sh", True),
        ("-", "/p/x.sh", True),
        ("<stdin>", "/p/x.sh", True),
    ],
)
def test_same_file(reported: str | None, path: str, same: bool) -> None:
    assert same_file(reported, path) is same


@pytest.mark.parametrize(
    ("value", "mapping", "expected"),
    [
        ("error", None, 1),
        ("Error", None, 1),
        ("fatal", None, 1),
        ("warning", None, 2),
        ("warn", None, 2),
        ("info", None, 3),
        ("information", None, 3),
        ("note", None, 3),
        ("hint", None, 4),
        ("style", None, 4),
        ("convention", {"convention": "hint"}, 4),
        ("C", {"c": "information"}, 3),
        ("weird", None, 2),
        (3, None, 3),
        (9, None, 2),
        (None, None, 2),
    ],
)
def test_severity_of(value: object, mapping: dict[str, str] | None, expected: int) -> None:
    assert severity_of(value, mapping) == expected


def test_get_path() -> None:
    item = {"a": {"b": [{"c": 1}, {"c": 2}]}, "line": 3}
    assert get_path(item, "a.b.1.c") == 2
    assert get_path(item, "line") == 3
    assert get_path(item, "a.x") is None
    assert get_path(item, "a.b.9.c") is None
    assert get_path(item, "") is item


def test_output_error_names_tool_and_quotes_output() -> None:
    err = LinterOutputError("stdout is not JSON", tool="biome", output="Segmentation fault\n" * 50)
    assert str(err).startswith("biome: stdout is not JSON (output began: 'Segmentation fault")
    assert len(err.excerpt) <= 200
    assert "was empty" in str(LinterOutputError("x", tool="t", output=""))
