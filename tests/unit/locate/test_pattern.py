"""The token-aware matcher: whitespace rules, atomic identifiers, boundaries, markers."""

from __future__ import annotations

import pytest

from lspmux.locate.pattern import closest_line, compile_find, search, tokenize
from lspmux.text import line_starts


def where(find: str, text: str, index: int = 0) -> tuple[int, int, int, bool] | None:
    """(position, match start, count, partial), or None when nothing matches."""
    cf = compile_find(find)
    hits = search(cf, text, 0, len(text), index)
    if hits.match is None:
        return None
    m = hits.match
    pos = m.start(1) if cf.marks else m.start()
    return pos, m.start(), hits.count, hits.partial


def at(find: str, text: str, index: int = 0) -> tuple[int, int, int, bool]:
    found = where(find, text, index)
    assert found is not None, (find, text)
    return found


def matches(find: str, text: str) -> bool:
    return where(find, text) is not None


def test_tokenize() -> None:
    assert tokenize("foo(x, y_2)") == [
        ("w", "foo"),
        ("p", "("),
        ("w", "x"),
        ("p", ","),
        ("s", " "),
        ("w", "y_2"),
        ("p", ")"),
    ]
    assert tokenize("naïve→変数") == [("w", "naïve"), ("p", "→"), ("w", "変数")]


@pytest.mark.parametrize(
    ("find", "text", "ok"),
    [
        ("int a", "int a", True),
        ("int a", "int \t\n a", True),
        ("int a", "inta", False),  # whitespace between two words needs whitespace
        ("ab", "a b", False),  # identifiers are atomic
        ("foo(x, y)", "foo( x,y )", True),
        ("foo(x, y)", "foo(\n    x,\n    y\n)", True),
        ("a + b", "a+b", True),
        ("a+b", "a  +  b", True),
        ("x->y", "x - > y", True),
        ("a.b*(c)", "a.b*(c)", True),  # regex metacharacters are literal
        ("a.b*(c)", "axb*(c)", False),
        ("a.b*(c)", "a.bbb(c)", False),
        ("[x]+", "[x]+", True),
        ("$1 \\d", "$1 \\d", True),
        ("naïve", "naïve", True),
        ("変数", "変数x", True),  # only a partial match: found, flagged below
    ],
)
def test_whitespace_and_literal_rules(find: str, text: str, ok: bool) -> None:
    assert matches(find, text) is ok


def test_tabs_and_crlf_are_whitespace() -> None:
    text = "if (ready)\t{\r\n\t\treturn  value;\r\n\t}\r\n"
    assert where("if (ready) {", text) == (0, 0, 1, False)
    pos, *_ = at("{ return <|>value", text)
    assert text[pos:].startswith("value;")


def test_multi_line_find_with_different_indentation() -> None:
    text = "class A:\n\tdef f(self):\n\t\treturn [\n\t\t\t1,\n\t\t\t2]\n"
    find = "def f(self):\n    return [1,\n  <|>2]"
    pos, start, count, partial = at(find, text)
    assert text[start:].startswith("def f")
    assert text[pos] == "2" and (count, partial) == (1, False)


@pytest.mark.parametrize(
    ("find", "text", "rest"),
    [
        ("return <|>result", "return   result", "result"),
        ("a+<|>b", "a + b", "b"),
        ("obj.<|>", "x = obj .  attr", "  attr"),  # right after the dot
        ("foo(<|> x)", "foo(   x)", "   x)"),  # right after the parenthesis
        ("<|>foo(x)", "y = foo(x)", "foo(x)"),
        ("foo <|>bar", "foo\n  bar", "bar"),
        ("foo<|> bar", "foo   bar", "   bar"),  # whitespace follows: end of the token before
        ("hel<|>lo", "say hello", "lo"),  # a marker inside a word splits it, the word stays atomic
    ],
)
def test_marker_sticks_to_a_token(find: str, text: str, rest: str) -> None:
    pos, *_ = at(find, text)
    assert text[pos:] == rest


def test_word_boundaries_then_partial_matches() -> None:
    text = "my_value = 1\nvalue = my_value\n"
    pos, _, count, partial = at("value", text)
    assert (pos, count, partial) == (13, 1, False)  # never inside my_value while `value` exists
    pos, _, count, partial = at("value", "my_value = other_value")
    assert (pos, count, partial) == (3, 2, True)
    assert at("value", "values")[3] is True
    # only word tokens at the ends need a boundary
    assert at("(value", "f(value)")[:3] == (1, 1, 1)


def test_counts_and_find_index_in_document_order() -> None:
    text = "x = 1; x = 2; x = 3"
    assert at("x =", text, 2)[0] == 14
    assert where("x =", text, 3) is None
    assert at("x =", text)[2] == 3
    # matches are counted at every start, overlapping ones included
    assert at("a a", "a a a")[2] == 2
    assert at("a <|>a", "a a a", 1)[0] == 4


def test_search_stays_inside_the_scope() -> None:
    text = "foo() foo() foo()"
    cf = compile_find("foo()")
    hits = search(cf, text, 6, 11)
    assert hits.count == 1 and hits.match is not None and hits.match.start() == 6
    assert search(cf, text, 6, 10).count == 0  # the match must end inside the scope


def test_ranges_hug_the_tokens_between_the_markers() -> None:
    cf = compile_find("foo(<|> a, b <|>)", None, "range")
    m = search(cf, "foo( a ,  b )", 0, 13).match
    assert m is not None and (m.start(1), m.end(2)) == (5, 11)


def test_compiled_patterns_are_cached() -> None:
    assert compile_find("cache <|>me") is compile_find("cache <|>me")


def test_marker_only_find_has_no_regex() -> None:
    cf = compile_find("  <|>  ")
    assert cf.strict is None and cf.marks == 1
    with pytest.raises(ValueError):
        search(cf, "x", 0, 1)


def test_closest_line() -> None:
    text = "def f():\n    retrun  message\n    pass\n"
    cf = compile_find("return <|>message")
    assert closest_line(cf, text, line_starts(text), 0, len(text)) == 1
    big = (
        "".join(f"line_{i} = compute({i})\n" for i in range(5000))
        + "    result = compute_total(x)\n"
    )
    cf = compile_find("result = compute_totals(x)")
    assert closest_line(cf, big, line_starts(big), 0, len(big)) == 5000
