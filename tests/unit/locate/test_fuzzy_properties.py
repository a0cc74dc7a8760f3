"""Properties of fuzzy Locate's decisions (issue 23): an exact match always wins, however many
similar siblings surround it; and a file that grows more similar siblings (copies of the
statements that nearly match the find) never turns a refusal, or an answer, into another
place."""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from lspmux.errors import RequestFailed
from lspmux.locate.engine import Resolution, resolve_spec
from lspmux.locate.spec import Scope, Spec
from tests.profiles import examples

NAMES = ["total", "count", "value", "price", "items", "x", "y"]
FUNCS = ["compute", "render", "send", "len"]
SHAPES = [
    "{a} = {f}({b}, {c})",
    "{a} = {b} + {c}",
    "return {f}({b})",
    "if {a} == {b}:",
    "{a}.{b} = {f}({c}, key={b})",
]
SEP = "pass\n"  # between statements, in the text and between copies alike


@st.composite
def statement(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(SHAPES))
    names = st.sampled_from(NAMES)
    return shape.format(a=draw(names), b=draw(names), c=draw(names), f=draw(st.sampled_from(FUNCS)))


@st.composite
def variant(draw: st.DrawFn, line: str) -> str:
    """`line` with one or two words changed, dropped, or a token added."""
    words = line.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(words) - 1))
        op = draw(st.sampled_from(["change", "drop", "add"]))
        if op == "change":
            words[at] = draw(st.sampled_from(NAMES + FUNCS + ["other", "thing"]))
        elif op == "drop" and len(words) > 2:
            del words[at]
        else:
            words.insert(at, draw(st.sampled_from([*NAMES, "extra"])))
    return " ".join(words)


def text_of(lines: list[str]) -> str:
    return "".join(line + "\n" + SEP for line in lines)


def attempt(text: str, find: str, fuzzy: float | None = 0.6) -> Resolution | None:
    try:
        return resolve_spec(text, None, None, Spec(Scope(), find, fuzzy=fuzzy))
    except RequestFailed as err:
        assert err.CODE == -32803
        return None


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), lines=st.lists(statement(), min_size=1, max_size=6))
def test_an_exact_match_always_wins_over_similar_siblings(
    data: st.DataObject, lines: list[str]
) -> None:
    target = data.draw(st.sampled_from(lines))
    siblings = [data.draw(variant(target)) for _ in range(data.draw(st.integers(1, 4)))]
    text = text_of(lines + siblings)
    exact = attempt(text, target, None)
    assert exact is not None  # the target is in the text
    assert attempt(text, target) == exact


def landed_on(text: str, res: Resolution) -> str:
    """The statement (line) a resolution or a near match starts in."""
    start = text.rfind("\n", 0, res.start) + 1
    end = text.find("\n", res.start)
    return text[start:end]


def alike(line: str, find: str) -> bool:
    """Whether a statement could be a near match of the find: it has at least half of the
    find's words."""
    words = re.findall(r"\w+", find)
    have = re.findall(r"\w+", line)
    kept = sum(min(words.count(w), have.count(w)) for w in set(words))
    return 2 * kept >= len(words)


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data(), lines=st.lists(statement(), min_size=2, max_size=6))
def test_more_similar_siblings_never_turn_a_refusal_into_a_wrong_place(
    data: st.DataObject, lines: list[str]
) -> None:
    # the find is a drifted copy of one statement (its origin); the file then grows copies
    # of the statements that nearly match it (its similar siblings): whatever was refused
    # stays refused or finds the origin, and an answer stays where it was or is refused
    origin = data.draw(st.sampled_from(lines))
    find = data.draw(variant(origin))
    text = text_of(lines)
    if attempt(text, find, None) is not None:
        return  # an exact match: the property above covers it
    before = attempt(text, find)
    similar = sorted({line for line in lines if line != origin and alike(line, find)})
    if not similar:
        return
    copied = data.draw(st.lists(st.sampled_from(similar), min_size=1, max_size=4))
    if before is not None:
        answer = landed_on(text, before)
        copied = [line for line in copied if line != answer]  # a copied answer is a tie
    grown = text + text_of(copied)
    after = attempt(grown, find)
    event(f"{'answered' if before else 'refused'}, then {'answered' if after else 'refused'}")
    if after is None:
        return
    if before is None:
        assert landed_on(grown, after) == origin, "a refusal turned into a wrong place"
    else:
        assert landed_on(grown, after) == answer, "siblings moved the answer elsewhere"
        assert after.start < len(text)  # the original statement, not a copy of another
        # a copy of the answer itself: refused, or that same statement
        twin = text + text_of([answer])
        again = attempt(twin, find)
        assert again is None or landed_on(twin, again) == answer
