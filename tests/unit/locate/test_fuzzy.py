"""Fuzzy Locate through resolve_spec: near matches when the exact find matches nothing, what the
result says about them, and the errors (tie, below the threshold, too unspecific)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.errors import RequestFailed
from lspmux.locate import fuzzy, places
from lspmux.locate.engine import Resolution, resolve_spec
from lspmux.locate.markers import Want
from lspmux.locate.spec import Scope, Spec
from lspmux.locate.weights import added
from lspmux.text import Encoding, line_starts, position_to_offset
from tests.profiles import examples

from .helpers import near_find

SHOP = """def checkout(cart, user):
    total = price * quantity + tax
    receipt = render_receipt(cart, user, currency)
    return send_email(user.email, receipt)


def refund(order, reason):
    amount = order.total - order.fees
    log.info("refund %s: %s", order.id, reason)
    return amount
"""


def run(
    find: str,
    text: str = SHOP,
    *,
    fuzzy_on: float | bool = True,
    want: Want = "position",
    encoding: Encoding = "utf-16",
    scope: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"find": find, "fuzzy": fuzzy_on}
    if scope is not None:
        spec["scope"] = scope
    res = resolve_spec(text, None, None, spec, encoding, want=want)
    return res.to_lsp(text, line_starts(text), encoding)


def fails(find: str, text: str = SHOP, **kw: Any) -> RequestFailed:
    with pytest.raises(RequestFailed) as err:
        run(find, text, **kw)
    assert err.value.CODE == -32803
    return err.value


def at(out: dict[str, Any], text: str = SHOP) -> str:
    """The text from the resolved position to the end of its line."""
    p = out["position"]
    off = position_to_offset(text, line_starts(text), p["line"], p["character"])
    return text[off:].split("\n", 1)[0]


def test_renamed_identifier() -> None:
    out = run("total = price * <|>count + tax")
    assert at(out) == "quantity + tax"
    m = out["match"]
    assert m["fuzzy"] is True
    assert m["text"] == "total = price * quantity + tax"
    # weights: total 1.5 (twice in the file), price 2 and tax 2 (once), count 1 (gone), the
    # four operators 0.5 each: 8 in all; `count` changed costs its weight, 1
    assert m["score"] == pytest.approx(1 - 1 / 8, abs=1e-3)
    assert [(e["op"], e.get("find"), e.get("text"), e["typo"]) for e in m["edits"]] == [
        ("changed", "count", "quantity", False)
    ]
    assert m["markers"] == [
        {
            "token": "count",
            "side": "start",
            "status": "changed",
            "landed_on": "quantity",
            "position": out["position"],
        }
    ]


def test_inserted_argument() -> None:
    out = run("receipt = render_receipt(cart, <|>currency)")
    assert at(out) == "currency)"  # on the token the marker was attached to
    m = out["match"]
    assert m["text"] == "receipt = render_receipt(cart, user, currency)"
    assert [(e["op"], e.get("text")) for e in m["edits"]] == [("added", "user"), ("added", ",")]
    assert m["markers"][0]["status"] == "matched"
    # receipt 1.5 (twice in the file), = 0.5, render_receipt 2.5 (once, and long), ( 0.5,
    # cart 1.5, , 0.5, currency 2.5, ) 0.5: 10; `user` added costs 1 and `,` 0.5
    assert m["score"] == pytest.approx(1 - 1.5 / 10, abs=1e-3)


def test_argument_added_before_the_closing_parenthesis_is_reported_as_added() -> None:
    m = run("return send_email(<|>user.email)")["match"]
    assert m["text"] == "return send_email(user.email, receipt)"
    assert [(e["op"], e.get("text")) for e in m["edits"]] == [("added", ","), ("added", "receipt")]


def test_deleted_token_under_the_marker() -> None:
    # the text lost `order.fees`' `order .`: the marker lands on the token that took its place
    text = SHOP.replace("order.total - order.fees", "order.total - fees")
    out = run("amount = order.total - <|>order.fees", text)
    assert at(out, text) == "fees"
    m = out["match"]
    assert m["markers"][0]["status"] == "missing"
    assert m["markers"][0]["token"] == "order"
    assert m["markers"][0]["landed_on"] == "fees"
    assert [(e["op"], e["find"]) for e in m["edits"]] == [("missing", "order"), ("missing", ".")]
    assert "position" in m["edits"][0]  # where the missing token would have been


def test_typo_in_a_word() -> None:
    out = run('log.info("refund %s: %s", order.id, <|>reasn)')
    assert at(out) == "reason)"
    (edit,) = out["match"]["edits"]
    assert (edit["op"], edit["find"], edit["text"], edit["typo"]) == (
        "changed",
        "reasn",
        "reason",
        True,
    )
    # a typo costs half a renamed word
    # a typo costs half the word's weight (1: `reasn` is nowhere in the file)
    assert out["match"]["score"] == pytest.approx(0.973, abs=1e-3)


def test_reformatted_whitespace_plus_one_change() -> None:
    find = "def checkout(cart,\n        customer):\n  total   =   price*quantity+<|>tax"
    out = run(find)
    assert at(out) == "tax"
    m = out["match"]
    assert [(e["op"], e.get("find"), e.get("text")) for e in m["edits"]] == [
        ("changed", "customer", "user")
    ]
    assert m["text"].startswith("def checkout(cart, user):")


def test_a_tie_is_an_error_listing_both_candidates() -> None:
    text = "a = compute(x, y)\nb = 1\na = compute(x, z)\n"
    err = fails("a = compute(x, <|>w)", text)
    assert "ambiguous" in err.message and "lines 1, 3" in err.message
    data = err.data["fuzzy"]
    assert data["threshold"] == 0.6
    assert [(c["line"], c["text"], c["score"]) for c in data["candidates"]] == [
        (1, "a = compute(x, y)", pytest.approx(1 - 1 / 7.5, abs=1e-3)),
        (3, "a = compute(x, z)", pytest.approx(1 - 1 / 7.5, abs=1e-3)),
    ]
    assert data["candidates"][1]["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": 17},
    }


def test_the_best_of_several_candidates_wins() -> None:
    text = "a = compute(x, y)\nb = 1\na = compute(x, <|>)\n"
    out = run("a = compute(x, y + 1)", text)
    assert out["match"]["text"] == "a = compute(x, y)"
    assert out["match"]["count"] >= 1


@pytest.mark.parametrize(
    ("find", "text"),
    [
        ("int a", "inta = 1\n"),
        ("int a = 1;", "inta = 1;\n"),
        ("int a = compute(x, y);", "inta = compute(x, y);\n"),  # even with a long context
        ("inta = compute(x, y);", "int a = compute(x, y);\n"),  # nor the other way round
    ],
)
def test_two_words_never_fuse(find: str, text: str) -> None:
    err = fails(find, text)
    assert err.data["fuzzy"]["candidates"] == []


def test_a_word_is_changed_whole_never_matched_inside_another() -> None:
    # a renamed local: `value` stands where `my_value` is, as a whole token
    text = "total = 0\nmy_value = compute(x, y)\n"
    out = run("value: int = compute(x, y)", text)
    assert out["position"] == {"line": 1, "character": 0}  # not inside `my_value`
    assert [(e["op"], e.get("find"), e.get("text")) for e in out["match"]["edits"]] == [
        ("changed", "value", "my_value"),
        ("missing", ":", None),
        ("missing", "int", None),
    ]


def test_exact_match_elsewhere_wins_over_a_closer_fuzzy_one() -> None:
    # line 1 is one typo away and comes first; line 3 is the exact match
    text = "result = compute(alpha, betta)\n\nresult = compute(alpha, beta)\n"
    fuzzy_on = run("result = compute(alpha, <|>beta)", text)
    fuzzy_off = run("result = compute(alpha, <|>beta)", text, fuzzy_on=False)
    assert fuzzy_on == fuzzy_off
    assert fuzzy_on["position"] == {"line": 2, "character": 24}
    assert "fuzzy" not in fuzzy_on["match"]


def test_partial_exact_match_wins_too() -> None:
    text = "my_total = 1\n"
    assert run("total = 1", text)["match"]["partial"] is True


def test_below_the_threshold_is_an_error_with_the_best_candidates() -> None:
    text = "a = compute(x, y)\n"
    err = fails("a = compute(x, p, q, r)", text, fuzzy_on=0.8)
    assert "not even approximately" in err.message and "0.8" in err.message
    (cand,) = err.data["fuzzy"]["candidates"]
    assert cand["text"] == "a = compute(x, y)" and cand["score"] < 0.8
    assert cand["range"]["start"] == {"line": 0, "character": 0}
    assert err.data["closest"]["line"] == 1  # the exact matcher's hint stays
    # a lower threshold accepts it
    assert run("a = compute(x, p, q, r)", text)["match"]["score"] == cand["score"]


def test_a_higher_threshold_refuses_a_weaker_match() -> None:
    assert run("total = price * count + tax", fuzzy_on=0.8)["match"]["fuzzy"]
    fails("total = price * count + tax", fuzzy_on=0.9)


def test_fuzzy_is_limited_to_the_scope() -> None:
    fails("amount = order.total - <|>fees", scope={"line": [1, 4]})
    out = run("amount = order.total - <|>fees", scope={"line": [6, 10]})
    assert out["position"]["line"] == 7


def test_range_with_two_markers() -> None:
    out = run("receipt = <|>render_receit(cart, user, currency)<|>", want="range")
    assert out["range"] == {
        "start": {"line": 2, "character": 14},
        "end": {"line": 2, "character": 50},
    }
    assert [m["side"] for m in out["match"]["markers"]] == ["start", "end"]
    # without markers the range is the matched text
    out = run("receipt = render_receit(cart, user, currency)", want="range")
    assert out["range"] == out["match"]["range"]


def test_a_marker_inside_a_word() -> None:
    out = run("total = price * quan<|>tity + taxes")
    assert at(out) == "tity + tax"
    assert out["match"]["markers"][0]["status"] == "matched"


@pytest.mark.parametrize(("encoding", "character"), [("utf-16", 22), ("utf-8", 24), ("utf-32", 21)])
def test_positions_use_the_session_encoding(encoding: Encoding, character: int) -> None:
    text = 'label = "😀" + <|>greeting\nlabel = "😀" + name.upper()\n'.replace("<|>", "")
    out = run('label = "😀" + <|>nme.upper()', text, encoding=encoding)
    assert out["position"] == {"line": 1, "character": character - 7}
    out = run('label = "😀" + <|>greting', text, encoding=encoding)
    assert out["position"] == {"line": 0, "character": character - 7}


def test_punctuation_only_finds_are_never_fuzzy() -> None:
    err = fails("=> {", "a = () -> { b }\n")
    assert err.data["fuzzy"]["candidates"] == []


def test_too_unspecific_finds_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzzy, "MAX_HITS", 3)
    text = "x = f(a)\n" * 4
    err = fails("x = f(b, c)", text)
    assert "too unspecific" in err.message
    assert err.data["fuzzy"]["anchors"]
    assert "more than 3 times" in err.message
    assert run("x = f(b, c)", "x = f(a)\ny = 2\n")["match"]["fuzzy"]  # within the cap


def test_find_index_does_not_apply_to_near_matches() -> None:
    with pytest.raises(RequestFailed) as err:
        resolve_spec(SHOP, None, None, Spec(Scope(), "total = price * count", 1, fuzzy=0.6))
    assert "find_index applies to exact matches only" in err.value.message


# --- fuzzy never changes what exact matching gives -----------------------------------------

_WORD_CHAR = re.compile(r"\w")
_WORDS = st.sampled_from(["a", "b", "ab", "int", "x1", "value", "self", "foo"])
_PUNCT = st.sampled_from(list("().,=+*:"))
_TOKENS = st.lists(st.one_of(_WORDS, _PUNCT), min_size=1, max_size=24)
_SPACES = st.sampled_from(["", " ", "  ", "\n", "\n    "])


@st.composite
def _source(draw: st.DrawFn) -> str:
    tokens = draw(_TOKENS)
    out = tokens[0]
    for tok in tokens[1:]:
        out += draw(_SPACES) or (" " if out[-1].isalnum() and tok[0].isalnum() else "")
        out += tok
    return out


@settings(max_examples=examples(400), deadline=None)
@given(text=_source(), start=st.integers(0, 40), length=st.integers(1, 12), data=st.data())
def test_fuzzy_never_changes_an_exact_result(
    text: str, start: int, length: int, data: st.DataObject
) -> None:
    # a find cut from the text (so it usually matches), drawn afresh (so it often does not),
    # or a run of the text's tokens with a few changed (so it often nearly matches)
    how = data.draw(st.sampled_from(["cut", "fresh", "near"]))
    if how == "cut":
        find = text[start : start + length].strip()
    else:
        find = data.draw(_source() if how == "fresh" else near_find(text))
        if data.draw(st.booleans()) and " " in find:  # a marker at a token boundary
            at = data.draw(st.sampled_from([i for i, ch in enumerate(find) if ch == " "]))
            find = find[:at] + " <|>" + find[at + 1 :]
    if not find.strip() or find.strip() == "<|>":
        return
    want: Want = data.draw(st.sampled_from(["position", "range"]))
    try:
        exact = resolve_spec(text, None, None, Spec(Scope(), find), want=want)
    except RequestFailed:
        exact = None
    try:
        near = resolve_spec(text, None, None, Spec(Scope(), find, fuzzy=0.6), want=want)
    except RequestFailed:
        near = None
    if exact is not None:
        assert near == exact
    elif near is not None:
        _check_near_match(text, find, near)


def _check_near_match(text: str, find: str, res: Resolution) -> None:
    """What a near match says holds: its score is its edits' cost, its edits are whole tokens
    of the text, its markers land inside it."""
    assert res.match is not None and res.match.fuzzy is not None
    c = res.match.fuzzy
    assert c.score >= 0.6
    ft = fuzzy.find_tokens(find)
    weights, _ = places.weigh(ft, text, 0, len(text))
    weight = dict(zip(ft.texts, weights, strict=True))

    def cost_of(e: fuzzy.Edit) -> float:
        if e.op == "added":
            assert e.text is not None
            return added(e.text)
        if e.op == "moved":
            return fuzzy.MOVE_COST
        assert e.find is not None
        return weight[e.find] * (0.5 if e.typo else 1.0)

    cost = sum(cost_of(e) for e in c.edits)
    assert cost == c.cost
    assert c.score == pytest.approx(1 - cost / sum(weights))
    for e in c.edits:
        if e.op == "missing":
            assert c.start <= e.start == e.end <= c.end
            continue
        assert text[e.start : e.end] == e.text
        if e.text is not None and _WORD_CHAR.match(e.text):  # a whole word, never a part
            assert not _WORD_CHAR.match(text[max(0, e.start - 1) : e.start] or " ")
            assert not _WORD_CHAR.match(text[e.end : e.end + 1] or " ")
    assert c.start <= res.start <= res.end <= c.end
    assert all(c.start <= m.offset <= c.end for m in c.markers)
