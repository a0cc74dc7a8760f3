"""Positions in text: offsets ↔ LSP positions in utf-8/16/32, line breaks, clamping, edits."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.text import (
    ENCODINGS,
    Encoding,
    apply_change,
    apply_changes,
    line_end,
    line_starts,
    offset_to_position,
    position_to_offset,
    to_position,
    to_range,
    units,
)

# A line with characters of every UTF-8 length and an astral one (2 UTF-16 units).
LINE = "aé中😀b"  # utf-8: 1+2+3+4+1, utf-16: 1+1+1+2+1, utf-32: 5


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("", [0]),
        ("abc", [0]),
        ("a\nb", [0, 2]),
        ("a\r\nb", [0, 3]),
        ("a\rb", [0, 2]),
        ("a\n", [0, 2]),
        ("\n\n", [0, 1, 2]),
        ("\r\n\r\n", [0, 2, 4]),
        ("\r\r\n\n", [0, 1, 3, 4]),
        ("x\u2028y", [0]),  # only \n, \r\n and \r end lines in LSP
    ],
)
def test_line_starts(text: str, starts: list[int]) -> None:
    assert line_starts(text) == starts


@pytest.mark.parametrize(
    ("text", "ends"),
    [("a\r\nbc\rd\ne", [1, 5, 7, 9]), ("ab", [2]), ("a\n", [1, 2]), ("\r\n", [0, 2])],
)
def test_line_end(text: str, ends: list[int]) -> None:
    starts = line_starts(text)
    assert [line_end(text, starts, i) for i in range(len(starts))] == ends


@pytest.mark.parametrize(
    ("encoding", "lengths"),
    [
        ("utf-8", [0, 1, 3, 6, 10, 11]),
        ("utf-16", [0, 1, 2, 3, 5, 6]),
        ("utf-32", [0, 1, 2, 3, 4, 5]),
    ],
)
def test_units_and_positions_on_one_line(encoding: Encoding, lengths: list[int]) -> None:
    starts = line_starts(LINE)
    for offset, character in enumerate(lengths):
        assert units(LINE[:offset], encoding) == character
        assert offset_to_position(LINE, starts, offset, encoding) == (0, character)
        assert position_to_offset(LINE, starts, 0, character, encoding) == offset


@pytest.mark.parametrize(
    ("encoding", "character", "offset"),
    [
        ("utf-16", 4, 4),  # the middle of 😀's surrogate pair → after 😀
        ("utf-8", 2, 2),  # inside é → after é
        ("utf-8", 4, 3),  # inside 中 → after 中
        ("utf-8", 5, 3),
        ("utf-8", 7, 4),  # inside 😀 → after 😀
        ("utf-8", 8, 4),
        ("utf-8", 9, 4),
    ],
)
def test_a_position_inside_a_character_moves_to_its_end(
    encoding: Encoding, character: int, offset: int
) -> None:
    assert position_to_offset(LINE, line_starts(LINE), 0, character, encoding) == offset


TEXT = "first é\r\nsecond 😀 x\rthird\n\nlast"


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize(
    ("line", "character", "expected"),
    [
        (0, 0, 0),
        (0, 999, 7),  # past the end of the line → end of the line, before \r\n
        (1, 0, 9),
        (1, 999, 19),  # before the lone \r
        (2, 0, 20),
        (2, 999, 25),
        (3, 0, 26),  # an empty line
        (3, 5, 26),
        (4, 4, 31),
        (4, 999, 31),
        (5, 0, 31),  # a line past the end → end of the text
        (99, 3, 31),
        (-1, 3, 0),
        (1, -4, 9),
    ],
)
def test_clamping_and_line_breaks(
    encoding: Encoding, line: int, character: int, expected: int
) -> None:
    assert position_to_offset(TEXT, line_starts(TEXT), line, character, encoding) == expected


@pytest.mark.parametrize(
    ("offset", "expected"),
    [(-5, (0, 0)), (0, (0, 0)), (7, (0, 7)), (9, (1, 0)), (31, (4, 4)), (1000, (4, 4))],
)
def test_offset_to_position_clamps(offset: int, expected: tuple[int, int]) -> None:
    assert offset_to_position(TEXT, line_starts(TEXT), offset, "utf-16") == expected


def test_to_position_and_to_range() -> None:
    starts = line_starts(TEXT)
    at = TEXT.index("x")
    assert to_position(TEXT, starts, at) == {"line": 1, "character": 10}
    assert to_position(TEXT, starts, at, "utf-8") == {"line": 1, "character": 12}
    assert to_position(TEXT, starts, at, "utf-32") == {"line": 1, "character": 9}
    assert to_range(TEXT, starts, 0, at) == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 1, "character": 10},
    }


# -- edits --------------------------------------------------------------------------------------


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, Any]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


@pytest.mark.parametrize(
    ("text", "change", "encoding", "expected"),
    [
        ("abc", {"text": "new"}, "utf-16", "new"),
        ("abc", {"range": rng(0, 1, 0, 2), "text": "X"}, "utf-16", "aXc"),
        ("a😀b", {"range": rng(0, 1, 0, 3), "text": ""}, "utf-16", "ab"),
        ("a😀b", {"range": rng(0, 1, 0, 5), "text": ""}, "utf-8", "ab"),
        ("a😀b", {"range": rng(0, 1, 0, 2), "text": ""}, "utf-32", "ab"),
        ("a\r\nb", {"range": rng(0, 1, 1, 0), "text": ""}, "utf-16", "ab"),
        ("a\r\nb", {"range": rng(0, 9, 0, 9), "text": "!"}, "utf-16", "a!\r\nb"),
        ("a\rb", {"range": rng(1, 0, 1, 1), "text": "c"}, "utf-16", "a\rc"),
        ("ab", {"range": rng(0, 2, 0, 1), "text": "X"}, "utf-16", "aX"),  # reversed range
        ("ab", {"range": rng(5, 0, 6, 0), "text": "\nc"}, "utf-16", "ab\nc"),  # past the end
        ("", {"range": rng(0, 0, 0, 0), "text": "hello"}, "utf-16", "hello"),
        ("a\nb", {"range": rng(0, 1, 0, 1), "rangeLength": 0, "text": "\r"}, "utf-16", "a\r\nb"),
    ],
)
def test_apply_change(text: str, change: dict[str, Any], encoding: Encoding, expected: str) -> None:
    assert apply_change(text, change, encoding) == expected


def test_apply_changes_in_order() -> None:
    changes: list[dict[str, Any]] = [
        {"range": rng(0, 0, 0, 0), "text": "😀"},
        {"range": rng(0, 2, 0, 2), "text": "x"},  # after the 😀 just inserted (2 units)
        {"text": "reset\n"},
        {"range": rng(1, 0, 1, 0), "text": "end"},
    ]
    assert apply_changes("abc", changes) == "reset\nend"
    assert apply_changes("abc", changes[:2]) == "😀xabc"


# -- properties ----------------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|\r|\n")


def ref_position(text: str, offset: int, encoding: Encoding) -> tuple[int, int]:
    """An independent model: count line breaks before the offset, measure the rest by encoding
    it (UTF-16 units from the encoded byte length)."""
    prefix = text[:offset]
    parts = _BREAK.split(prefix)
    last = parts[-1]
    if encoding == "utf-8":
        n = len(last.encode("utf-8"))
    elif encoding == "utf-16":
        n = len(last.encode("utf-16-le")) // 2
    else:
        n = len(last)
    return len(parts) - 1, n


def valid_offset(text: str, offset: int) -> int:
    """Offsets between \\r and \\n have no LSP position; move them past the \\n."""
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return offset + 1
    return offset


alphabet = st.sampled_from(["a", "b", " ", "é", "中", "😀", "𝄞", "\n", "\r", "\r\n", "\t"])
texts = st.lists(alphabet, max_size=40).map("".join)


@given(text=texts, encoding=st.sampled_from(ENCODINGS))
def test_every_offset_round_trips(text: str, encoding: Encoding) -> None:
    starts = line_starts(text)
    for offset in range(len(text) + 1):
        offset = valid_offset(text, offset)
        pos = offset_to_position(text, starts, offset, encoding)
        assert pos == ref_position(text, offset, encoding)
        assert position_to_offset(text, starts, *pos, encoding) == offset


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]], list[str]]:
    """A text and edits on the successive texts, as offsets; the successive texts."""
    text = draw(texts)
    edits = []
    states = []
    current = text
    for _ in range(draw(st.integers(1, 12))):
        a = valid_offset(current, draw(st.integers(0, len(current))))
        b = valid_offset(current, draw(st.integers(0, len(current))))
        a, b = min(a, b), max(a, b)
        new = draw(texts.filter(lambda s: len(s) < 10))
        edits.append((a, b, new))
        current = current[:a] + new + current[b:]
        states.append(current)
    return text, edits, states


@settings(max_examples=150, deadline=None)
@given(seq=edit_sequences(), encoding=st.sampled_from(ENCODINGS))
def test_incremental_edits_match_string_edits(
    seq: tuple[str, list[tuple[int, int, str]], list[str]], encoding: Encoding
) -> None:
    text, edits, states = seq
    current = text
    for (a, b, new), expected in zip(edits, states, strict=True):
        (sl, sc), (el, ec) = ref_position(current, a, encoding), ref_position(current, b, encoding)
        change = {"range": rng(sl, sc, el, ec), "text": new}
        current = apply_change(current, change, encoding)
        assert current == expected
