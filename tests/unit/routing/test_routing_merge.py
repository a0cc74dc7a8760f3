"""Merging answers from several backends, and tagging items with their origin."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as t

from lspmux.routing import merge
from lspmux.routing.table import ROUTES, Policy


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, Any]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


R1, R2 = rng(1, 0, 1, 5), rng(2, 0, 2, 5)

# -- tag / untag -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(data=json_values, has_data=st.booleans(), origin=st.integers(0, 50))
def test_tag_untag_round_trip(data: Any, has_data: bool, origin: int) -> None:
    item: dict[str, Any] = {"label": "x"}
    if has_data:
        item["data"] = data
    original = copy.deepcopy(item)
    tagged = merge.tag(copy.deepcopy(item), origin)
    assert tagged["data"] == {"lspmux": [origin, data if has_data else None]}
    got_origin, restored = merge.untag(tagged)
    assert got_origin == origin
    if has_data and data is not None:
        assert restored == original
    else:  # data None (or absent) comes back absent
        assert restored == {"label": "x"}


@pytest.mark.parametrize(
    "item",
    [
        {"label": "x"},
        {"label": "x", "data": None},
        {"label": "x", "data": {"other": 1}},
        {"label": "x", "data": {"lspmux": [1, None], "more": 2}},  # not ours: two keys
        {"label": "x", "data": [1, 2]},
        # malformed tags (a client's garbage) must not raise: the request still gets an answer
        {"label": "x", "data": {"lspmux": 5}},
        {"label": "x", "data": {"lspmux": [1]}},
        {"label": "x", "data": {"lspmux": [1, 2, 3]}},
        {"label": "x", "data": {"lspmux": ["1", None]}},
        {"label": "x", "data": {"lspmux": [True, None]}},
        {"label": "x", "data": {"lspmux": None}},
    ],
)
def test_untag_leaves_untagged_items_alone(item: dict[str, Any]) -> None:
    assert merge.untag(item) == (None, item)


def test_untag_does_not_mutate_the_tagged_item() -> None:
    tagged = merge.tag({"label": "x", "data": 5}, 3)
    snapshot = copy.deepcopy(tagged)
    merge.untag(tagged)
    assert tagged == snapshot


# -- completion ------------------------------------------------------------------------------------


def test_completion_merges_lists_and_arrays() -> None:
    a = [{"label": "foo", "kind": 3}]
    b = {"isIncomplete": False, "items": [{"label": "bar", "data": {"k": 1}}]}
    out = merge.completion([(0, a), (1, b), (2, None)])
    assert out["isIncomplete"] is False
    assert [i["label"] for i in out["items"]] == ["foo", "bar"]
    assert [merge.untag(i)[0] for i in out["items"]] == [0, 1]
    assert merge.untag(out["items"][1])[1] == {"label": "bar", "data": {"k": 1}}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [((False, False), False), ((True, False), True), ((False, True), True), ((None, True), True)],
)
def test_completion_is_incomplete_is_ored(flags: tuple[Any, Any], expected: bool) -> None:
    results = []
    for origin, flag in enumerate(flags):
        res: dict[str, Any] = {"items": [{"label": f"i{origin}"}]}
        if flag is not None:
            res["isIncomplete"] = flag
        results.append((origin, res))
    assert merge.completion(results)["isIncomplete"] is expected


def test_completion_of_nothing() -> None:
    assert merge.completion([]) == {"isIncomplete": False, "items": []}
    assert merge.completion([(0, None), (1, [])]) == {"isIncomplete": False, "items": []}


def test_item_defaults_apply_per_list() -> None:
    edit_range = rng(0, 4, 0, 6)
    first = {
        "isIncomplete": False,
        "itemDefaults": {
            "commitCharacters": ["."],
            "insertTextFormat": 2,
            "insertTextMode": 2,
            "data": {"from": "defaults"},
            "editRange": edit_range,
        },
        "items": [
            {"label": "plain"},
            {"label": "own", "commitCharacters": [","], "data": {"own": 1}, "insertTextFormat": 1},
            {"label": "tet", "textEditText": "tet()"},
            {"label": "ins", "insertText": "ins()"},
            {"label": "has-edit", "textEdit": {"range": R1, "newText": "kept"}},
        ],
    }
    second = {"items": [{"label": "other"}]}  # no defaults: nothing from the first list
    out = merge.completion([(0, first), (1, second)])
    items = {i["label"]: merge.untag(i)[1] for i in out["items"]}
    assert items["plain"] == {
        "label": "plain",
        "commitCharacters": ["."],
        "insertTextFormat": 2,
        "insertTextMode": 2,
        "data": {"from": "defaults"},
        "textEdit": {"newText": "plain", "range": edit_range},
    }
    own = items["own"]
    assert own["commitCharacters"] == [","] and own["data"] == {"own": 1}
    assert own["insertTextFormat"] == 1
    assert items["tet"]["textEdit"] == {"newText": "tet()", "range": edit_range}
    assert items["ins"]["textEdit"] == {"newText": "ins()", "range": edit_range}
    assert items["has-edit"]["textEdit"] == {"range": R1, "newText": "kept"}
    assert items["other"] == {"label": "other"}
    assert "itemDefaults" not in out


def test_item_defaults_insert_replace_edit_range() -> None:
    ins, rep = rng(0, 1, 0, 2), rng(0, 1, 0, 4)
    res = {
        "itemDefaults": {"editRange": {"insert": ins, "replace": rep}},
        "items": [{"label": "a"}],
    }
    (item,) = merge.completion([(4, res)])["items"]
    assert merge.untag(item) == (
        4,
        {"label": "a", "textEdit": {"newText": "a", "insert": ins, "replace": rep}},
    )


def test_item_defaults_do_not_mutate_the_server_answer() -> None:
    res = {"itemDefaults": {"commitCharacters": ["."]}, "items": [{"label": "a"}]}
    snapshot = copy.deepcopy(res)
    merge.completion([(0, res)])
    assert res == snapshot


def test_completion_dedupes_identical_items_first_wins() -> None:
    a = [{"label": "x", "kind": 6, "detail": "from a"}, {"label": "y"}]
    b = [{"label": "x", "kind": 6, "detail": "from b"}, {"label": "x", "kind": 3}]
    items = merge.completion([(0, a), (1, b)])["items"]
    assert [(i["label"], i.get("kind"), merge.untag(i)[0]) for i in items] == [
        ("x", 6, 0),
        ("y", None, 0),
        ("x", 3, 1),
    ]


def test_completion_items_differing_only_in_text_edit_are_kept() -> None:
    a = [{"label": "x", "textEdit": {"range": R1, "newText": "x"}}]
    b = [{"label": "x", "textEdit": {"range": R2, "newText": "x"}}]
    assert len(merge.completion([(0, a), (1, b)])["items"]) == 2


# -- locations --------------------------------------------------------------------------------------


def loc(uri: str, r: dict[str, Any]) -> dict[str, Any]:
    return {"uri": uri, "range": r}


def link(uri: str, sel: dict[str, Any], full: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"targetUri": uri, "targetRange": full or sel, "targetSelectionRange": sel}


@pytest.mark.parametrize(
    ("results", "expected"),
    [
        ([], None),
        ([(0, None), (1, None)], None),
        ([(0, [])], None),
        ([(0, loc("file:///a", R1))], [loc("file:///a", R1)]),  # a single Location
        (
            [(0, [loc("file:///a", R1)]), (1, [loc("file:///a", R1), loc("file:///b", R1)])],
            [loc("file:///a", R1), loc("file:///b", R1)],
        ),
        (  # links everywhere stay links, deduped on (uri, selection range)
            [(0, [link("file:///a", R1)]), (1, [link("file:///a", R1, R2), link("file:///a", R2)])],
            [link("file:///a", R1), link("file:///a", R2)],
        ),
        (  # mixed: links become Locations (selection range), then deduped
            [(0, [link("file:///a", R1, R2)]), (1, [loc("file:///a", R1), loc("file:///c", R2)])],
            [loc("file:///a", R1), loc("file:///c", R2)],
        ),
        (  # a link without a selection range uses its target range
            [(0, [{"targetUri": "file:///a", "targetRange": R2}]), (1, loc("file:///b", R1))],
            [loc("file:///a", R2), loc("file:///b", R1)],
        ),
    ],
)
def test_locations(results: merge.Results, expected: Any) -> None:
    assert merge.locations(results) == expected


# -- code actions --------------------------------------------------------------------------------------


def test_code_actions_tag_code_actions_but_not_commands() -> None:
    command = {"title": "Run", "command": "x.run", "arguments": [1]}
    command_no_args = {"title": "Organize", "command": "x.organize"}
    action = {"title": "Fix", "kind": "quickfix", "data": {"id": 9}}
    action_with_command = {"title": "Fix+", "command": {"title": "c", "command": "x.c"}}
    out = merge.code_actions(
        [(0, [command, action]), (1, None), (2, [command_no_args, action_with_command])]
    )
    assert out[0] == {"title": "Run", "command": "x.run", "arguments": [1]}
    assert out[2] == {"title": "Organize", "command": "x.organize"}
    assert merge.untag(out[1]) == (0, {"title": "Fix", "kind": "quickfix", "data": {"id": 9}})
    assert merge.untag(out[3])[0] == 2
    assert merge.untag(out[3])[1] == {"title": "Fix+", "command": {"title": "c", "command": "x.c"}}


def test_code_actions_of_nothing() -> None:
    assert merge.code_actions([(0, None)]) is None
    assert merge.code_actions([(0, [])]) == []


# -- tagged lists, concat, workspace edits ---------------------------------------------------------


def test_tagged_list_tags_and_dedupes_across_servers() -> None:
    lens = {"range": R1, "command": {"title": "1 ref", "command": "x"}}
    out = merge.tagged_list([(0, [copy.deepcopy(lens)]), (1, [copy.deepcopy(lens), {"range": R2}])])
    assert [merge.untag(x) for x in out] == [(0, lens), (1, {"range": R2})]


def test_tagged_list_keeps_items_that_differ_in_data() -> None:
    a = {"range": R1, "data": 1}
    b = {"range": R1, "data": 2}
    out = merge.tagged_list([(0, [a]), (1, [b])])
    assert [merge.untag(x) for x in out] == [
        (0, {"range": R1, "data": 1}),
        (1, {"range": R1, "data": 2}),
    ]


def test_tagged_list_of_nothing() -> None:
    assert merge.tagged_list([(0, None)]) is None
    assert merge.tagged_list([(0, [])]) == []


def test_concat() -> None:
    sym = {"name": "A", "kind": 5, "range": R1, "selectionRange": R1}
    assert merge.concat([(0, [sym]), (1, [dict(sym), {"name": "B"}]), (2, None)]) == [
        sym,
        {"name": "B"},
    ]
    assert merge.concat([(0, None)]) is None


def test_workspace_edits_first_non_null() -> None:
    edit: dict[str, Any] = {"changes": {"file:///a": []}}
    assert merge.workspace_edits([(0, None), (1, edit), (2, {"changes": {}})]) == edit
    assert merge.workspace_edits([(0, None)]) is None


def test_every_merged_route_names_its_merger() -> None:
    merged = {m: r for m, r in ROUTES.items() if r.policy is Policy.MERGE}
    assert all(r.merger is not None for r in merged.values())
    assert merged[t.TEXT_DOCUMENT_COMPLETION].merger is merge.completion
    assert merged[t.TEXT_DOCUMENT_REFERENCES].merger is merge.locations
