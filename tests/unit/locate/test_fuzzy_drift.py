"""Fuzzy Locate on drifted code never lands silently on the wrong place (issue 23): the run
that keeps the most of the find is reported, a close runner-up is refused, tokens weigh by
what they identify, moved arguments keep their marker, a stale line scope says so."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.errors import RequestFailed
from lspmux.locate.engine import resolve_spec
from lspmux.text import line_starts, position_to_offset

from .helpers import python_symbols


def resolve(text: str, find: str, **spec: Any) -> dict[str, Any]:
    res = resolve_spec(text, None, None, {"find": find, "fuzzy": True, **spec})
    return res.to_lsp(text, line_starts(text), "utf-16")


def at(text: str, out: dict[str, Any]) -> tuple[int, str]:
    """The 1-based line of the resolved position and the text from there to the line end."""
    p = out["position"]
    off = position_to_offset(text, line_starts(text), p["line"], p["character"])
    return p["line"] + 1, text[off:].split("\n", 1)[0]


def refused(text: str, find: str, **spec: Any) -> RequestFailed:
    with pytest.raises(RequestFailed) as err:
        resolve(text, find, **spec)
    assert err.value.CODE == -32803
    return err.value


# --- 1. the run reported is the passing run that keeps the most of the find ----------------


def test_a_guard_added_before_the_condition_keeps_the_if() -> None:
    text = "def first(x):\n    if x and x[0] == '\"':\n        return x[1:]\n    return x\n"
    out = resolve(text, "<|>if x[0] == '\"':")
    assert at(text, out) == (2, "if x and x[0] == '\"':")
    assert [e["op"] for e in out["match"]["edits"]] == ["added", "added"]  # `and`, `x`


def test_a_call_wrapped_in_another_keeps_the_return() -> None:
    text = "def g(v):\n    return v\n\n\ndef h(y):\n    return g(f(y))\n"
    out = resolve(text, "<|>return f(y)")
    assert at(text, out) == (6, "return g(f(y))")
    assert out["match"]["markers"][0]["status"] == "matched"


def test_c_a_null_check_added_before_the_condition_keeps_the_if() -> None:
    text = "void drop(struct node *p) {\n    if (p && p->next == NULL)\n        free(p);\n}\n"
    out = resolve(text, "<|>if (p->next == NULL)")
    assert at(text, out) == (2, "if (p && p->next == NULL)")


# --- 2. a runner-up within the margin is refused -------------------------------------------

IF_CHAIN = """def dispatch(kind, item):
    if kind == "alpha":
        handle_alpha(item)
    elif kind == "gamma":
        handle_gamma(item)
    elif kind == "delta":
        handle_delta(item)
"""


def test_a_deleted_branch_is_refused_not_resolved_to_the_next_branch() -> None:
    # the `beta` branch was deleted: every branch left is an equally poor match
    err = refused(IF_CHAIN, 'elif kind == "beta":\n    <|>handle_beta(item)')
    fuzzy = err.data["fuzzy"]
    assert fuzzy["margin"] == 0.1
    first, second = fuzzy["candidates"][:2]
    assert first["score"] - second["score"] < 0.1
    assert first["edits"] and second["edits"]  # each candidate says what differs


ZLIB = """ZEXTERN int ZEXPORT deflateInit OF((z_streamp strm, int level));
int deflateEnd(z_streamp strm);
ZEXTERN int ZEXPORT inflateEnd OF((z_streamp strm));
ZEXTERN int ZEXPORT inflateInit OF((z_streamp strm));
"""


def test_c_a_prototype_that_lost_its_wrapper_is_not_taken_for_its_neighbour() -> None:
    # `deflateEnd` lost ZEXTERN/ZEXPORT/OF; `inflateEnd` is one word away but another function
    err = refused(ZLIB, "ZEXTERN int ZEXPORT <|>deflateEnd OF((z_streamp strm));")
    lines = [c["line"] for c in err.data["fuzzy"]["candidates"]]
    assert 2 in lines  # the real place is offered
    assert err.data["fuzzy"]["refused"] in ("tie", "close", "lost")


def test_c_a_neighbour_one_letter_away_is_no_typo_while_the_name_still_exists() -> None:
    text = (
        "static int compute_sun(int a, int b);\n"
        "static inline int compute_sum(int a, int b);\n"
        "static int compute_max(int a, int b);\n"
    )
    out = resolve(text, "static int <|>compute_sum(int a, int b);")
    assert at(text, out) == (2, "compute_sum(int a, int b);")


def test_the_margin_is_a_parameter() -> None:
    text = "total = price * quantity + tax\ntotal = price * amount + fee\n"
    find = "total = price * <|>count + tax"
    assert at(text, resolve(text, find))[0] == 1
    from lspmux.locate.fuzzy import find_tokens, fuzzy_search

    wide = fuzzy_search(find_tokens(find), text, 0, len(text), 0.6, margin=0.5)
    assert wide.refused == "close" and wide.reported is None


# --- 3. tokens weigh by what they identify --------------------------------------------------


def test_quotes_are_one_quote_for_scoring() -> None:
    # four quotes changed style: the line keeps them all, and beats the unquoted line
    text = "name = cfg.get(app, name)\nname = cfg.get('app', 'name')\n"
    out = resolve(text, 'name = cfg.get("app", <|>"name")')
    assert at(text, out) == (2, "'name')")
    assert out["match"]["edits"] == []  # nothing but the quotes differ
    assert out["match"]["score"] == 1.0


def test_c_quotes_in_a_string_and_a_char_are_one_quote() -> None:
    text = "puts(\"x\");\nputc('y', out);\nputc(y, out);\n"
    out = resolve(text, 'putc(<|>"y", out);')
    assert at(text, out) == (2, "'y', out);")


def test_c_a_function_name_weighs_more_than_a_comma() -> None:
    text = (
        "int deflateParams(z_streamp strm, int level, int strategy);\n"
        "int inflateSync(z_streamp strm);\n"
    )
    # a parameter lost a comma and a type; the function name alone tells the place
    out = resolve(text, "int <|>deflateParams(z_streamp strm, int strategy)")
    assert at(text, out) == (1, "deflateParams(z_streamp strm, int level, int strategy);")
    weights_score = out["match"]["score"]
    assert weights_score > 0.75


# --- 4. moved arguments keep their marker; a move that cannot be followed is refused ------


def test_a_moved_keyword_argument_keeps_its_marker() -> None:
    text = "conn = connect(timeout=30, host='db', port=5432)\n"
    out = resolve(text, "conn = connect(host='db', port=<|>5432, timeout=30)")
    assert at(text, out) == (1, "5432)")
    assert any(e["op"] == "moved" for e in out["match"]["edits"])


def test_swapped_keyword_arguments_the_marker_follows_the_argument() -> None:
    text = "plot(xs, b=2, a=1)\n"
    out = resolve(text, "plot(xs, a=<|>1, b=2)")
    assert at(text, out) == (1, "1)")


def test_c_a_moved_designated_initializer_keeps_its_marker() -> None:
    text = 'static struct opts o = { .port = 80, .verbose = 1, .host = "local" };\n'
    out = resolve(text, 'static struct opts o = { .host = <|>"local", .port = 80, .verbose = 1 };')
    assert at(text, out) == (1, '"local" };')


def test_a_move_that_cannot_be_followed_is_refused() -> None:
    # `width` is gone and `height` stands in its slot: the marker would land on `height`'s value
    text = "draw(canvas, height=20, size=10)\n"
    err = refused(text, "draw(canvas, width=<|>10, height=20)")
    assert err.data["fuzzy"]["refused"] == "moved"


def test_reordered_positional_arguments_in_a_symbol_sized_scope() -> None:
    text = "def mix(left, right, weight):\n    result = combine(weight, left, right)\n"
    out = resolve(text, "result = combine(<|>left, right, weight)", scope={"line": 2})
    assert at(text, out) == (2, "left, right)")


# --- 5. a stale line scope says so ----------------------------------------------------------

BEFORE = """def area(w, h):
    total = w * h
    return total


def perimeter(w, h):
    total = 2 * (w + h)
    return total
"""


def test_a_stale_line_scope_points_to_the_exact_match_elsewhere() -> None:
    # five lines were inserted at the top: the find was written for old line 7 (perimeter's
    # `total`), and new line 7 holds area's `total`, a similar statement
    text = "import math\nimport os\n\nSCALE = 2\n\n" + BEFORE
    assert text.split("\n")[6] == "    total = w * h"
    err = refused(text, "total = 2 * (<|>w + h)", scope={"line": 7})
    data = err.data["fuzzy"]
    assert data["stale_scope"] is True
    assert data["candidates"][1]["line"] == 12 and data["candidates"][1]["score"] == 1.0


def test_a_stale_line_scope_never_resolves_to_a_sibling_statement() -> None:
    # `perimeter` became `triple`, and a function below it now stands at line 7 of the old
    # text: the find's nearest statement is elsewhere, so line 7's is not taken silently
    text = BEFORE.replace("perimeter", "half").replace("2 * (w + h)", "(w + h) / 2") + (
        "\n\ndef triple(w, h):\n    total = 3 * (w + h)\n    return total\n"
    )
    assert text.split("\n")[6] == "    total = (w + h) / 2"
    err = refused(text, "total = 2 * (<|>w + h)", scope={"line": 7})
    data = err.data["fuzzy"]
    assert data["stale_scope"] is True
    assert data["candidates"][1]["line"] == 12


def test_a_line_scope_edited_in_place_still_resolves() -> None:
    text = BEFORE.replace("2 * (w + h)", "2 * (w + h + margin)")
    out = resolve(text, "total = 2 * (<|>w + h)", scope={"line": 7})
    assert at(text, out) == (7, "w + h + margin)")


def test_reordered_arguments_in_a_symbol_scope() -> None:
    # the half-the-words rule alone refused this: the slot-by-slot alignment kept too few
    text = (
        "class Mixer:\n"
        "    def mix(self, pair, weight):\n"
        "        left, right = pair\n"
        "        out = blend(weight, right, left)\n"
        "        return out\n"
    )
    res = resolve_spec(
        text,
        None,
        python_symbols(text),
        {
            "scope": {"symbol_path": ["Mixer", "mix"]},
            "find": "blend(<|>left, right, weight)",
            "fuzzy": True,
        },
    )
    assert res.start == text.index("left)")


def test_c_reordered_arguments_in_a_function() -> None:
    text = "int area(int w, int h)\n{\n    return scale(h, w, UNIT);\n}\n"
    out = resolve(text, "return scale(w, <|>h, UNIT);")
    assert at(text, out) == (3, "h, w, UNIT);")
