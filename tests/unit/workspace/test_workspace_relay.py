"""Relaying watched-file registrations to a client: capability check, id remapping, routing."""

from __future__ import annotations

from typing import Any

import pytest

from lspmux.workspace.relay import Relay, client_watches, for_client

NVIM = {
    "workspace": {
        "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True}
    }
}


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        (NVIM, True),
        ({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": False}}}, False),
        ({"workspace": {"didChangeWatchedFiles": {}}}, False),
        ({"workspace": {}}, False),
        ({}, False),
        (None, False),
    ],
)
def test_client_watches(caps: dict[str, Any] | None, expected: bool) -> None:
    assert client_watches(caps) is expected


def reg(rid: str, *globs: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "method": "workspace/didChangeWatchedFiles",
        "registerOptions": {"watchers": [{"globPattern": g} for g in globs]},
    }


def test_ids_are_remapped_and_unregistered() -> None:
    relay: Relay[str] = Relay(NVIM)
    a = relay.register("ruff", reg("1", "**/ruff.toml"))
    b = relay.register("pyright", reg("1", "**/*.py"))
    assert a["id"] != b["id"]  # both backends said "1"
    assert a["registerOptions"] == {"watchers": [{"globPattern": "**/ruff.toml"}]}
    assert relay.backend_of(a["id"]) == ("ruff", "1")
    assert relay.client_id("pyright", "1") == b["id"]
    again = relay.register("ruff", reg("1", "**/pyproject.toml"))  # re-registered: same id
    assert again["id"] == a["id"]
    out = relay.unregister("ruff", {"id": "1", "method": "workspace/didChangeWatchedFiles"})
    assert out == {"id": a["id"], "method": "workspace/didChangeWatchedFiles"}
    assert relay.backend_of(a["id"]) is None
    assert relay.unregister("ruff", {"id": "1", "method": "x"}) is None


def test_other_methods_are_remapped_too_and_forgotten() -> None:
    relay: Relay[int] = Relay()
    r = relay.register(3, {"id": "fmt", "method": "textDocument/formatting"})
    w = relay.register(3, reg("w", "**/*.c"))
    assert "registerOptions" not in r
    assert sorted(relay.forget(3), key=lambda u: u["id"]) == sorted(
        [
            {"id": r["id"], "method": "textDocument/formatting"},
            {"id": w["id"], "method": "workspace/didChangeWatchedFiles"},
        ],
        key=lambda u: u["id"],
    )
    assert relay.forget(3) == []


def test_client_events_are_routed_to_the_backends_that_asked() -> None:
    relay: Relay[str] = Relay(NVIM)
    relay.register("ruff", reg("1", "**/ruff.toml", "**/pyproject.toml"))
    relay.register(
        "clangd", reg("1", {"baseUri": "file:///ws", "pattern": "compile_commands.json"})
    )
    params = {
        "changes": [
            {"uri": "file:///ws/ruff.toml", "type": 2},
            {"uri": "file:///ws/compile_commands.json", "type": 1},
            {"uri": "file:///ws/main.c", "type": 2},
        ]
    }
    assert relay.route(params) == {
        "ruff": {"changes": [{"uri": "file:///ws/ruff.toml", "type": 2}]},
        "clangd": {"changes": [{"uri": "file:///ws/compile_commands.json", "type": 1}]},
    }
    relay.unregister("ruff", {"id": "1", "method": "workspace/didChangeWatchedFiles"})
    assert set(relay.route(params)) == {"clangd"}


def test_relative_patterns_become_strings_for_a_client_without_them() -> None:
    options = {
        "watchers": [
            {"globPattern": {"baseUri": "file:///w%20s/a*b", "pattern": "**/*.h"}, "kind": 2}
        ]
    }
    assert for_client(options, relative_ok=True) == options
    assert for_client(options, relative_ok=False) == {
        "watchers": [{"globPattern": "/w s/a[*]b/**/*.h", "kind": 2}]
    }
    relay: Relay[str] = Relay(
        {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    )
    out = relay.register(
        "clangd",
        {"id": "1", "method": "workspace/didChangeWatchedFiles", "registerOptions": options},
    )
    assert out["registerOptions"]["watchers"][0]["globPattern"] == "/w s/a[*]b/**/*.h"
    # Routing still uses the backend's own RelativePattern.
    assert relay.route({"changes": [{"uri": "file:///w%20s/a%2Ab/x/y.h", "type": 2}]}) == {
        "clangd": {"changes": [{"uri": "file:///w%20s/a%2Ab/x/y.h", "type": 2}]}
    }
