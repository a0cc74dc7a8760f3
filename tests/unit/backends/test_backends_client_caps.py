"""What a backend is told about its client: for_backend (no richer than the client where the
answer goes straight back; what lspmux handles itself declared; one planned encoding),
merge_init_options, answered_encoding."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from lspmux.backends import client_caps as cc

# Neovim 0.11's shape: pull diagnostics without refresh, semantic tokens with delta, utf-8 first.
NEOVIM_LIKE: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
    "workspace": {
        "configuration": False,
        "workspaceFolders": False,
        "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
    },
    "textDocument": {
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "diagnostic": {"dynamicRegistration": False},
        "semanticTokens": {
            "requests": {"full": {"delta": True}, "range": False},
            "tokenTypes": [],
            "tokenModifiers": [],
            "formats": ["relative"],
        },
        "completion": {"completionItem": {"snippetSupport": False}},
    },
}
# An agent library's shape: plain text everywhere, no progress, no links.
PLAIN_AGENT: dict[str, Any] = {
    "textDocument": {
        "hover": {"contentFormat": ["plaintext"]},
        "completion": {"completionItem": {"documentationFormat": ["plaintext"]}},
        "definition": {},
    },
}
# nvim-lspconfig's clangd setup adds clangd's offsetEncoding extension.
CLANGD_SETUP: dict[str, Any] = {**NEOVIM_LIKE, "offsetEncoding": ["utf-8", "utf-16"]}


@pytest.mark.parametrize(
    "client", [None, {}, NEOVIM_LIKE, PLAIN_AGENT, cc.LSPMUX_CLIENT_CAPABILITIES]
)
def test_for_backend_declares_what_lspmux_answers(client: dict[str, Any] | None) -> None:
    out = cc.for_backend(client)
    assert out["general"]["positionEncodings"] == ["utf-16"]
    ws = out["workspace"]
    assert ws["configuration"] is True
    assert ws["workspaceFolders"] is True
    assert ws["didChangeConfiguration"]["dynamicRegistration"] is True
    assert ws["didChangeWatchedFiles"]["dynamicRegistration"] is True
    published = out["textDocument"]["publishDiagnostics"]
    assert published["versionSupport"] is True and published["relatedInformation"] is True
    for section in ("completion", "hover", "definition", "codeAction", "inlayHint"):
        assert out["textDocument"][section]["dynamicRegistration"] is True


@pytest.mark.parametrize(
    "client", [None, {}, NEOVIM_LIKE, {"window": {"workDoneProgress": False}}, {"window": "junk"}]
)
def test_for_backend_every_server_may_report_progress(client: dict[str, Any] | None) -> None:
    """lspmux takes a server's progress whatever the client takes (rust-analyzer's says when it
    has loaded its project: backends/loading.py); families/progress.py passes it on only to a
    client that declared `window.workDoneProgress`."""
    assert cc.for_backend(client)["window"]["workDoneProgress"] is True


def test_for_backend_is_no_richer_than_the_client() -> None:
    out = cc.for_backend(PLAIN_AGENT)["textDocument"]
    assert out["hover"]["contentFormat"] == ["plaintext"]
    assert out["completion"]["completionItem"] == {"documentationFormat": ["plaintext"]}
    assert "linkSupport" not in out["definition"]
    assert "linkSupport" not in out["declaration"]  # created for registration only
    assert "snippetSupport" not in out["completion"]["completionItem"]
    nvim = cc.for_backend(NEOVIM_LIKE)["textDocument"]
    assert nvim["completion"]["completionItem"]["snippetSupport"] is False
    assert cc.for_backend({})["window"] == {"workDoneProgress": True}
    assert cc.for_backend({})["textDocument"]["hover"] == {"dynamicRegistration": True}


def test_for_backend_a_client_that_declared_nothing_gets_nothing_rich() -> None:
    bare = cc.for_backend({})
    rich = cc.for_backend(None)  # a shared backend: lspmux adapts each answer
    assert "contentFormat" not in bare["textDocument"]["hover"]
    assert rich["textDocument"]["hover"]["contentFormat"] == ["markdown", "plaintext"]
    assert rich["textDocument"]["completion"]["completionItem"]["snippetSupport"] is True


def test_for_backend_semantic_tokens_full_only() -> None:
    out = cc.for_backend(NEOVIM_LIKE)["textDocument"]["semanticTokens"]
    assert out["requests"] == {"full": True, "range": False}  # lspmux bridges the deltas
    assert out["tokenTypes"] == [] and out["formats"] == ["relative"]
    assert out["dynamicRegistration"] is True
    shared = cc.for_backend(None)["textDocument"]["semanticTokens"]
    assert shared["requests"]["full"] is True and "class" in shared["tokenTypes"]


@pytest.mark.parametrize("client", [{}, {"textDocument": {"hover": {}}}])
def test_for_backend_never_invents_a_semantic_tokens_section(client: dict[str, Any]) -> None:
    assert "semanticTokens" not in cc.for_backend(client)["textDocument"]


@pytest.mark.parametrize("pull", [False, True])
def test_for_backend_pull_diagnostics_per_delivery(pull: bool) -> None:
    out = cc.for_backend(NEOVIM_LIKE, pull_diagnostics=pull)
    if pull:
        assert out["textDocument"]["diagnostic"]["dynamicRegistration"] is True
        assert out["workspace"]["diagnostics"] == {"refreshSupport": True}
    else:  # the client's own pull section never reaches a backend
        assert "diagnostic" not in out["textDocument"]
        assert "diagnostics" not in out["workspace"]


@pytest.mark.parametrize(
    ("client", "relative"),
    [(NEOVIM_LIKE, True), ({}, False), ({"workspace": {"didChangeWatchedFiles": {}}}, False)],
)
def test_for_backend_watched_files(client: dict[str, Any], relative: bool) -> None:
    watched = cc.for_backend(client)["workspace"]["didChangeWatchedFiles"]
    assert watched["dynamicRegistration"] is True
    assert bool(watched.get("relativePatternSupport")) is relative


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_for_backend_one_planned_encoding(encoding: str) -> None:
    out = cc.for_backend(CLANGD_SETUP, position_encoding=encoding)
    assert out["general"]["positionEncodings"] == [encoding]
    assert out["offsetEncoding"] == [encoding]  # clangd's extension narrowed to the plan
    assert "offsetEncoding" not in cc.for_backend(NEOVIM_LIKE, position_encoding=encoding)


def test_for_backend_does_not_touch_its_input() -> None:
    client = copy.deepcopy(CLANGD_SETUP)
    cc.for_backend(client, pull_diagnostics=True)
    assert client == CLANGD_SETUP
    before = copy.deepcopy(cc.LSPMUX_CLIENT_CAPABILITIES)
    cc.for_backend(None, position_encoding="utf-8")
    assert before == cc.LSPMUX_CLIENT_CAPABILITIES


# -- initializationOptions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "configured", "expected"),
    [
        (None, None, None),
        ({"a": 1}, None, {"a": 1}),
        (None, {"a": 1}, {"a": 1}),
        ({"a": 1, "b": 2}, {"b": 3}, {"a": 1, "b": 3}),  # config wins
        (
            {"python": {"analysis": {"mode": "basic", "paths": ["x"]}}, "client": True},
            {"python": {"analysis": {"mode": "strict"}}},
            {"python": {"analysis": {"mode": "strict", "paths": ["x"]}}, "client": True},
        ),
        ({"list": [1, 2]}, {"list": [3]}, {"list": [3]}),  # lists are replaced, not joined
        ({"a": {"b": 1}}, {"a": 5}, {"a": 5}),
        ({"a": 5}, {"a": {"b": 1}}, {"a": {"b": 1}}),
        ("not a table", {"a": 1}, {"a": 1}),
        ({"a": 1}, "scalar", "scalar"),
    ],
)
def test_merge_init_options(client: Any, configured: Any, expected: Any) -> None:
    before = (copy.deepcopy(client), copy.deepcopy(configured))
    got = cc.merge_init_options(client, configured)
    assert got == expected
    assert (client, configured) == before
    if isinstance(got, dict) and isinstance(configured, dict):  # no shared nested objects
        for key, value in configured.items():
            if isinstance(value, dict):
                assert got[key] is not value


@pytest.mark.parametrize(
    ("result", "encoding"),
    [
        (None, "utf-16"),
        ({"capabilities": {}}, "utf-16"),
        ({"capabilities": {"positionEncoding": "utf-8"}}, "utf-8"),
        ({"capabilities": {}, "offsetEncoding": "utf-8"}, "utf-8"),  # clangd's extension
        ({"capabilities": {"positionEncoding": "utf-32"}, "offsetEncoding": "utf-8"}, "utf-32"),
    ],
)
def test_answered_encoding(result: dict[str, Any] | None, encoding: str) -> None:
    assert cc.answered_encoding(result) == encoding


def test_answered_encoding_of_real_clangd(recorded: Any) -> None:
    clangd = recorded("clangd")
    assert cc.answered_encoding({"capabilities": clangd["capabilities"]}) == "utf-16"
    assert clangd["sent"]["general"]["positionEncodings"] == ["utf-16"]
