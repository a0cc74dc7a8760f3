"""resolve_spec: scopes, natural positions, finds, encodings, ranges, and every error."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.errors import InvalidParams, RequestFailed
from lspmux.locate.engine import resolve_spec, starts_of
from lspmux.locate.markers import Want
from lspmux.locate.spec import Scope, Spec
from lspmux.text import Encoding, line_starts

from .helpers import flatten, python_symbols, sym

APP = '''"""Greeters."""

import functools


class Greeter:
    def __init__(self, name):
        self.name = name

    @functools.cache
    def greet(self, message):
        return message + self.name


class Shouter(Greeter):
    def greet(self, message):
        return message.upper()
'''
SYMS = python_symbols(APP)


def lsp(
    spec: Spec | dict[str, Any],
    text: str = APP,
    symbols: Any = SYMS,
    encoding: Encoding = "utf-16",
    want: Want = "position",
) -> dict[str, Any]:
    res = resolve_spec(text, None, symbols, spec, encoding, want=want)
    return res.to_lsp(text, line_starts(text), encoding)


def test_the_issue_example() -> None:
    out = lsp(Spec(Scope.symbol("Greeter", "greet"), "return <|>message"))
    assert out["position"] == {"line": 11, "character": 15}
    assert out["match"] == {
        "range": {"start": {"line": 11, "character": 8}, "end": {"line": 11, "character": 22}},
        "text": "return message",
        "count": 1,
        "partial": False,
    }
    assert out["scope"]["kind"] == "symbol"
    assert out["scope"]["symbol_path"] == ["Greeter", "greet"]
    assert out["scope"]["range"]["start"] == {"line": 9, "character": 4}  # the decorator


def test_two_same_named_methods_in_different_classes() -> None:
    a = lsp(Spec(Scope.symbol("Greeter", "greet"), "<|>message"))
    b = lsp(Spec(Scope.symbol("Shouter", "greet"), "<|>message"))
    assert a["position"] == {"line": 10, "character": 20}
    assert b["position"] == {"line": 15, "character": 20}


def test_natural_positions() -> None:
    # a decorated function: the start of its name, not of the decorator
    assert lsp(Spec(Scope.symbol("Greeter", "greet")))["position"] == {"line": 10, "character": 8}
    assert lsp(Spec(Scope.symbol("Shouter")))["position"] == {"line": 14, "character": 6}
    # a line scope: the first non-blank character of the first line that has one
    assert lsp(Spec(Scope.line_range(7)))["position"] == {"line": 6, "character": 4}
    assert lsp(Spec(Scope.line_range(9, 12)))["position"] == {"line": 9, "character": 4}
    # a find that is only a marker: the start of the scope
    assert lsp(Spec(Scope.symbol("Shouter", "greet"), "<|>"))["position"] == {
        "line": 15,
        "character": 4,
    }
    assert lsp(Spec(Scope.line_range(2), "<|>"))["position"] == {"line": 1, "character": 0}


def test_scope_kinds_in_results() -> None:
    assert lsp(Spec(Scope.line_range(7, 8)))["scope"] == {
        "kind": "lines",
        "lines": [7, 8],
        "range": {"start": {"line": 6, "character": 0}, "end": {"line": 7, "character": 24}},
    }
    out = lsp(Spec(Scope(), "import <|>functools"))
    assert out["scope"]["kind"] == "file" and out["position"] == {"line": 2, "character": 7}
    assert "match" not in lsp(Spec(Scope.line_range(3)))


def test_find_index_and_count() -> None:
    out = lsp(Spec(Scope(), "<|>message", 2))
    assert out["match"]["count"] == 4 and out["position"] == {"line": 15, "character": 20}


def test_find_is_limited_to_the_scope() -> None:
    out = lsp(Spec(Scope.symbol("Shouter", "greet"), "message"))
    assert out["match"]["count"] == 2
    assert out["position"] == {"line": 15, "character": 20}


def test_partial_match_is_reported() -> None:
    out = lsp(Spec(Scope.symbol("Greeter"), "<|>nit"))
    assert out["match"]["partial"] is True and out["match"]["text"] == "nit"
    assert out["position"] == {"line": 6, "character": 11}


def test_explicit_marker() -> None:
    out = lsp(
        {
            "scope": {"symbol_path": ["Greeter", "greet"]},
            "find": "return message + self.@@name",
            "marker": "@@",
        }
    )
    assert out["position"] == {"line": 11, "character": 30}


def test_mapping_specs_are_accepted() -> None:
    assert lsp({"symbol_path": ["Greeter", "__init__"], "find": "self.<|>name ="})["position"] == {
        "line": 7,
        "character": 13,
    }


EMOJI = 'label = "📦 " + name\nother = name\n'


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 16), ("utf-8", 18), ("utf-32", 15)])
def test_astral_character_before_the_target(encoding: Encoding, character: int) -> None:
    out = lsp(Spec(Scope.line_range(1), "+ <|>name"), EMOJI, None, encoding)
    assert out["position"] == {"line": 0, "character": character}
    assert out["match"]["range"]["end"] == {"line": 0, "character": character + 4}
    sym_range = sym("label", (0, 0, 0, character + 4), (0, 0, 0, 5))
    assert (
        lsp(Spec(Scope.symbol("label"), "name"), EMOJI, [sym_range], encoding)["position"][
            "character"
        ]
        == character
    )


CRLF = "first line\r\n\tsecond(a,\r\n\t       b)\r\nthird\r\n"


def test_crlf_and_tabs() -> None:
    out = lsp(Spec(Scope(), "second(a, <|>b)"), CRLF, None)
    assert out["position"] == {"line": 2, "character": 8}
    out = lsp(Spec(Scope.line_range(1, 3)), CRLF, None, want="range")
    assert out["range"] == {
        "start": {"line": 0, "character": 0},
        "end": {"line": 2, "character": 10},
    }
    assert lsp(Spec(Scope.line_range(2)), CRLF, None)["position"] == {"line": 1, "character": 1}


def test_ranges() -> None:
    # two markers: the text between them
    out = lsp(
        Spec(Scope.symbol("Greeter", "greet"), "return <|>message + self.name<|>"), want="range"
    )
    assert out["range"] == {
        "start": {"line": 11, "character": 15},
        "end": {"line": 11, "character": 34},
    }
    # one marker or none: the matched text
    out = lsp(Spec(Scope(), "message.<|>upper()"), want="range")
    assert out["range"] == out["match"]["range"]
    assert out["match"]["text"] == "message.upper()"
    # no find: the symbol's full range, or whole lines without the final line break
    out = lsp(Spec(Scope.symbol("Shouter", "greet")), want="range")
    assert out["range"] == {
        "start": {"line": 15, "character": 4},
        "end": {"line": 16, "character": 30},
    }
    out = lsp(Spec(Scope.line_range(7, 8)), want="range")
    assert out["range"] == {
        "start": {"line": 6, "character": 0},
        "end": {"line": 7, "character": 24},
    }


def test_flat_symbol_information_is_nested() -> None:
    flat = flatten(SYMS)
    assert lsp(Spec(Scope.symbol("Shouter", "greet"), "<|>message"), symbols=flat)["position"] == {
        "line": 15,
        "character": 20,
    }
    # without a selectionRange the name is looked up in the range: decorators are skipped
    assert lsp(Spec(Scope.symbol("Greeter", "greet")), symbols=flat)["position"] == {
        "line": 10,
        "character": 8,
    }


def test_starts_are_cached_per_text() -> None:
    assert starts_of(APP) is starts_of(APP)


# --- errors -------------------------------------------------------------------------------


def error(
    spec: Spec | dict[str, Any], text: str = APP, symbols: Any = SYMS, want: Want = "position"
) -> InvalidParams | RequestFailed:
    with pytest.raises((InvalidParams, RequestFailed)) as err:
        resolve_spec(text, None, symbols, spec, "utf-16", want=want)
    assert isinstance(err.value, InvalidParams | RequestFailed)
    return err.value


def test_malformed_specs_are_invalid_params() -> None:
    cases: list[tuple[Spec | dict[str, Any], str]] = [
        (Spec(Scope()), "nothing to locate"),
        (Spec(Scope.line_range(0)), "bad line range"),
        (Spec(Scope.line_range(5, 4)), "bad line range"),
        (Spec(Scope.line_range(17, 40)), "past the end"),
        (Spec(Scope.line_range(18)), "past the end"),  # the final line break starts no line
        ({"find": ""}, "find is empty"),
    ]
    for spec, problem in cases:
        err = error(spec)
        assert isinstance(err, InvalidParams) and err.CODE == -32602, spec
        assert problem in err.message
    err = error(Spec(Scope.line_range(40)))
    assert err.data["line_count"] == 17 and "17 lines" in err.message
    assert lsp(Spec(Scope.line_range(1)), "x", None)["position"] == {"line": 0, "character": 0}
    assert lsp(Spec(Scope.line_range(2)), "x\ny", None)["position"] == {"line": 1, "character": 0}


def test_symbol_not_found_lists_the_nearest_paths() -> None:
    err = error(Spec(Scope.symbol("Greeter", "gret")))
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert err.data["symbol_path"] == ["Greeter", "gret"]
    assert err.data["candidates"][0] == ["Greeter", "greet"]
    assert ["Greeter", "__init__"] in err.data["candidates"]
    assert "Greeter.greet" in err.message


def test_ambiguous_suffix_lists_both_paths() -> None:
    err = error(Spec(Scope.symbol("greet")))
    assert isinstance(err, RequestFailed)
    assert err.data["candidates"] == [["Greeter", "greet"], ["Shouter", "greet"]]
    assert "ambiguous" in err.message
    # a unique suffix is accepted, and the result names the full path
    assert lsp(Spec(Scope.symbol("__init__")))["scope"]["symbol_path"] == ["Greeter", "__init__"]


def test_symbol_scope_without_symbols() -> None:
    err = error(Spec(Scope.symbol("Greeter")), symbols=None)
    assert isinstance(err, RequestFailed) and err.data == {
        "symbol_path": ["Greeter"],
        "candidates": [],
    }
    assert "line scope" in err.message


def test_find_not_found_gives_the_scope_range_and_the_closest_line() -> None:
    err = error(Spec(Scope.symbol("Shouter", "greet"), "return <|>mesage.upper()"))
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert err.data["scope_range"] == {
        "start": {"line": 15, "character": 4},
        "end": {"line": 16, "character": 30},
    }
    assert err.data["closest"] == {
        "line": 17,
        "text": "        return message.upper()",
        "position": {"line": 16, "character": 8},
    }
    assert err.data["find"] == "return <|>mesage.upper()"
    assert "closest line is 17" in err.message


def test_not_found_hints_at_literal_lookalike_markers() -> None:
    err = error(Spec(Scope(), "return <<|>message"))
    assert "marker-looking" in err.message


def test_find_index_beyond_the_matches() -> None:
    err = error(Spec(Scope.symbol("Shouter", "greet"), "message", 2))
    assert isinstance(err, RequestFailed) and err.CODE == -32803
    assert err.data["count"] == 2 and err.data["find_index"] == 2
    assert "0 to 1" in err.message
