"""Single positions between encodings: the line table, past-the-end columns, round trips
(Hypothesis), line sources and the disk fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.encodings import TextLines, convert_character, with_disk
from lspmux.encodings.lines import Converter, full_text
from lspmux.text import ENCODINGS, Encoding
from tests.profiles import examples

LINE = 'a = "é中😀";'  # é: 2 bytes, 中: 3 bytes, 😀: 4 bytes and 2 UTF-16 units


def col(line: str, index: int, encoding: Encoding) -> int:
    """The column of code point `index`, computed by Python's codecs (not by lspmux)."""
    prefix = line[:index]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)


@pytest.mark.parametrize("index", range(len(LINE) + 1))
@pytest.mark.parametrize("src", ENCODINGS)
@pytest.mark.parametrize("dst", ENCODINGS)
def test_every_column_of_a_mixed_line(index: int, src: Encoding, dst: Encoding) -> None:
    assert convert_character(LINE, col(LINE, index, src), src, dst) == col(LINE, index, dst)


@pytest.mark.parametrize(
    ("src", "character", "dst", "expected"),
    [
        ("utf-8", 6, "utf-16", 6),  # inside é (bytes 5-6): moves to its end
        ("utf-8", 9, "utf-16", 7),  # inside 中
        ("utf-16", 8, "utf-8", 14),  # between the two halves of 😀: to its end
        ("utf-8", 16 + 3, "utf-16", 11 + 3),  # past the end of the line: stays past it
        ("utf-32", 10 + 5, "utf-8", 16 + 5),
    ],
)
def test_columns_off_character_boundaries(
    src: Encoding, character: int, dst: Encoding, expected: int
) -> None:
    assert convert_character(LINE, character, src, dst) == expected


CHARS = st.sampled_from(["a", " ", "é", "ß", "中", "€", "😀", "\U0001d518", "\t"])


@settings(max_examples=examples(300))
@given(
    line=st.lists(CHARS, max_size=30).map("".join),
    data=st.data(),
    a=st.sampled_from(ENCODINGS),
    b=st.sampled_from(ENCODINGS),
)
def test_round_trip_is_identity_on_boundaries(
    line: str, data: st.DataObject, a: Encoding, b: Encoding
) -> None:
    index = data.draw(st.integers(0, len(line)))
    start = col(line, index, a)
    there = convert_character(line, start, a, b)
    assert there == col(line, index, b)
    assert convert_character(line, there, b, a) == start


@settings(max_examples=examples(100))
@given(
    lines=st.lists(st.lists(CHARS, max_size=12).map("".join), min_size=1, max_size=6),
    eol=st.sampled_from(["\n", "\r\n", "\r"]),
    data=st.data(),
)
def test_converter_finds_the_right_line(lines: list[str], eol: str, data: st.DataObject) -> None:
    text = eol.join(lines)
    n = data.draw(st.integers(0, len(lines) - 1))
    index = data.draw(st.integers(0, len(lines[n])))
    c = Converter("utf-8", "utf-16", lambda uri: text)
    pos = {"line": n, "character": col(lines[n], index, "utf-8")}
    assert c.position(pos, "file:///x") == {"line": n, "character": col(lines[n], index, "utf-16")}


class Rope:
    """A document kept as lines (no `text`): the converter takes any `line(n)` object."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.asked: list[int] = []

    def line(self, n: int) -> str | None:
        self.asked.append(n)
        return self.lines[n] if 0 <= n < len(self.lines) else None


def test_any_object_with_line_serves_and_is_asked_only_for_lines_used() -> None:
    rope = Rope(["plain", LINE])
    c = Converter("utf-16", "utf-8", lambda uri: rope)
    assert c.position({"line": 1, "character": 9}, "file:///r") == {"line": 1, "character": 14}
    assert rope.asked == [1]
    assert full_text(rope) == "plain\n" + LINE


def test_text_lines() -> None:
    lines = TextLines("a\r\nb\rc\n")
    assert [lines.line(i) for i in range(5)] == ["a", "b", "c", "", None]


def test_unknown_documents_and_odd_values_pass_unchanged(caplog: pytest.LogCaptureFixture) -> None:
    c = Converter("utf-8", "utf-16", lambda uri: None)
    pos = {"line": 0, "character": 12}
    assert c.position(pos, "file:///gone") is pos
    assert c.position(pos, "file:///gone") is pos
    assert [r.getMessage() for r in caplog.records].count(
        "positions in file:///gone left in utf-8 (not converted to utf-16): its text is not known"
    ) == 1  # logged once per document
    known = Converter("utf-8", "utf-16", lambda uri: LINE)
    assert known.position({"line": 5, "character": 12}, "u") == {"line": 5, "character": 12}
    assert known.position({"line": "0"}, "u") == {"line": "0"}
    assert known.position(None, "u") is None


def test_disk_fallback(tmp_path: Path) -> None:
    f = tmp_path / "a b.c"
    f.write_text(LINE, encoding="utf-8")
    source = with_disk(lambda uri: "open text" if uri == "file:///open" else None)
    assert source("file:///open") == "open text"
    assert source(f.as_uri()) == LINE
    assert source((tmp_path / "missing.c").as_uri()) is None
    assert source("untitled:1") is None


def test_a_session_document_serves_with_its_cached_line_starts() -> None:
    from lspmux.session.documents import Documents

    docs = Documents("utf-16")
    doc = docs.open("file:///d.c", "c", 1, "int x;\n" + LINE)
    starts = doc.starts
    c = Converter("utf-16", "utf-8", with_disk(docs.get))
    assert c.position({"line": 1, "character": 9}, "file:///d.c") == {"line": 1, "character": 14}
    assert c.lines("file:///d.c")._starts is starts  # type: ignore[union-attr]
