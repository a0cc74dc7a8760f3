"""Where fuzzy Locate looks: typo pieces, anchor choice, hits, spans — and that looking only
there finds every near match that aligning the whole text would accept."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lspmux.locate import anchors, places
from lspmux.locate.align import is_typo
from lspmux.locate.anchors import CountFilter, find_anchors, pieces, spans
from lspmux.locate.fuzzy import find_tokens, fuzzy_search
from lspmux.locate.pattern import SOURCE_TOKEN
from tests.profiles import examples

from .helpers import code, near_find


def test_pieces_cover_the_word_and_survive_any_typo() -> None:
    assert pieces("ab") == ("ab",)
    assert pieces("message") == ("mes", "sa", "ge")
    assert "".join(pieces("unique_marker_value")) == "unique_marker_value"
    # every typo leaves one piece intact
    for typo in ("mesage", "massage", "messages", "nessage"):
        assert is_typo("message", typo)
        assert any(p in typo for p in pieces("message"))


def test_exact_anchors_are_the_rarest_words() -> None:
    text = "self.x = 1\n" * 10 + "self.rare_name = 2\n"
    found = find_anchors(["self", "rare_name"], 1, 0.8, text, 0, len(text), 100)
    # a near match keeps 1 of the 2 words, so both are needed to be sure
    assert set(found.words) == {"self", "rare_name"} and not found.typos
    found = find_anchors(["self", "rare_name", "x"], 2, 1.2, text, 0, len(text), 100)
    assert found.words == ("rare_name", "x") or found.words[0] == "rare_name"
    assert text.index("rare_name") in found.hits


def test_typo_anchors_when_the_exact_ones_are_common(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anchors, "CHEAP", 2)
    text = "return result\n" * 10 + "return unique_marker_value\n"
    found = find_anchors(["return", "unique_marker_valu"], 1, 0.8, text, 0, len(text), 100)
    assert found.typos and found.words == ("unique_marker_valu",)
    assert found.hits == (text.index("unique_marker_value"),)


def test_a_typo_scan_cut_short_is_never_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    # the exact anchors are common (capped); the typo scan of the rare word stops early
    # because a piece of it is everywhere: its hits are incomplete, so it must not be used
    monkeypatch.setattr(anchors, "CHEAP", 2)
    text = "return value self uniqueness\n" * 20
    words = ["return", "value", "self", "unique_marker_valu"]
    found = find_anchors(words, 2, 0.8, text, 0, len(text), 3)
    assert not found.typos
    assert len(found.hits) == 4  # more than the cap: the caller refuses the find


def test_hits_are_whole_words_and_capped() -> None:
    text = "value my_value value2 value\n" * 5
    found = find_anchors(["value"], 1, 0.0, text, 0, len(text), 100)
    assert len(found.hits) == 10
    assert all(text[h : h + 6] in ("value ", "value\n") for h in found.hits)
    assert len(find_anchors(["value"], 1, 0.0, text, 0, len(text), 3).hits) == 4  # cap + 1


def test_spans_reach_tokens_around_hits_and_merge() -> None:
    text = "a b c d e f g h i j k l"

    def words(found: list[int], reach: int) -> list[list[str]]:
        return [[t for _, _, t in run] for run in spans(found, text, 0, len(text), reach)]

    assert words([text.index("f")], 2) == [["d", "e", "f", "g", "h"]]
    assert words([text.index("c"), text.index("f")], 2) == [list("abcdefgh")]
    # windows that do not overlap are two runs
    assert words([text.index("c"), text.index("h")], 2) == [list("abcde"), list("fghij")]
    assert words([text.index("b"), text.index("k")], 2) == [list("abcd"), list("ijkl")]
    # a window never starts inside a word
    long = "x" * 100 + " y z"
    (run,) = spans([long.index("z")], long, 0, len(long), 2)
    assert run[0] == (0, 100, "x" * 100)


def test_count_filter_keeps_only_windows_that_could_match() -> None:
    find = ("total", "=", "price", "*", "count")
    check = CountFilter.of(find, (True, False, True, False, True), keep=2)
    texts = [
        "a",
        "=",
        "b",
        "*",
        "c",
        ";",
        "total",
        "=",
        "price",
        "*",
        "quantity",
        ";",
        "x",
        "=",
        "y",
    ]
    # the windows of 6 tokens holding `total` and `price` (and `=`, `*`) start at 3 to 6
    assert check.ranges(texts, 6, 2.0) == [(3, 12)]
    assert check.ranges(["a", "=", "b", "*", "c"], 6, 2.0) == []  # no word of the find


# --- looking only near the anchors loses nothing ------------------------------------------


@settings(max_examples=examples(400), deadline=None)
@given(text=code(60), data=st.data(), cheap=st.sampled_from([0, 64]))
def test_anchored_search_finds_what_a_full_alignment_accepts(
    text: str, data: st.DataObject, cheap: int
) -> None:
    find = data.draw(near_find(text))
    ft = find_tokens(find.strip())
    if not any(ft.words):  # a find without words is never fuzzy
        return
    old = anchors.CHEAP
    anchors.CHEAP = cheap  # 0 forces typo anchors whenever they are allowed
    try:
        got = fuzzy_search(ft, text, 0, len(text))
    finally:
        anchors.CHEAP = old
    # the baseline: every token of the text aligned, no anchors, no counting filter
    toks = [(m.start(), m.end(), m.group()) for m in SOURCE_TOKEN.finditer(text)]
    weights, scope = places.weigh(ft, text, 0, len(text))
    search = places.Search(ft, weights, scope)
    budget = 0.5 * search.total + 1e-9  # the threshold less the margin
    runs = search.places([toks], budget, filtered=False)
    runs = [r for r in runs if search.score(r) >= 0.6 - 1e-9]
    if runs:  # as `fuzzy_search` reports: runs inside the best's reported run are its place
        a, b = search.report(runs[0], 0.4 * search.total + 1e-9, text).bounds
        runs = [runs[0], *(r for r in runs[1:] if not places.inside(r, a, b))]
    full = [search.candidate(r) for r in runs]
    assert {(c.start, c.end, c.score) for c in got.accepted} == {
        (c.start, c.end, c.score) for c in full
    }
