"""The string form `<file>[:<scope>][@<find>]`: parsing, ambiguity, errors, formatting."""

from __future__ import annotations

import pytest

from lspmux.errors import InvalidParams
from lspmux.locate.spec import DEFAULT_THRESHOLD, Scope, Spec, Target
from lspmux.locate.syntax import format_locate, parse_locate


def _t(file: str, scope: Scope | None = None, find: str | None = None) -> Target:
    return Target(Spec(scope or Scope(), find), file_path=file)


def _fz(file: str, scope: Scope, find: str) -> Target:
    return Target(Spec(scope, find, fuzzy=DEFAULT_THRESHOLD), file_path=file)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "foo.py:MyClass.method@return <|>x",
            _t("foo.py", Scope.symbol("MyClass", "method"), "return <|>x"),
        ),
        ("foo.py:42@x = 1", _t("foo.py", Scope.line_range(42), "x = 1")),
        ("foo.py:10,20@x", _t("foo.py", Scope.line_range(10, 20), "x")),
        ("foo.py:10-20@x", _t("foo.py", Scope.line_range(10, 20), "x")),
        ("foo.py:L42", _t("foo.py", Scope.line_range(42))),
        ("foo.py:L10-20", _t("foo.py", Scope.line_range(10, 20))),
        ("foo.py@self.<|>", _t("foo.py", find="self.<|>")),
        ("foo.py:MyClass", _t("foo.py", Scope.symbol("MyClass"))),
        # everything after the first @ is the find, @ and : included
        ("foo.py@@property", _t("foo.py", find="@property")),
        ("foo.py@'k': <|>1", _t("foo.py", find="'k': <|>1")),
        ("foo.py:Cls@a @ b: c", _t("foo.py", Scope.symbol("Cls"), "a @ b: c")),
        ("src/app.ts:Greeter.greet", _t("src/app.ts", Scope.symbol("Greeter", "greet"))),
        ("  foo.py:3  ", _t("foo.py", Scope.line_range(3))),
        # `L` alone or followed by a letter is a symbol name
        ("foo.py:Loader", _t("foo.py", Scope.symbol("Loader"))),
        # `~@` makes the find fuzzy, after a file, a symbol or a line scope
        ("foo.py~@return <|>mesage", _fz("foo.py", Scope(), "return <|>mesage")),
        ("foo.py:A.f~@x = 1", _fz("foo.py", Scope.symbol("A", "f"), "x = 1")),
        ("foo.py:10-20~@x", _fz("foo.py", Scope.line_range(10, 20), "x")),
        # `~` right after `@` belongs to the find (a destructor, a bitwise not)
        ("foo.cpp@~Foo()", _t("foo.cpp", find="~Foo()")),
        ("foo.py~@~x", _fz("foo.py", Scope(), "~x")),
    ],
)
def test_parse(text: str, expected: Target) -> None:
    assert parse_locate(text) == expected


def test_a_file_ending_in_tilde_is_read_when_only_it_exists() -> None:
    # an editor's backup file `foo.py~`: the literal reading wins when only it exists
    assert parse_locate("foo.py~@x", {"foo.py~"}.__contains__) == _t("foo.py~", find="x")
    assert parse_locate("foo.py~@x", {"foo.py", "foo.py~"}.__contains__) == _fz(
        "foo.py", Scope(), "x"
    )


def test_path_with_at_sign_prefers_the_file_that_exists() -> None:
    text = "web/@types/index.d.ts@declare <|>const"
    exists = {"web/@types/index.d.ts"}.__contains__
    assert parse_locate(text, exists) == _t("web/@types/index.d.ts", find="declare <|>const")
    # a directory-looking prefix is never a file, even when nothing exists
    assert parse_locate(text).file_path == "web/@types/index.d.ts"


def test_path_with_colon_prefers_the_file_that_exists() -> None:
    assert parse_locate("a:b.py:Cls@x", {"a:b.py"}.__contains__) == _t(
        "a:b.py", Scope.symbol("Cls"), "x"
    )
    assert parse_locate("a:b.py:Cls@x", {"a"}.__contains__) == _t(
        "a", Scope.symbol("b", "py:Cls"), "x"
    )
    # a scope cannot contain a path separator, so `dir:x/` is part of the file
    assert parse_locate("dir:x/foo.py:3@y") == _t("dir:x/foo.py", Scope.line_range(3), "y")


def test_the_shortest_existing_reading_wins() -> None:
    both = {"foo.py", "foo.py@x"}.__contains__
    assert parse_locate("foo.py@x", both) == _t("foo.py", find="x")
    only_long = {"foo.py@x"}.__contains__
    with pytest.raises(InvalidParams):  # the file foo.py@x alone: nothing to locate
        parse_locate("foo.py@x", only_long)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty locate string"),
        ("foo.py", "nothing to locate"),
        ("foo.py:0@x", "1-based"),
        ("foo.py:20-10", "reversed"),
        ("foo.py:10-@x", "bad line scope"),
        ("foo.py:1-2-3", "bad line scope"),
        ("foo.py:A..b", "bad symbol path"),
        ("foo.py@", "empty find"),
        ("foo.py:Cls@   ", "empty find"),
    ],
)
def test_syntax_errors_are_invalid_params_with_the_syntax(text: str, problem: str) -> None:
    with pytest.raises(InvalidParams) as err:
        parse_locate(text, lambda p: p == "foo.py")
    assert err.value.CODE == -32602
    assert problem in err.value.message
    assert "<file>[:<scope>][@<find>]" in err.value.message  # the accepted syntax


@pytest.mark.parametrize(
    "spec",
    [
        Spec(Scope.symbol("Greeter", "greet"), "return <|>message"),
        Spec(Scope.line_range(3), "x"),
        Spec(Scope.line_range(3, 9)),
        Spec(Scope(), "a@b: <|>c"),
        Spec(Scope.symbol("Loader")),
        Spec(Scope.symbol("A", "f"), "return <|>mesage", fuzzy=DEFAULT_THRESHOLD),
        Spec(Scope.line_range(3, 4), "x", fuzzy=DEFAULT_THRESHOLD),
    ],
)
def test_format_round_trips(spec: Spec) -> None:
    text = format_locate("pkg/mod.py", spec)
    assert text is not None
    assert parse_locate(text, {"pkg/mod.py"}.__contains__) == Target(spec, file_path="pkg/mod.py")


@pytest.mark.parametrize(
    "spec",
    [
        Spec(Scope(), "x", find_index=1),
        Spec(Scope(), "x <HERE>y", marker="<HERE>"),
        Spec(Scope.symbol("a.b", "c")),  # a dot inside a name
        Spec(Scope.symbol("12")),  # would read as a line scope
        Spec(Scope.symbol("L1")),
        Spec(Scope(), " x"),
        Spec(Scope(), "x", fuzzy=0.8),  # only the default threshold has a string spelling
    ],
)
def test_format_refuses_what_the_string_form_cannot_say(spec: Spec) -> None:
    assert format_locate("f.py", spec) is None
