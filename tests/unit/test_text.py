"""Positions in text: offsets ↔ LSP positions in utf-8/16/32, line breaks, clamping, edits."""

from __future__ import annotations

import itertools
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
from lspmux.text_chunks import ChunkedText, Fenwick, breaks, split_lines
from tests.profiles import examples

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


@settings(max_examples=examples(150), deadline=None)
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


# -- ChunkedText: the same answers as the functions above on a plain str ------------------------

chunk_sizes = st.integers(1, 6).map(lambda t: {"target": t, "max_size": 2 * t + 1, "min_size": 1})


def check_invariants(ct: ChunkedText) -> None:
    """Every chunk but the last ends after a line break; no "\\r\\n" is cut in two."""
    chunks = ct._chunks or []
    for chunk in chunks[:-1]:
        assert chunk.endswith(("\n", "\r")), chunks
    for left, right in itertools.pairwise(chunks):
        assert not (left.endswith("\r") and right.startswith("\n")), chunks


@settings(max_examples=examples(200), deadline=None)
@given(seq=edit_sequences(), encoding=st.sampled_from(ENCODINGS), sizes=chunk_sizes)
def test_chunked_text_matches_string_edits(
    seq: tuple[str, list[tuple[int, int, str]], list[str]],
    encoding: Encoding,
    sizes: dict[str, int],
) -> None:
    text, edits, states = seq
    ct = ChunkedText(text, **sizes)
    current = text
    for (a, b, new), expected in zip(edits, states, strict=True):
        (sl, sc), (el, ec) = ref_position(current, a, encoding), ref_position(current, b, encoding)
        ct.apply({"range": rng(sl, sc, el, ec), "text": new}, encoding)
        current = expected
        check_invariants(ct)
        assert len(ct) == len(current)
        starts = line_starts(current)
        assert ct.line_count() == len(starts)
        for offset in range(len(current) + 1):
            assert ct.position_at(offset, encoding) == offset_to_position(
                current, starts, offset, encoding
            )
        for line in range(-1, len(starts) + 1):
            for character in (0, 1, 3, 100):
                assert ct.offset_at(line, character, encoding) == position_to_offset(
                    current, starts, line, character, encoding
                )
        assert ct.text() == current


@settings(max_examples=examples(200), deadline=None)
@given(
    text=texts,
    changes=st.lists(
        st.tuples(st.integers(-1, 12), st.integers(-1, 30), st.integers(-1, 12), texts),
        min_size=1,
        max_size=10,
    ),
    encoding=st.sampled_from(ENCODINGS),
    sizes=chunk_sizes,
)
def test_chunked_text_applies_any_range_like_apply_change(
    text: str,
    changes: list[tuple[int, int, int, str]],
    encoding: Encoding,
    sizes: dict[str, int],
) -> None:
    """Ranges as clients send them, also reversed, past the end of a line or of the text, or
    inside a character: clamped exactly as `apply_change` clamps them."""
    ct = ChunkedText(text, **sizes)
    for line, character, span, new in changes:
        end_line = line + (span % 3 if span >= 0 else -1)
        change = {"range": rng(line, character, end_line, character + span), "text": new}
        text = apply_change(text, change, encoding)
        ct.apply(change, encoding)
        check_invariants(ct)
        assert ct.text() == text


def test_chunked_text_full_change_and_lines() -> None:
    ct = ChunkedText("a\r\nb\rc\nd", target=1, max_size=3, min_size=1)
    assert [ct.line(i) for i in range(-1, 5)] == [None, "a", "b", "c", "d", None]
    ct.apply({"range": rng(1, 1, 1, 1), "text": "\n"}, "utf-16")  # "\r" + "\n" became one break
    assert ct.text() == "a\r\nb\n\rc\nd" and ct.line_count() == 5
    ct.apply({"text": "new\ntext"})
    assert (ct.text(), ct.line_count(), ct.line(1)) == ("new\ntext", 2, "text")
    with pytest.raises(ValueError, match="chunk sizes"):
        ChunkedText("", target=4, max_size=4)


def test_a_text_never_edited_is_kept_as_given() -> None:
    text = "x\n" * 5000
    ct = ChunkedText(text)
    assert ct.text() is text and ct.chunk_count == 0  # not cut into chunks until edited
    ct.apply({"range": rng(10, 0, 10, 1), "text": "y"})
    assert ct.chunk_count > 1 and ct.text() == "x\n" * 10 + "y\n" + "x\n" * 4989


def test_an_edit_rewrites_only_its_chunk() -> None:
    """A one-character edit in a large text replaces one chunk and leaves the others (the same
    objects), so its cost does not grow with the text."""
    ct = ChunkedText("".join(f"line {i}\n" for i in range(100_000)))
    ct.apply({"range": rng(50_000, 0, 50_000, 0), "text": "#"})
    before = list(ct._chunks or [])
    ct.apply({"range": rng(70_000, 4, 70_000, 5), "text": "_"})
    after = ct._chunks or []
    changed = [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x is not y]
    assert len(changed) == 1
    assert ct.line(70_000) == "line_70000" and ct.line(50_000) == "#line 50000"


@given(st.lists(st.integers(0, 50), max_size=40), st.data())
def test_fenwick_prefix_sums_and_search(values: list[int], data: st.DataObject) -> None:
    fen = Fenwick(list(values))
    for _ in range(5):
        if values:
            i = data.draw(st.integers(0, len(values) - 1))
            delta = data.draw(st.integers(-values[i], 20))
            values[i] += delta
            fen.add(i, delta)
        prefix = [sum(values[:i]) for i in range(len(values) + 1)]
        assert [fen.prefix(i) for i in range(len(values) + 1)] == prefix
        for target in range(prefix[-1] + 2):
            i = next((k for k in range(len(values)) if prefix[k + 1] > target), len(values))
            assert fen.find(target) == (i, prefix[i])


@pytest.mark.parametrize(
    ("text", "chunks"),
    [
        ("", [""]),
        ("ab\ncd\nef", ["ab\n", "cd\n", "ef"]),
        ("a\r\nb\r\nc", ["a\r\n", "b\r\n", "c"]),  # never between "\r" and "\n"
        ("abcdefgh\nx", ["abcdefgh\n", "x"]),  # a long line is one chunk
        ("a\rb\rc\r", ["a\r", "b\r", "c\r"]),
    ],
)
def test_split_lines(text: str, chunks: list[str]) -> None:
    assert split_lines(text, target=1, max_size=2) == chunks
    assert breaks(text) == len(line_starts(text)) - 1
