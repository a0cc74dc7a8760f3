"""DiagnosticStore: slices per (uri, source), stale versions, the merged view, attribution."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lspmux.diagnostics.store import DiagnosticStore

URI = "file:///p/a.py"
OTHER = "file:///p/b.py"


def diag(line: int, message: str, code: str | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "range": {
            "start": {"line": line, "character": 0},
            "end": {"line": line, "character": 3},
        },
        "message": message,
    }
    if code is not None:
        d["code"] = code
    d.update(extra)
    return d


def messages(store: DiagnosticStore, uri: str = URI) -> list[tuple[str, str]]:
    return [(d["source"], d["message"]) for d in store.merged(uri)]


# -- publishing: table of (operations, expected merged) -------------------------------------

A1, A2 = diag(1, "a1"), diag(2, "a2")
B1 = diag(1, "b1")

CASES: list[tuple[str, list[tuple[str, list[dict[str, Any]]]], list[tuple[str, str]]]] = [
    ("one source", [("pyright", [A1, A2])], [("pyright", "a1"), ("pyright", "a2")]),
    (
        "a publish replaces only its own slice",
        [("pyright", [A1, A2]), ("ruff", [B1]), ("pyright", [A2])],
        [("pyright", "a2"), ("ruff", "b1")],
    ),
    (
        "clearing: [] removes that source's old diagnostics",
        [("pyright", [A1]), ("ruff", [B1]), ("ruff", [])],
        [("pyright", "a1")],
    ),
    (
        "order: by source first publish, then as reported",
        [("ruff", [B1]), ("pyright", [A2, A1]), ("ruff", [B1])],
        [("ruff", "b1"), ("pyright", "a2"), ("pyright", "a1")],
    ),
    (
        "a server's own source is kept",
        [("pyls", [diag(1, "x", source="pyflakes")])],
        [("pyflakes", "x")],
    ),
    (
        "identical range+message+code from two sources appears once",
        [("pyright", [diag(1, "same", "E1")]), ("basedpyright", [diag(1, "same", "E1")])],
        [("pyright", "same")],
    ),
    (
        "a different code is a different diagnostic",
        [("pyright", [diag(1, "same", "E1")]), ("basedpyright", [diag(1, "same", "E2")])],
        [("pyright", "same"), ("basedpyright", "same")],
    ),
]


@pytest.mark.parametrize(("name", "ops", "expected"), CASES, ids=[c[0] for c in CASES])
def test_update_and_merged(
    name: str, ops: list[tuple[str, list[dict[str, Any]]]], expected: list[tuple[str, str]]
) -> None:
    store = DiagnosticStore()
    for source, diagnostics in ops:
        store.update(URI, source, diagnostics)
    assert messages(store) == expected
    assert store.merged(OTHER) == []


def test_stale_versions_are_dropped() -> None:
    store = DiagnosticStore()
    store.set_version(URI, 5)
    assert store.update(URI, "pyright", [A1], version=5) is True
    assert store.update(URI, "pyright", [A2], version=4) is False  # older than the document
    assert messages(store) == [("pyright", "a1")]
    assert store.update(URI, "pyright", [A2], version=None) is True  # unversioned: accepted
    store.set_version(URI, 7)
    assert store.update(URI, "ruff", [B1], version=6) is False
    assert store.update(URI, "ruff", [B1], version=8) is True  # newer than known: accepted
    assert messages(store) == [("pyright", "a2"), ("ruff", "b1")]


def test_slice_returns_originals_with_data() -> None:
    store = DiagnosticStore()
    original = diag(1, "a1", data={"fix": 1})
    store.update(URI, "ruff", [original])
    assert store.slice(URI, "ruff") == [original]
    assert "source" not in store.slice(URI, "ruff")[0]  # the original is untouched
    assert store.merged(URI)[0]["source"] == "ruff"
    assert store.slice(URI, "nobody") == []


def test_attribute_returns_each_source_its_originals() -> None:
    store = DiagnosticStore()
    a = diag(1, "unused import", "F401", data={"ruff": "fix-1"})
    b = diag(2, "type error", "reportGeneralTypeIssues", data={"pyright": 7})
    shared_p = diag(3, "dup", "X", data={"from": "pyright"})
    shared_b = diag(3, "dup", "X", data={"from": "basedpyright"})
    store.update(URI, "ruff", [a])
    store.update(URI, "pyright", [b, shared_p])
    store.update(URI, "basedpyright", [shared_b])
    # What the client sends back: the merged copies, `data` possibly dropped by the client.
    sent = [{k: v for k, v in d.items() if k != "data"} for d in store.merged(URI)]
    unknown = diag(9, "not from us")
    got = store.attribute(URI, [*sent, unknown])
    assert got["ruff"] == [a, unknown]
    assert got["pyright"] == [b, shared_p, unknown]
    # The deduplicated one stands for both sources' originals.
    assert got["basedpyright"] == [shared_b, unknown]
    assert got["ruff"][0]["data"] == {"ruff": "fix-1"}
    assert "source" not in got["ruff"][0]


def test_attribute_matches_source_when_the_client_kept_it() -> None:
    store = DiagnosticStore()
    mine = diag(1, "m", "C")
    store.update(URI, "ruff", [mine])
    store.update(URI, "pyright", [])
    renamed = {**mine, "source": "somebody-else"}
    got = store.attribute(URI, [renamed])
    # Not ours (the source differs): goes, as sent, to every source.
    assert got == {"ruff": [renamed], "pyright": [renamed]}
    got = store.attribute(URI, [{**mine, "source": "ruff"}])
    assert got == {"ruff": [mine], "pyright": []}
    got = store.attribute(URI, [mine], sources=["ruff", "pyright", "clangd"])
    assert got == {"ruff": [mine], "pyright": [], "clangd": []}


def test_attribute_restores_the_servers_own_source() -> None:
    store = DiagnosticStore()
    original = diag(1, "m", "C", source="pyflakes", data=3)
    store.update(URI, "pylsp", [original])
    got = store.attribute(URI, [{**original, "data": None}])
    assert got == {"pylsp": [original]}


def test_result_id_changes_iff_merged_changes() -> None:
    store = DiagnosticStore()
    steps: list[tuple[str, list[dict[str, Any]]]] = [
        ("pyright", [A1]),  # changes
        ("pyright", [A1]),  # same again: no change
        ("ruff", []),  # a new empty source: no change
        ("ruff", [diag(1, "a1")]),  # a duplicate of pyright's, hidden: merged unchanged
        ("ruff", [B1]),  # changes
        ("pyright", [A1]),  # no change
        ("ruff", []),  # changes
    ]
    seen = {store.result_id(URI)}
    for source, diagnostics in steps:
        before_id, before = store.result_id(URI), list(store.merged(URI))
        changed = store.update(URI, source, diagnostics)
        after = store.merged(URI)
        assert changed == (after != before), (source, diagnostics)
        assert (store.result_id(URI) != before_id) == changed, (source, diagnostics)
        if changed:
            assert store.result_id(URI) not in seen  # never reused
            seen.add(store.result_id(URI))


def test_forget_and_drop_source() -> None:
    store = DiagnosticStore()
    store.update(URI, "ruff", [A1])
    store.update(URI, "pyright", [A2])
    store.update(OTHER, "pyright", [B1])
    store.set_version("file:///p/c.py", 1)
    assert sorted(store.uris()) == sorted([URI, OTHER, "file:///p/c.py"])
    assert sorted(store.drop_source("pyright")) == sorted([URI, OTHER])
    assert messages(store) == [("ruff", "a1")]
    assert store.merged(OTHER) == []
    assert store.drop_source("pyright") == []
    old_id = store.result_id(URI)
    store.forget(URI)
    assert store.merged(URI) == []
    assert store.result_id(URI) != old_id
    assert URI not in store.uris()


def test_publishing_one_file_does_not_touch_the_others() -> None:
    """With 1,000 open files, publishing for one rebuilds only that file's merged list."""
    store = DiagnosticStore()
    uris = [f"file:///p/f{i}.py" for i in range(1000)]
    for uri in uris:
        store.update(uri, "pyright", [diag(n, f"m{n}") for n in range(20)])
        store.update(uri, "ruff", [diag(n, f"r{n}") for n in range(20)])
    cached = {uri: store.merged(uri) for uri in uris}
    started = time.perf_counter()
    for n in range(1000):
        store.update(uris[0], "ruff", [diag(n % 40, f"new{n}")])
        store.merged(uris[0])
    elapsed = time.perf_counter() - started
    for uri in uris[1:]:
        assert store.merged(uri) is cached[uri]  # the cache of other files survived
    assert len(store.merged(uris[0])) == 21
    assert elapsed < 1.0, f"1,000 publishes for one file took {elapsed:.2f}s"


def test_a_source_is_fresh_only_for_the_version_it_reported_on() -> None:
    """Before: a source that had reported once counted as reported after every edit, so
    `lspmux diagnostics` could return a diagnostic the edit had fixed."""
    store = DiagnosticStore()
    store.set_version("file:///a", 1)
    store.update("file:///a", "clangd", [], 1)
    assert store.fresh_sources("file:///a") == {"clangd"}
    store.set_version("file:///a", 2)
    assert store.fresh_sources("file:///a") == set()
    assert not store.update("file:///a", "clangd", [], 1)  # stale: still not fresh
    assert store.fresh_sources("file:///a") == set()
    store.update("file:///a", "clangd", [], 2)
    assert store.fresh_sources("file:///a") == {"clangd"}
