"""Token alignment for fuzzy Locate: typos, costs, the cheapest runs, and glued words."""

from __future__ import annotations

import pytest

from lspmux.locate.align import (
    ADDED,
    CHANGE,
    MATCH,
    MISSING,
    TYPO,
    Alignment,
    Costs,
    align,
    change_cost,
    fused,
    is_typo,
    typo_limit,
)
from lspmux.locate.pattern import SOURCE_TOKEN


def toks(s: str) -> list[str]:
    return SOURCE_TOKEN.findall(s)


def costs(find: str) -> Costs:
    t = toks(find)
    return Costs(t, [x[0].isalnum() or x[0] == "_" for x in t])


def best(find: str, text: str, budget: float) -> Alignment:
    """The cheapest run, keeping the most find tokens among equally cheap ones (as a place
    is picked in fuzzy.py)."""
    return max(align(costs(find), toks(text), budget), key=lambda a: (-a.cost, a.exact()))


@pytest.mark.parametrize(
    ("a", "b", "typo"),
    [
        ("message", "mesage", True),
        ("message", "massage", True),
        ("reason", "reasn", True),
        ("count", "counts", True),
        ("Message", "message", True),
        ("int", "inta", True),  # a typo by itself; glued words are refused by `fused`
        ("ab", "ac", False),  # words under 3 characters have no typos
        ("value", "my_value", False),
        ("count", "quantity", False),
        ("identifier_name", "identifer_nme", True),
        ("same", "same", False),  # identical is a match, not a typo
    ],
)
def test_is_typo(a: str, b: str, typo: bool) -> None:
    assert is_typo(a, b) is typo


def test_typo_limit_grows_with_the_word() -> None:
    assert [typo_limit(n) for n in (1, 2, 3, 5, 6, 9, 10, 30)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_change_costs() -> None:
    assert change_cost("x", True, "x", True) == 0
    assert change_cost("message", True, "mesage", True) == 0.5
    assert change_cost("a", True, "b", True) == 1
    assert change_cost("(", False, "[", False) == 1
    assert change_cost("a", True, "(", False) == float("inf")  # a word never becomes punctuation


def test_align_finds_the_cheapest_run_anywhere() -> None:
    text = toks("x = 1; total = price * quantity + tax; y = 2")
    (al,) = align(costs("total = price * count + tax"), text, 2.0)
    assert al.cost == 1
    assert text[al.start : al.end] == toks("total = price * quantity + tax")
    kinds = [k for k, _, _ in al.ops]
    assert kinds == [MATCH] * 4 + [CHANGE] + [MATCH] * 2


def test_align_reports_missing_added_and_typos() -> None:
    al = best("f(a, c)", "f(a, b, c)", 2.0)
    assert al.cost == 2
    assert [k for k, _, _ in al.ops].count(ADDED) == 2
    al = best("f(a, b, c, d)", "f(a, b, c)", 2.0)
    assert [k for k, _, _ in al.ops].count(MISSING) == 2
    al = best("send(mesage)", "send(message)", 1.0)
    assert al.cost == 0.5 and (TYPO, 2, 2) in al.ops


def test_equal_alignments_keep_find_tokens_early() -> None:
    # `a` could be either of the two: the earlier one is matched, the added tokens come after
    al = best("foo(a, b)", "foo(a, a, b)", 2.0)
    assert (MATCH, 2, 2) in al.ops and [k for k, _, _ in al.ops][4:6] == [ADDED, ADDED]


def test_over_budget_runs_are_not_reported() -> None:
    assert align(costs("total = price * count + tax"), toks("a = b"), 2.0) == []
    assert align(costs("a b c d"), toks("a x y d"), 1.0) == []


@pytest.mark.parametrize(
    ("find", "text"),
    [
        ("int a = 1", "inta = 1"),
        ("inta = 1", "int a = 1"),
        ("x = int a", "x = inta"),
    ],
)
def test_fused_words_are_detected(find: str, text: str) -> None:
    c = costs(find)
    t = toks(text)
    found = align(c, t, 3.0)
    assert found
    assert all(fused(c.find, c.words, t, al) for al in found if al.cost > 0)


def test_separate_words_are_not_fused() -> None:
    c = costs("int a = 1")
    t = toks("int b = 1")
    (al,) = align(c, t, 1.0)
    assert not fused(c.find, c.words, t, al)
