"""Semantic tokens: deltas lspmux computes from full results, and one legend over several
backends. The legends of basedpyright and clangd are those recorded from the real servers
(tests/data/capabilities/, made by scripts/record_capabilities.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.backends import capabilities as caps
from lspmux.routing import semantic_tokens as st_

RECORDED = Path(__file__).resolve().parents[2] / "data" / "capabilities"


def _legend(server: str) -> dict[str, Any]:
    data = json.loads((RECORDED / f"{server}.json").read_text())
    legend: dict[str, Any] = data["capabilities"]["semanticTokensProvider"]["legend"]
    return legend


# -- diff / apply -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "edits"),
    [
        ([], [], []),
        ([0, 1, 2, 3, 0], [0, 1, 2, 3, 0], []),
        ([], [0, 1, 2, 3, 0], [{"start": 0, "deleteCount": 0, "data": [0, 1, 2, 3, 0]}]),
        ([0, 1, 2, 3, 0], [], [{"start": 0, "deleteCount": 5, "data": []}]),
        # one token changed in the middle: only that token is replaced
        (
            [0, 0, 3, 1, 0, 1, 0, 4, 2, 0, 1, 0, 5, 1, 0],
            [0, 0, 3, 1, 0, 1, 0, 4, 7, 0, 1, 0, 5, 1, 0],
            [{"start": 5, "deleteCount": 5, "data": [1, 0, 4, 7, 0]}],
        ),
        # a token inserted: the common prefix and suffix are kept, cut on token boundaries
        (
            [0, 0, 3, 1, 0, 1, 0, 5, 1, 0],
            [0, 0, 3, 1, 0, 0, 4, 1, 1, 0, 1, 0, 5, 1, 0],
            [{"start": 5, "deleteCount": 0, "data": [0, 4, 1, 1, 0]}],
        ),
        # not whole tokens: integer granularity
        ([1, 2, 3], [1, 9, 3], [{"start": 1, "deleteCount": 1, "data": [9]}]),
    ],
)
def test_diff(old: list[int], new: list[int], edits: list[dict[str, Any]]) -> None:
    assert st_.diff(old, new) == edits
    assert st_.apply(old, edits) == new


_tokens = st.lists(st.integers(0, 9), max_size=8).map(lambda xs: [v for x in xs for v in (x,) * 5])


@given(_tokens, _tokens)
def test_diff_then_apply_gives_the_new_data(old: list[int], new: list[int]) -> None:
    edits = st_.diff(old, new)
    assert st_.apply(old, edits) == new
    for edit in edits:  # whole tokens in, whole tokens out
        assert edit["start"] % 5 == 0 and edit["deleteCount"] % 5 == 0
        assert len(edit["data"]) % 5 == 0


@given(st.lists(st.integers(0, 3), max_size=20), st.lists(st.integers(0, 3), max_size=20))
def test_diff_then_apply_on_any_arrays(old: list[int], new: list[int]) -> None:
    edits = st_.diff(old, new)
    assert st_.apply(old, edits) == new
    assert len(edits) <= 1
    if edits:  # minimal: what is kept is a common prefix and suffix
        edit = edits[0]
        kept = len(old) - edit["deleteCount"]
        assert kept <= min(len(old), len(new))


# -- the bridge ------------------------------------------------------------------------------------


def test_bridge_answers_deltas_from_full_results() -> None:
    bridge = st_.DeltaBridge()
    uri = "file:///w/a.py"
    first = bridge.full(uri, {"data": [0, 0, 3, 1, 0]})
    assert first is not None and first["data"] == [0, 0, 3, 1, 0]
    second = bridge.delta(uri, first["resultId"], {"data": [0, 0, 3, 1, 0, 1, 0, 2, 2, 0]})
    assert second is not None and "edits" in second
    assert second["resultId"] != first["resultId"]
    assert st_.apply(first["data"], second["edits"]) == [0, 0, 3, 1, 0, 1, 0, 2, 2, 0]
    # the client now holds second: a delta from it is computed against the new data
    third = bridge.delta(uri, second["resultId"], {"data": [0, 0, 3, 1, 0]})
    assert third is not None
    assert third["edits"] == [{"start": 5, "deleteCount": 5, "data": []}]


def test_bridge_answers_full_for_an_unknown_previous_result() -> None:
    bridge = st_.DeltaBridge()
    uri = "file:///w/a.py"
    first = bridge.full(uri, {"resultId": "backend-7", "data": [0, 0, 1, 0, 0]})
    assert first is not None and first["resultId"] != "backend-7"  # lspmux's own ids
    stale = bridge.delta(uri, "something-else", {"data": [0, 0, 2, 0, 0]})
    assert stale is not None and stale["data"] == [0, 0, 2, 0, 0] and "edits" not in stale
    unknown = bridge.delta("file:///w/other.py", first["resultId"], {"data": [1, 0, 1, 0, 0]})
    assert unknown is not None and unknown["data"] == [1, 0, 1, 0, 0]


def test_bridge_forgets_closed_documents_and_null_results() -> None:
    bridge = st_.DeltaBridge()
    uri = "file:///w/a.py"
    first = bridge.full(uri, {"data": []})
    assert first is not None and uri in bridge
    bridge.forget(uri)
    assert uri not in bridge
    again = bridge.full(uri, {"data": [0, 0, 1, 0, 0]})
    assert again is not None
    assert bridge.delta(uri, again["resultId"], None) is None
    assert uri not in bridge


# -- legends ---------------------------------------------------------------------------------------


def test_union_legend_keeps_the_first_and_adds_the_rest() -> None:
    a = {"tokenTypes": ["class", "function"], "tokenModifiers": ["static"]}
    b = {"tokenTypes": ["function", "macro"], "tokenModifiers": ["readonly", "static"]}
    legend, maps = st_.union_legend([a, None, b])
    assert legend == {
        "tokenTypes": ["class", "function", "macro"],
        "tokenModifiers": ["static", "readonly"],
    }
    assert maps[0].identity
    assert maps[1] == st_.LegendMap((), ())
    assert maps[2] == st_.LegendMap((1, 2), (1, 0))


def test_union_legend_of_the_real_servers() -> None:
    pyright, clangd = _legend("basedpyright"), _legend("clangd")
    legend, (pmap, cmap) = st_.union_legend([pyright, clangd])
    assert pmap.identity
    for i, name in enumerate(clangd["tokenTypes"]):  # clangd lists some names several times
        assert legend["tokenTypes"][cmap.types[i]] == name
    for i, name in enumerate(clangd["tokenModifiers"]):
        assert legend["tokenModifiers"][cmap.modifiers[i]] == name
    assert len(set(legend["tokenTypes"])) == len(legend["tokenTypes"])  # nothing twice
    assert "selfParameter" in legend["tokenTypes"] and "concept" in legend["tokenTypes"]
    # what lspmux announces carries that union
    recorded = {
        s: json.loads((RECORDED / f"{s}.json").read_text())["capabilities"]
        for s in ("basedpyright", "clangd")
    }
    announced = caps.merge_for_client([recorded["basedpyright"], recorded["clangd"]])
    assert announced["semanticTokensProvider"]["legend"] == legend


def test_remap_types_and_modifier_bits() -> None:
    a = {"tokenTypes": ["class", "function"], "tokenModifiers": ["static", "readonly"]}
    b = {"tokenTypes": ["macro", "function"], "tokenModifiers": ["readonly", "async"]}
    legend, (_, bmap) = st_.union_legend([a, b])
    data = [0, 0, 3, 0, 0b11, 1, 2, 4, 1, 0b01]
    out = st_.remap(data, bmap)
    types, mods = legend["tokenTypes"], legend["tokenModifiers"]
    assert [types[out[3]], types[out[8]]] == ["macro", "function"]
    assert {mods[i] for i in range(len(mods)) if out[4] >> i & 1} == {"readonly", "async"}
    assert {mods[i] for i in range(len(mods)) if out[9] >> i & 1} == {"readonly"}
    assert out[:3] == data[:3] and out[5:8] == data[5:8]


def test_remap_drops_tokens_outside_the_legend_and_keeps_positions() -> None:
    legend_map = st_.LegendMap((0,), (0,))
    # line 0 col 2 (kept), line 0 col 5 (bad type), line 0 col 9 (kept), line 2 col 1 (bad),
    # line 2 col 4 (kept), line 3 col 0 (kept)
    data = [
        0,
        2,
        1,
        0,
        0,
        0,
        3,
        1,
        9,
        0,
        0,
        4,
        1,
        0,
        0,
        2,
        1,
        1,
        9,
        0,
        0,
        3,
        1,
        0,
        1,
        1,
        0,
        1,
        0,
        4,
    ]
    out = st_.remap(data, legend_map)
    assert _absolute(out) == [(0, 2), (0, 9), (2, 4), (3, 0)]
    assert out[-1] == 0  # modifier bits outside the legend are cleared


def test_remap_identity_is_a_copy() -> None:
    data = [0, 0, 1, 1, 1]
    out = st_.remap(data, st_.LegendMap((0, 1), (0,)))
    assert out == data and out is not data


def _absolute(data: list[int]) -> list[tuple[int, int]]:
    line = col = 0
    out = []
    for i in range(0, len(data), 5):
        if data[i]:
            line, col = line + data[i], data[i + 1]
        else:
            col += data[i + 1]
        out.append((line, col))
    return out


_raw_tokens = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 6),
        st.integers(1, 3),
        st.integers(0, 4),
        st.integers(0, 15),
    ),
    max_size=12,
)


@given(_raw_tokens, st.permutations([0, 1, 2]), st.permutations([0, 1, 2]))
def test_remap_keeps_every_kept_token_where_it_was(
    tokens: list[tuple[int, ...]], types: list[int], mods: list[int]
) -> None:
    """Types 0-2 are in the legend (3 and 4 are not: dropped); modifier bits 0-2 are (bit 3
    is not: cleared). Each kept token keeps its absolute place and gets the mapped type and
    modifiers."""
    data = [v for tok in tokens for v in tok]
    legend_map = st_.LegendMap(tuple(types), tuple(mods))
    out = st_.remap(data, legend_map)
    places = _absolute(data)
    kept = [(places[i], tok) for i, tok in enumerate(tokens) if tok[3] < 3]
    assert _absolute(out) == [place for place, _ in kept]
    for j, (_, tok) in enumerate(kept):
        assert out[j * 5 + 2] == tok[2]
        assert out[j * 5 + 3] == types[tok[3]]
        assert out[j * 5 + 4] == sum(1 << mods[b] for b in range(3) if tok[4] >> b & 1)


# -- the session's view: request rewritten, answer remapped and bridged -------------------------------

URI = "file:///w/a.c"


def test_remapped_then_bridged() -> None:
    """What the semantic tokens family does with a server's full result: indices into the
    announced legend, then the full answer remembered and the next delta computed from it."""
    bridge = st_.DeltaBridge()
    shift = st_.LegendMap((2, 0), (1,))  # backend type 0 → 2, type 1 → 0; bit 0 → bit 1
    full = bridge.full(URI, st_.remapped({"data": [0, 0, 1, 0, 1]}, shift))
    assert full is not None and full["data"] == [0, 0, 1, 2, 2]
    new = st_.remapped({"data": [0, 0, 1, 0, 1, 1, 0, 2, 1, 0]}, shift)
    delta = bridge.delta(URI, full["resultId"], new)
    assert delta is not None
    assert st_.apply(full["data"], delta["edits"]) == [0, 0, 1, 2, 2, 1, 0, 2, 0, 0]
    assert st_.remapped({"data": [0, 0, 1, 1, 0]}, shift) == {"data": [0, 0, 1, 0, 0]}
    assert st_.remapped(None, shift) is None
    assert st_.remapped({"data": [1]}, None) == {"data": [1]}
