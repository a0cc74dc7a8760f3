"""Marker detection: whole markers per level, the deepest level occurring once, ranges."""

from __future__ import annotations

import pytest

from lspmux.errors import InvalidParams
from lspmux.locate.markers import deepest_level, marker, split_markers, whole_markers


def test_marker_strings() -> None:
    assert marker(1) == "<|>"
    assert marker(3) == "<<<|>>>"


@pytest.mark.parametrize(
    ("pattern", "levels"),
    [
        ("a<|>b", {1: [1]}),
        ("<<|>>", {2: [0]}),  # the <|> inside <<|>> is not a level-1 marker
        ("<<|>", {}),  # unequal sides: no marker at all
        ("<|>>", {}),
        ("x <|> y <|>", {1: [2, 8]}),
        ("<|><<|>>", {1: [0], 2: [3]}),
        ("a || b < c | d > e", {}),
        ("<" * 11 + "|" + ">" * 11, {}),  # deeper than 10 levels: literal
        ("<" * 10 + "|" + ">" * 10, {10: [0]}),
    ],
)
def test_whole_markers(pattern: str, levels: dict[int, list[int]]) -> None:
    assert whole_markers(pattern) == levels


@pytest.mark.parametrize(
    ("pattern", "parts", "chosen"),
    [
        ("return <|>x", ("return ", "x"), "<|>"),
        ("no marker", ("no marker",), None),
        # level 1 occurs twice (literal), level 2 once: level 2 marks the position
        ("a <|> b <|> c <<|>>d", ("a <|> b <|> c ", "d"), "<<|>>"),
        # the deepest level that occurs exactly once wins even when a deeper one repeats
        ("<<|>> x <<|>> <|>y", ("<<|>> x <<|>> ", "y"), "<|>"),
        # every level repeats: everything is literal
        ("<|> <|>", ("<|> <|>",), None),
        ("if a <<|> b", ("if a <<|> b",), None),
    ],
)
def test_position_marker(pattern: str, parts: tuple[str, ...], chosen: str | None) -> None:
    marked = split_markers(pattern, "position")
    assert marked.parts == parts
    assert marked.marker == chosen


def test_range_uses_the_deepest_level_occurring_twice() -> None:
    assert split_markers("f(<|>a, b<|>)", "range").parts == ("f(", "a, b", ")")
    assert split_markers("<|>x<|> <<|>>y<<|>>", "range").parts == ("<|>x<|> ", "y", "")
    # only once: the position marker is cut out and the range is the whole match
    assert split_markers("f(<|>a)", "range").parts == ("f(", "a)")
    # for a position, two markers of one level are literal text
    assert split_markers("f(<|>a, b<|>)", "position").parts == ("f(<|>a, b<|>)",)


def test_lookalikes_are_reported_for_hints() -> None:
    assert split_markers("a <<|> b").lookalikes
    assert split_markers("a <|> b <|>").lookalikes
    assert not split_markers("a <|> b").lookalikes
    assert not split_markers("a || b").lookalikes


def test_explicit_marker_overrides_detection() -> None:
    marked = split_markers("x <|> y <HERE>z", "position", "<HERE>")
    assert marked.parts == ("x <|> y ", "z")
    assert split_markers("(@x@)", "range", "@").parts == ("(", "x", ")")


@pytest.mark.parametrize(
    ("pattern", "want", "explicit", "count"),
    [
        ("no marker here", "position", "<HERE>", 0),
        ("<HERE>a<HERE>", "position", "<HERE>", 2),
        ("@a@b@", "range", "@", 3),
    ],
)
def test_explicit_marker_count_errors(pattern: str, want: str, explicit: str, count: int) -> None:
    with pytest.raises(InvalidParams) as err:
        split_markers(pattern, want, explicit)  # type: ignore[arg-type]
    assert err.value.CODE == -32602
    assert err.value.data["count"] == count
    assert explicit in err.value.message


def test_deepest_level() -> None:
    assert deepest_level("plain") == 0
    assert deepest_level("a <|> b <<<|>>> c") == 3
