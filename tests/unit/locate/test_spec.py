"""The JSON object form of `locate`: accepted shapes and InvalidParams for the rest."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.errors import InvalidParams
from lspmux.locate.spec import DEFAULT_THRESHOLD, Scope, Spec, Target, target_from_json


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            {"file_path": "a.py", "scope": {"symbol_path": ["A", "f"]}, "find": "x"},
            Target(Spec(Scope.symbol("A", "f"), "x"), file_path="a.py"),
        ),
        (
            {"uri": "file:///a.py", "scope": {"line": 3}},
            Target(Spec(Scope.line_range(3)), uri="file:///a.py"),
        ),
        (
            {"file_path": "a.py", "scope": {"line": [3, 5]}},
            Target(Spec(Scope.line_range(3, 5)), file_path="a.py"),
        ),
        # scope members given directly, camelCase aliases, a scope string
        (
            {"file_path": "a.py", "symbol_path": ["A"]},
            Target(Spec(Scope.symbol("A")), file_path="a.py"),
        ),
        (
            {"filePath": "a.py", "line": 7, "find": "y", "findIndex": 2},
            Target(Spec(Scope.line_range(7), "y", 2), file_path="a.py"),
        ),
        (
            {"file_path": "a.py", "scope": "A.f"},
            Target(Spec(Scope.symbol("A", "f")), file_path="a.py"),
        ),
        (
            {"file_path": "a.py", "scope": "L4-6"},
            Target(Spec(Scope.line_range(4, 6)), file_path="a.py"),
        ),
        (
            {"file_path": "a.py", "symbol_path": "A.f"},
            Target(Spec(Scope.symbol("A", "f")), file_path="a.py"),
        ),
        ({"find": "x", "marker": "<HERE>", "scope": None}, Target(Spec(Scope(), "x", 0, "<HERE>"))),
        # fuzzy: true (the default threshold), a threshold, or off
        ({"find": "x", "fuzzy": True}, Target(Spec(Scope(), "x", fuzzy=DEFAULT_THRESHOLD))),
        ({"find": "x", "fuzzy": 0.8}, Target(Spec(Scope(), "x", fuzzy=0.8))),
        ({"find": "x", "fuzzy": 1}, Target(Spec(Scope(), "x", fuzzy=1.0))),
        ({"find": "x", "fuzzy": False}, Target(Spec(Scope(), "x"))),
        ({"find": "x", "fuzzy": None}, Target(Spec(Scope(), "x"))),
    ],
)
def test_accepted(obj: dict[str, Any], expected: Target) -> None:
    assert target_from_json(obj) == expected


@pytest.mark.parametrize(
    ("obj", "problem"),
    [
        ({"file_path": "a.py"}, "nothing to locate"),
        ({"file_path": "a.py", "line": 0}, "1-based"),
        ({"file_path": "a.py", "line": [5, 2]}, "reversed"),
        ({"file_path": "a.py", "line": [0, 2]}, "1-based"),
        ({"file_path": "a.py", "line": True}, "bad line"),
        ({"file_path": "a.py", "line": "x"}, "bad line"),
        ({"file_path": "a.py", "symbol_path": []}, "bad symbol_path"),
        ({"file_path": "a.py", "symbol_path": ["A", ""]}, "bad symbol_path"),
        ({"file_path": "a.py", "scope": {"line": 1, "symbol_path": ["A"]}}, "exactly one"),
        ({"file_path": "a.py", "scope": {"lin": 1}}, "exactly one"),
        ({"file_path": "a.py", "line": 1, "scope": {"line": 2}}, "give one scope"),
        ({"file_path": "a.py", "find": ""}, "find is empty"),
        ({"file_path": "a.py", "find": 3}, "bad find"),
        ({"file_path": "a.py", "find": "x", "find_index": -1}, "bad find_index"),
        ({"file_path": "a.py", "find": "x", "find_index": "1"}, "bad find_index"),
        ({"file_path": "a.py", "line": 1, "find_index": 1}, "needs a find"),
        ({"file_path": "a.py", "find": "x", "marker": ""}, "bad marker"),
        ({"file_path": "a.py", "find": "x", "fnd": "y"}, "unknown locate field"),
        ({"file_path": "a.py", "uri": "file:///a.py", "find": "x"}, "not both"),
        ({"file_path": 3, "find": "x"}, "bad file_path"),
        ({"file_path": "a.py", "find": "x", "fuzzy": 0}, "bad fuzzy"),
        ({"file_path": "a.py", "find": "x", "fuzzy": 1.5}, "bad fuzzy"),
        ({"file_path": "a.py", "find": "x", "fuzzy": "yes"}, "bad fuzzy"),
        ({"file_path": "a.py", "line": 3, "fuzzy": True}, "fuzzy needs a find"),
    ],
)
def test_rejected_with_invalid_params(obj: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidParams) as err:
        target_from_json(obj)
    assert err.value.CODE == -32602
    assert problem in err.value.message
    assert "symbol_path" in err.value.message  # the accepted syntax is part of the message
    assert err.value.to_response_error()["data"]["problem"] in err.value.message


def test_to_json() -> None:
    assert Spec(Scope.symbol("A", "f"), "x", 2).to_json() == {
        "scope": {"symbol_path": ["A", "f"]},
        "find": "x",
        "find_index": 2,
    }
    assert Spec(Scope.line_range(3)).to_json() == {"scope": {"line": 3}}
    assert Spec(Scope(), "y", fuzzy=DEFAULT_THRESHOLD).to_json() == {"find": "y", "fuzzy": True}
    assert Spec(Scope(), "y", fuzzy=0.75).to_json() == {"find": "y", "fuzzy": 0.75}
    assert Spec(Scope.line_range(3, 4), "y", marker="#").to_json() == {
        "scope": {"line": [3, 4]},
        "find": "y",
        "marker": "#",
    }
