"""Capabilities both ways: for_backend, supports, merge_for_client, the cache, and
configuration_item (workspace/configuration answers)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from lspmux.backends import capabilities as caps
from lspmux.backends.backend import configuration_item
from lspmux.routing.table import ROUTES, Policy

# -- for_backend ------------------------------------------------------------------------------------

NEOVIM_LIKE: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
    "workspace": {"configuration": False, "workspaceFolders": False},
    "textDocument": {
        "hover": {"contentFormat": ["markdown"]},
        "diagnostic": {"dynamicRegistration": False},
        "semanticTokens": {
            "requests": {"full": True},
            "tokenTypes": [],
            "tokenModifiers": [],
            "formats": ["relative"],
        },
    },
}


@pytest.mark.parametrize("client", [None, {}, NEOVIM_LIKE, caps.LSPMUX_CLIENT_CAPABILITIES])
def test_for_backend_forces_utf16_and_declares_what_lspmux_answers(
    client: dict[str, Any] | None,
) -> None:
    out = caps.for_backend(client)
    assert out["general"]["positionEncodings"] == ["utf-16"]
    assert out["workspace"]["configuration"] is True
    assert out["workspace"]["workspaceFolders"] is True
    assert out["workspace"]["didChangeConfiguration"]["dynamicRegistration"] is True
    assert out["window"]["workDoneProgress"] is True
    assert out["textDocument"]["publishDiagnostics"]["versionSupport"] is True
    for section in ("completion", "hover", "definition", "codeAction", "inlayHint"):
        assert out["textDocument"][section]["dynamicRegistration"] is True


@pytest.mark.parametrize("client", [None, {}, {"textDocument": {"hover": {}}}])
def test_for_backend_never_invents_a_semantic_tokens_section(client: dict[str, Any] | None) -> None:
    assert "semanticTokens" not in caps.for_backend(client)["textDocument"]


def test_for_backend_keeps_a_declared_semantic_tokens_section() -> None:
    out = caps.for_backend(NEOVIM_LIKE)["textDocument"]["semanticTokens"]
    assert out["tokenTypes"] == [] and out["formats"] == ["relative"]
    assert out["dynamicRegistration"] is True


def test_for_backend_does_not_touch_the_clients_dict() -> None:
    client = copy.deepcopy(NEOVIM_LIKE)
    caps.for_backend(client)
    assert client == NEOVIM_LIKE
    caps.for_backend(None)
    assert caps.LSPMUX_CLIENT_CAPABILITIES["general"]["positionEncodings"] == ["utf-16"]
    assert "dynamicRegistration" not in caps.LSPMUX_CLIENT_CAPABILITIES["textDocument"]["hover"]


def test_for_backend_keeps_the_clients_other_choices() -> None:
    out = caps.for_backend(NEOVIM_LIKE)
    assert out["textDocument"]["hover"]["contentFormat"] == ["markdown"]


# -- supports ------------------------------------------------------------------------------------------


def _s(capabilities: dict[str, Any], method: str, registered: tuple[str, ...] = ()) -> bool:
    return caps.supports(capabilities, registered, method, ROUTES[method])


@pytest.mark.parametrize(
    ("capabilities", "method", "expected"),
    [
        ({"hoverProvider": True}, t.TEXT_DOCUMENT_HOVER, True),
        ({"hoverProvider": {}}, t.TEXT_DOCUMENT_HOVER, True),  # options object, empty
        ({"hoverProvider": {"workDoneProgress": False}}, t.TEXT_DOCUMENT_HOVER, True),
        ({"hoverProvider": False}, t.TEXT_DOCUMENT_HOVER, False),
        ({}, t.TEXT_DOCUMENT_HOVER, False),
        ({"completionProvider": {"triggerCharacters": ["."]}}, t.TEXT_DOCUMENT_COMPLETION, True),
        ({"renameProvider": True}, t.TEXT_DOCUMENT_PREPARE_RENAME, True),
        ({}, t.COMPLETION_ITEM_RESOLVE, True),  # origin routes: no capability needed
        ({}, t.TEXT_DOCUMENT_DID_OPEN, True),
        ({"textDocumentSync": 2}, t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL, False),
        ({"textDocumentSync": {"change": 2}}, t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL, False),
        (
            {"textDocumentSync": {"willSaveWaitUntil": True}},
            t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL,
            True,
        ),
    ],
)
def test_supports_static(capabilities: dict[str, Any], method: str, expected: bool) -> None:
    assert _s(capabilities, method) is expected


def test_supports_dynamic_registration() -> None:
    assert not _s({}, t.TEXT_DOCUMENT_FORMATTING)
    assert _s({}, t.TEXT_DOCUMENT_FORMATTING, (t.TEXT_DOCUMENT_FORMATTING,))
    assert not _s({}, t.TEXT_DOCUMENT_FORMATTING, (t.TEXT_DOCUMENT_RANGE_FORMATTING,))
    # a registration also makes a server eligible whose static capability says no
    assert _s({"hoverProvider": False}, t.TEXT_DOCUMENT_HOVER, (t.TEXT_DOCUMENT_HOVER,))


@pytest.mark.parametrize(
    ("ops", "method", "expected"),
    [
        ({"willRename": {"filters": []}}, t.WORKSPACE_WILL_RENAME_FILES, True),
        ({"willRename": {"filters": []}}, t.WORKSPACE_WILL_CREATE_FILES, False),
        ({"willCreate": {"filters": []}}, t.WORKSPACE_WILL_CREATE_FILES, True),
        ({"willDelete": {"filters": []}}, t.WORKSPACE_WILL_DELETE_FILES, True),
        ({"didRename": {"filters": []}}, t.WORKSPACE_WILL_RENAME_FILES, False),
        ({}, t.WORKSPACE_WILL_DELETE_FILES, False),
    ],
)
def test_supports_file_operations(ops: dict[str, Any], method: str, expected: bool) -> None:
    assert _s({"workspace": {"fileOperations": ops}}, method) is expected


def test_supports_file_operations_without_a_workspace_section() -> None:
    assert not _s({}, t.WORKSPACE_WILL_RENAME_FILES)
    assert not _s({"workspace": None}, t.WORKSPACE_WILL_RENAME_FILES)


def test_resolve_provider() -> None:
    assert caps.resolve_provider(
        {"completionProvider": {"resolveProvider": True}}, "completionProvider"
    )
    assert not caps.resolve_provider({"completionProvider": {}}, "completionProvider")
    assert not caps.resolve_provider({"completionProvider": True}, "completionProvider")


# -- merge_for_client -------------------------------------------------------------------------------

PYRIGHT = {
    "completionProvider": {"triggerCharacters": [".", "[", '"'], "resolveProvider": True},
    "signatureHelpProvider": {"triggerCharacters": ["(", ","], "retriggerCharacters": [")"]},
    "executeCommandProvider": {"commands": ["pyright.organizeimports"]},
    "hoverProvider": True,
}
RUFF = {
    "executeCommandProvider": {"commands": ["ruff.applyAutofix", "pyright.organizeimports"]},
    "codeActionProvider": {"codeActionKinds": ["quickfix"]},
    "documentOnTypeFormattingProvider": {
        "firstTriggerCharacter": "}",
        "moreTriggerCharacter": [";"],
    },
    "semanticTokensProvider": {"legend": {"tokenTypes": ["a"], "tokenModifiers": []}, "full": True},
}
OTHER = {
    "completionProvider": {"triggerCharacters": [".", "@"]},
    "signatureHelpProvider": {"triggerCharacters": ["<"]},
    "documentOnTypeFormattingProvider": {
        "firstTriggerCharacter": "\n",
        "moreTriggerCharacter": ["}"],
    },
}


def test_merge_for_client_unions_triggers_and_commands() -> None:
    out = caps.merge_for_client([PYRIGHT, RUFF, OTHER])
    assert out["positionEncoding"] == "utf-16"
    assert out["textDocumentSync"]["change"] == 2
    assert out["textDocumentSync"]["openClose"] is True
    assert out["completionProvider"] == {
        "triggerCharacters": [".", "[", '"', "@"],
        "resolveProvider": True,
    }
    assert out["signatureHelpProvider"] == {
        "triggerCharacters": ["(", ",", "<"],
        "retriggerCharacters": [")"],
    }
    assert out["executeCommandProvider"] == {
        "commands": ["pyright.organizeimports", "ruff.applyAutofix"]
    }
    assert out["documentOnTypeFormattingProvider"] == {
        "firstTriggerCharacter": "}",
        "moreTriggerCharacter": [";"],
    }
    assert out["semanticTokensProvider"]["legend"] == {"tokenTypes": ["a"], "tokenModifiers": []}
    assert out["workspace"]["workspaceFolders"] == {"supported": True, "changeNotifications": True}


def test_merge_for_client_announces_every_routed_feature() -> None:
    out = caps.merge_for_client([])
    for method, route in ROUTES.items():
        if route.policy in (Policy.BROADCAST, Policy.ORIGIN) or route.capability in (
            None,
            "workspace",
            "textDocumentSync",
            "diagnosticProvider",
            "semanticTokensProvider",  # needs a legend from some server
            "documentOnTypeFormattingProvider",  # needs a trigger character from some server
        ):
            continue
        assert out.get(route.capability), method
    assert "semanticTokensProvider" not in out
    assert "documentOnTypeFormattingProvider" not in out
    assert out["executeCommandProvider"] == {"commands": []}
    assert out["signatureHelpProvider"]["triggerCharacters"] == ["(", ","]


def test_merge_for_client_uses_fallback_triggers_for_unknown_servers() -> None:
    out = caps.merge_for_client([None, {"completionProvider": {"triggerCharacters": ["$"]}}])
    assert out["completionProvider"]["triggerCharacters"] == [*caps.FALLBACK_TRIGGERS, "$"]


# -- the cache -------------------------------------------------------------------------------------------


def test_cache_round_trip_under_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert caps.cache_dir() == tmp_path / "lspmux" / "capabilities"
    assert caps.load_cached("pyright") is None
    caps.store_cached("pyright", PYRIGHT)
    assert (tmp_path / "lspmux" / "capabilities" / "pyright.json").is_file()
    assert caps.load_cached("pyright") == PYRIGHT
    assert [p.name for p in caps.cache_dir().iterdir()] == ["pyright.json"]  # no temp file left


def test_cache_ignores_garbage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = caps.cache_dir()
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text("{not json")
    (folder / "list.json").write_text("[1]")
    assert caps.load_cached("bad") is None
    assert caps.load_cached("list") is None


# -- configuration_item ------------------------------------------------------------------------------

SETTINGS: dict[str, Any] = {
    "python": {"analysis": {"typeCheckingMode": "strict", "extraPaths": []}, "pythonPath": "/x"},
    "ruff": {"lineLength": 100},
    "flag": False,
}


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (None, SETTINGS),
        ("", SETTINGS),
        ("python", SETTINGS["python"]),
        ("python.analysis", SETTINGS["python"]["analysis"]),
        ("python.analysis.typeCheckingMode", "strict"),
        ("python.analysis.extraPaths", []),
        ("flag", False),
        ("python.missing", None),
        ("missing", None),
        ("python.pythonPath.deeper", None),  # through a string
        ("ruff.lineLength", 100),
    ],
)
def test_configuration_item(section: str | None, expected: Any) -> None:
    item: dict[str, Any] = {"scopeUri": "file:///p/a.py"}
    if section is not None:
        item["section"] = section
    assert configuration_item(SETTINGS, item) == expected


def test_configuration_item_without_section_is_a_copy() -> None:
    got = configuration_item(SETTINGS, {})
    assert got == SETTINGS and got is not SETTINGS
