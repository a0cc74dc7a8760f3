"""Symbol trees: nesting by containment, duplicates, loose names, paths, candidates."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.locate.symbols import candidates, enclosing, find_path, loose_name, tree, walk
from lspmux.text import line_starts

TEXT = "\n".join(f"line {i:02d} " + "x" * 30 for i in range(20)) + "\n"
STARTS = line_starts(TEXT)


def info(name: str, a: int, b: int, container: str | None = None) -> dict[str, Any]:
    """A SymbolInformation spanning lines a..b (whole lines)."""
    rng = {"start": {"line": a, "character": 0}, "end": {"line": b, "character": 38}}
    out: dict[str, Any] = {"name": name, "kind": 12, "location": {"uri": "file:///t", "range": rng}}
    if container:
        out["containerName"] = container
    return out


def doc(name: str, a: int, b: int, children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    rng = {"start": {"line": a, "character": 0}, "end": {"line": b, "character": 38}}
    sel = {"start": {"line": a, "character": 5}, "end": {"line": a, "character": 7}}
    return {
        "name": name,
        "kind": 5,
        "range": rng,
        "selectionRange": sel,
        "children": children or [],
    }


def paths(symbols: list[dict[str, Any]]) -> list[str]:
    return [".".join(p) for p, _ in walk(tree(symbols, TEXT, STARTS, "utf-16"))]


def test_flat_symbols_nest_by_containment_in_any_order() -> None:
    flat = [
        info("m2", 6, 8, "A"),
        info("B", 10, 12),
        info("A", 1, 8),
        info("m1", 2, 4, "A"),
        info("inner", 3, 3),
    ]
    assert paths(flat) == ["A", "A.m1", "A.m1.inner", "A.m2", "B"]


def test_flat_document_symbols_nest_too() -> None:
    assert paths([doc("A", 0, 9), doc("f", 2, 3), doc("g", 11, 12)]) == ["A", "A.f", "g"]


def test_duplicates_from_two_backends_are_merged() -> None:
    one = [doc("A", 0, 9, [doc("f", 2, 3)])]
    two = [info("A", 0, 9), info("f", 2, 3, "A"), info("g", 5, 6, "A")]
    assert paths(one + two) == ["A", "A.f", "A.g"]


def test_mixed_and_malformed_entries() -> None:
    bad: list[Any] = [{"name": "broken"}, "nonsense", {"name": "x", "range": {"start": {}}}]
    assert paths([*bad, doc("A", 0, 2)]) == ["A"]


def test_flat_symbols_get_their_name_as_selection() -> None:
    text = "@decorator\ndef handler(x):\n    return x\n"
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 12}}
    roots = tree(
        [{"name": "handler", "kind": 12, "location": {"uri": "u", "range": rng}}],
        text,
        line_starts(text),
        "utf-16",
    )
    assert text[roots[0].sel_start : roots[0].sel_end] == "handler"


def test_tree_is_cached_by_identity() -> None:
    symbols = [doc("A", 0, 2)]
    assert tree(symbols, TEXT, STARTS, "utf-16") is tree(symbols, TEXT, STARTS, "utf-16")
    assert tree(symbols, TEXT, STARTS, "utf-8") is not tree(symbols, TEXT, STARTS, "utf-16")


@pytest.mark.parametrize(
    ("name", "loose"),
    [
        ("greet", "greet"),
        ("greet(self, message)", "greet"),
        ("impl Greeter", "Greeter"),
        ("impl<T: Clone> Display for Greeter<T>", "Greeter"),
        ("ns::inner::Greeter", "Greeter"),
        ("Vec<T>", "Vec"),
    ],
)
def test_loose_names(name: str, loose: str) -> None:
    assert loose_name(name) == loose


def test_find_path_exact_then_loose_then_suffix() -> None:
    roots = tree(
        [
            doc("impl Greeter", 0, 9, [doc("greet(&self)", 1, 3), doc("new", 4, 5)]),
            doc("Greeter", 10, 12, [doc("x", 11, 11)]),
        ],
        TEXT,
        STARTS,
        "utf-16",
    )
    chain, _ = find_path(roots, ("Greeter", "x"))
    assert chain is not None and [s.name for s in chain] == ["Greeter", "x"]  # exact
    chain, _ = find_path(roots, ("Greeter", "greet"))
    assert chain is not None and [s.name for s in chain] == [
        "impl Greeter",
        "greet(&self)",
    ]  # loose
    chain, _ = find_path(roots, ("new",))
    assert chain is not None and chain[-1].name == "new"  # a unique suffix
    chain, ambiguous = find_path(roots, ("nope",))
    assert chain is None and ambiguous == []


def test_candidates() -> None:
    roots = tree(
        [doc("Greeter", 0, 9, [doc("greet", 1, 3), doc("farewell", 4, 5)]), doc("main", 10, 12)],
        TEXT,
        STARTS,
        "utf-16",
    )
    assert candidates(roots, ("Greeter", "gret"))[0] == ["Greeter", "greet"]
    assert ["Greeter", "farewell"] in candidates(
        roots, ("Greeter", "zzz")
    )  # children of the prefix
    assert candidates(roots, ("zzz",)) == [["Greeter"], ["main"]]  # the top level


def test_enclosing() -> None:
    roots = tree([doc("A", 1, 9, [doc("f", 2, 3)])], TEXT, STARTS, "utf-16")
    assert [s.name for s in enclosing(roots, (2, 4))] == ["A", "f"]
    assert [s.name for s in enclosing(roots, (5, 0))] == ["A"]
    assert enclosing(roots, (15, 0)) == []
    assert enclosing(roots, (9, 38)) == []  # the end of a range is outside it
