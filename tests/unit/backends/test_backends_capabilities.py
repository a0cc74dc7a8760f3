"""Server capabilities: supports, merge_for_client (what lspmux announces), client
registrations, the cache and announce(), and configuration_item (workspace/configuration
answers). Real servers' capabilities come from tests/data/capabilities/ (recorded by
scripts/record_capabilities.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from lspmux.backends import capabilities as caps
from lspmux.routing.table import ROUTES, Policy
from lspmux.session.families.server_answers import configuration_item
from tests.polling import VirtualClockLoop

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


# -- supports: the option a method needs -------------------------------------------------------------


@pytest.mark.parametrize(
    ("capabilities", "method", "expected"),
    [
        ({"renameProvider": True}, t.TEXT_DOCUMENT_RENAME, True),
        ({"renameProvider": True}, t.TEXT_DOCUMENT_PREPARE_RENAME, False),
        ({"renameProvider": {"prepareProvider": True}}, t.TEXT_DOCUMENT_PREPARE_RENAME, True),
        ({"documentRangeFormattingProvider": True}, t.TEXT_DOCUMENT_RANGES_FORMATTING, False),
        (
            {"documentRangeFormattingProvider": {"rangesSupport": True}},
            t.TEXT_DOCUMENT_RANGES_FORMATTING,
            True,
        ),
        ({"semanticTokensProvider": {"full": True}}, t.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, False),
        ({"semanticTokensProvider": {"full": True}}, t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, True),
    ],
)
def test_supports_needs_the_methods_option(
    capabilities: dict[str, Any], method: str, expected: bool
) -> None:
    assert _s(capabilities, method) is expected


def test_supports_a_registration_under_another_method_name() -> None:
    # semantic tokens register as "textDocument/semanticTokens", requested as .../full
    assert _s({}, t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, ("textDocument/semanticTokens",))


# -- registered_capabilities ---------------------------------------------------------------------------


def _pairs(record: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(r["method"], r.get("registerOptions")) for r in record["registrations"]]


def test_registered_capabilities_of_real_ruff(recorded: Any) -> None:
    ruff = recorded("ruff")
    got = caps.registered_capabilities(_pairs(ruff))
    # formatting is registered, not static; watched files are no server capability
    assert got == {
        "documentFormattingProvider": True,
        "documentRangeFormattingProvider": {"rangesSupport": False},
    }
    assert "documentFormattingProvider" not in ruff["capabilities"]


def test_registered_capabilities_of_real_biome(recorded: Any) -> None:
    got = caps.registered_capabilities(_pairs(recorded("biome")))
    assert got["documentFormattingProvider"] is True
    assert got["codeActionProvider"]["resolveProvider"] is True
    assert "source.fixAll.biome" in got["codeActionProvider"]["codeActionKinds"]
    assert got["documentOnTypeFormattingProvider"] == {
        "firstTriggerCharacter": "}",
        "moreTriggerCharacter": ["]", ")"],
    }


@pytest.mark.parametrize(
    ("registrations", "expected"),
    [
        ([], {}),
        ([(t.TEXT_DOCUMENT_HOVER, None)], {"hoverProvider": True}),
        (
            [
                (t.WORKSPACE_EXECUTE_COMMAND, {"commands": ["a", "b"]}),
                (t.WORKSPACE_EXECUTE_COMMAND, {"commands": ["b", "c"]}),
            ],
            {"executeCommandProvider": {"commands": ["a", "b", "c"]}},
        ),
        (
            [
                (
                    t.TEXT_DOCUMENT_COMPLETION,
                    {"documentSelector": [{"language": "a"}], "triggerCharacters": ["."]},
                ),
                (
                    t.TEXT_DOCUMENT_COMPLETION,
                    {
                        "documentSelector": [{"language": "b"}],
                        "triggerCharacters": [":"],
                        "resolveProvider": True,
                    },
                ),
            ],
            {"completionProvider": {"triggerCharacters": [".", ":"], "resolveProvider": True}},
        ),
        (
            [
                (
                    "textDocument/semanticTokens",
                    {"legend": {"tokenTypes": ["a"], "tokenModifiers": []}, "full": True},
                )
            ],
            {
                "semanticTokensProvider": {
                    "legend": {"tokenTypes": ["a"], "tokenModifiers": []},
                    "full": True,
                    "range": False,
                }
            },
        ),
        (
            [(t.WORKSPACE_WILL_RENAME_FILES, {"filters": [{"pattern": {"glob": "**/*.py"}}]})],
            {
                "workspace": {
                    "fileOperations": {
                        "willRename": {"filters": [{"pattern": {"glob": "**/*.py"}}]}
                    }
                }
            },
        ),
        (
            [(t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL, {"documentSelector": None})],
            {"textDocumentSync": {"willSaveWaitUntil": True}},
        ),
        (
            [
                (t.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": []}),
                (t.WORKSPACE_DID_CHANGE_CONFIGURATION, None),
            ],
            {},
        ),
    ],
)
def test_registered_capabilities(
    registrations: list[tuple[str, Any]], expected: dict[str, Any]
) -> None:
    assert caps.registered_capabilities(registrations) == expected


def test_effective_adds_registrations_to_static_capabilities(recorded: Any) -> None:
    ruff = recorded("ruff")
    got = caps.effective(ruff["capabilities"], _pairs(ruff))
    assert got["documentFormattingProvider"] is True
    assert got["codeActionProvider"]["resolveProvider"] is True
    assert "ruff.applyAutofix" in got["executeCommandProvider"]["commands"]


# -- merge_for_client --------------------------------------------------------------------------------

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
    "completionProvider": {"triggerCharacters": [".", "@"], "allCommitCharacters": [";"]},
    "signatureHelpProvider": {"triggerCharacters": ["<"]},
    "documentOnTypeFormattingProvider": {
        "firstTriggerCharacter": "\n",
        "moreTriggerCharacter": ["}"],
    },
}


def test_merge_for_client_unions_options() -> None:
    out = caps.merge_for_client([PYRIGHT, RUFF, OTHER])
    assert out["positionEncoding"] == "utf-16"
    assert out["textDocumentSync"] == {
        "openClose": True,
        "change": 2,
        "save": {"includeText": True},
        "willSave": False,
        "willSaveWaitUntil": False,
    }
    assert out["completionProvider"] == {
        "triggerCharacters": [".", "[", '"', "@"],
        "allCommitCharacters": [";"],
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
        "moreTriggerCharacter": [";", "\n"],
    }
    assert out["codeActionProvider"] == {"codeActionKinds": ["quickfix"], "resolveProvider": False}
    assert out["semanticTokensProvider"] == {
        "legend": {"tokenTypes": ["a"], "tokenModifiers": []},
        "full": {"delta": True},  # lspmux computes deltas itself
        "range": False,
    }
    assert out["workspace"] == {
        "workspaceFolders": {"supported": True, "changeNotifications": True}
    }
    assert "diagnosticProvider" not in out


def test_merge_for_client_announces_only_what_is_served() -> None:
    out = caps.merge_for_client([PYRIGHT])
    for key in (
        "codeActionProvider",
        "codeLensProvider",
        "documentLinkProvider",
        "renameProvider",
        "inlayHintProvider",
        "workspaceSymbolProvider",
        "semanticTokensProvider",
        "documentFormattingProvider",
        "definitionProvider",
        "documentOnTypeFormattingProvider",
    ):
        assert key not in out, key
    empty = caps.merge_for_client([])
    assert set(empty) == {"positionEncoding", "textDocumentSync", "workspace"}


def test_merge_for_client_resolve_only_when_some_backend_resolves(recorded: Any) -> None:
    pyright = recorded("basedpyright")["capabilities"]
    ruff = recorded("ruff")["capabilities"]
    clangd = recorded("clangd")["capabilities"]
    alone = caps.merge_for_client([pyright])
    assert alone["codeActionProvider"]["resolveProvider"] is False  # basedpyright: -32601
    assert alone["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.organizeImports"]
    both = caps.merge_for_client([pyright, ruff])
    assert both["codeActionProvider"]["resolveProvider"] is True
    assert both["codeActionProvider"]["codeActionKinds"] == [
        "quickfix",
        "source.organizeImports",
        "source.fixAll.ruff",
        "source.organizeImports.ruff",
        "notebook.source.fixAll.ruff",
        "notebook.source.organizeImports.ruff",
    ]
    assert "ruff.applyAutofix" in both["executeCommandProvider"]["commands"]
    assert "basedpyright.restartserver" in both["executeCommandProvider"]["commands"]
    assert both["completionProvider"]["resolveProvider"] is True
    assert caps.merge_for_client([clangd])["completionProvider"]["resolveProvider"] is False
    assert caps.merge_for_client([clangd])["documentLinkProvider"] == {"resolveProvider": False}
    assert "codeLensProvider" not in both and "inlayHintProvider" in both
    assert both["textDocumentSync"]["willSave"] is True  # basedpyright asks for willSave
    assert both["workspace"]["fileOperations"] == {
        "willRename": {"filters": [{"pattern": {"glob": "**/*"}}]}
    }


def test_merge_for_client_code_action_kinds_only_when_every_backend_lists_them() -> None:
    out = caps.merge_for_client([{"codeActionProvider": True}, RUFF])
    assert out["codeActionProvider"] == {"resolveProvider": False}


def test_merge_for_client_includes_registered_capabilities(recorded: Any) -> None:
    ruff = recorded("ruff")
    static_only = caps.merge_for_client([ruff["capabilities"]])
    assert "documentFormattingProvider" not in static_only
    out = caps.merge_for_client([caps.effective(ruff["capabilities"], _pairs(ruff))])
    assert out["documentFormattingProvider"] is True
    assert out["documentRangeFormattingProvider"] == {"rangesSupport": False}
    biome = recorded("biome")
    with_biome = caps.merge_for_client([caps.effective(biome["capabilities"], _pairs(biome))])
    assert with_biome["codeActionProvider"]["resolveProvider"] is True


def test_merge_for_client_semantic_tokens_from_a_server_without_delta(recorded: Any) -> None:
    pyright = recorded("basedpyright")["capabilities"]
    assert pyright["semanticTokensProvider"]["full"] is True  # no delta of its own
    out = caps.merge_for_client([pyright])["semanticTokensProvider"]
    assert out["full"] == {"delta": True}
    assert out["range"] is False
    assert out["legend"] == pyright["semanticTokensProvider"]["legend"]


@pytest.mark.parametrize(("pull", "expected"), [(False, None), (True, caps.PULL_DIAGNOSTICS)])
def test_merge_for_client_diagnostic_provider_per_delivery(
    recorded: Any, pull: bool, expected: Any
) -> None:
    ruff = recorded("ruff")["capabilities"]
    assert "diagnosticProvider" in ruff
    out = caps.merge_for_client([ruff], pull_diagnostics=pull)
    assert out.get("diagnosticProvider") == expected


def test_merge_for_client_position_encoding_parameter() -> None:
    assert caps.merge_for_client([], position_encoding="utf-8")["positionEncoding"] == "utf-8"


def test_merge_for_client_handles_every_routed_capability() -> None:
    """Every capability the routing table makes a backend eligible by is one merge_for_client
    can announce, so that nothing routed is hidden from the client."""
    every = {
        key: {
            "resolveProvider": True,
            "prepareProvider": True,
            "rangesSupport": True,
            "firstTriggerCharacter": "}",
            "legend": {"tokenTypes": [], "tokenModifiers": []},
            "full": True,
            "range": True,
            "commands": ["x"],
            "triggerCharacters": ["."],
        }
        for key in {r.capability for r in ROUTES.values() if r.capability}
    }
    every["textDocumentSync"] = {"willSaveWaitUntil": True}
    ops = ("willCreate", "willRename", "willDelete", "didCreate", "didRename", "didDelete")
    every["workspace"] = {"fileOperations": {op: {"filters": []} for op in ops}}
    out = caps.merge_for_client([every], pull_diagnostics=True)
    for method, route in ROUTES.items():
        if route.capability is not None and route.policy is not Policy.ORIGIN:
            assert caps.supports(out, (), method, route), method


def test_merge_for_client_unknown_servers_are_assumed() -> None:
    out = caps.merge_for_client([None, {"completionProvider": {"triggerCharacters": ["$"]}}])
    assert out["completionProvider"]["triggerCharacters"][-1] == "$"
    assert "." in out["completionProvider"]["triggerCharacters"]
    assert out["hoverProvider"] is True


# -- client_registrations ------------------------------------------------------------------------------

DYNAMIC_CLIENT = {
    "textDocument": {
        "formatting": {"dynamicRegistration": True},
        "rangeFormatting": {"dynamicRegistration": True},
    },
    "workspace": {"executeCommand": {"dynamicRegistration": True}},
}


def test_client_registrations_for_what_came_up_after_initialize(recorded: Any) -> None:
    ruff = recorded("ruff")
    announced = caps.merge_for_client([ruff["capabilities"]])
    current = caps.merge_for_client(
        [
            caps.effective(ruff["capabilities"], _pairs(ruff)),
            {"executeCommandProvider": {"commands": ["ruff.applyAutofix", "new.command"]}},
        ]
    )
    got = caps.client_registrations(announced, current, DYNAMIC_CLIENT)
    assert got == [
        (t.TEXT_DOCUMENT_FORMATTING, {"documentSelector": None}),
        (t.TEXT_DOCUMENT_RANGE_FORMATTING, {"rangesSupport": False, "documentSelector": None}),
        (t.WORKSPACE_EXECUTE_COMMAND, {"commands": ["new.command"]}),
    ]
    assert caps.client_registrations(current, current, DYNAMIC_CLIENT) == []
    # a client without dynamic registration gets nothing (it keeps what it was told)
    assert caps.client_registrations(announced, current, {}) == []


def test_dynamic_registration() -> None:
    assert caps.dynamic_registration(DYNAMIC_CLIENT, "documentFormattingProvider")
    assert caps.dynamic_registration(DYNAMIC_CLIENT, "executeCommandProvider")
    assert not caps.dynamic_registration(DYNAMIC_CLIENT, "hoverProvider")
    assert not caps.dynamic_registration(DYNAMIC_CLIENT, "textDocumentSync")


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


# -- announce: the same answer on the first start as on the hundredth -----------------------------


def test_announce_names_the_servers_without_a_cache_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recorded: Any
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = caps.announce(["basedpyright", "ruff"])
    assert first.missing == ("basedpyright", "ruff") and not first.complete
    assert "completionProvider" not in first.capabilities  # nothing guessed
    ruff = recorded("ruff")
    caps.store_cached("ruff", ruff["capabilities"], _pairs(ruff))
    second = caps.announce(["basedpyright", "ruff"])
    assert second.missing == ("basedpyright",)
    assert second.capabilities["documentFormattingProvider"] is True  # registered, cached
    caps.store_cached("basedpyright", recorded("basedpyright")["capabilities"])
    third = caps.announce(["basedpyright", "ruff"])
    assert third.complete
    assert list(third.known) == ["basedpyright", "ruff"]
    # once complete, the answer is what the servers' real capabilities give
    started = caps.merge_for_client(
        [
            recorded("basedpyright")["capabilities"],
            caps.effective(ruff["capabilities"], _pairs(ruff)),
        ]
    )
    assert third.capabilities == started
    assert caps.announce(["basedpyright", "ruff"]).capabilities == started  # and stays so


def test_announce_with_pull_diagnostics(recorded: Any) -> None:
    store = {"ruff": recorded("ruff")["capabilities"]}
    got = caps.announce(["ruff"], pull_diagnostics=True, load=store.get)
    assert got.capabilities["diagnosticProvider"] == caps.PULL_DIAGNOSTICS
    assert got.complete


def test_stale_client_registrations() -> None:
    registered = {
        "r1": (t.TEXT_DOCUMENT_FORMATTING, {"documentSelector": None}),
        "r2": (t.WORKSPACE_EXECUTE_COMMAND, {"commands": ["gone"]}),
        "r3": (t.WORKSPACE_EXECUTE_COMMAND, {"commands": ["kept", "gone"]}),
        "r4": (t.TEXT_DOCUMENT_HOVER, None),
        "r5": (t.WORKSPACE_DID_CHANGE_WATCHED_FILES, {"watchers": []}),  # not a provider
    }
    current = caps.merge_for_client(
        [{"hoverProvider": True, "executeCommandProvider": {"commands": ["kept"]}}]
    )
    assert caps.stale_client_registrations(registered, current) == ["r1", "r2"]


def test_announcement_legend_maps_match_the_announced_legend(recorded: Any) -> None:
    store = {s: recorded(s)["capabilities"] for s in ("ruff", "basedpyright", "clangd")}
    got = caps.announce(["ruff", "basedpyright", "clangd"], load=store.get)
    legend = got.capabilities["semanticTokensProvider"]["legend"]
    maps = got.legend_maps()
    assert maps["ruff"].types == ()  # no semantic tokens
    assert maps["basedpyright"].identity
    for server in ("basedpyright", "clangd"):
        own = store[server]["semanticTokensProvider"]["legend"]
        for i, name in enumerate(own["tokenTypes"]):
            assert legend["tokenTypes"][maps[server].types[i]] == name
        for i, name in enumerate(own["tokenModifiers"]):
            assert legend["tokenModifiers"][maps[server].modifiers[i]] == name


def test_complete_starts_the_missing_servers(recorded: Any) -> None:
    """On a virtual clock: the slow server's hour passes at once, past `complete`'s timeout."""

    caps_timeout = 15.0  # as long as `initialize` waits (announce.INITIAL_START)

    async def run() -> None:
        store = {"ruff": recorded("ruff")["capabilities"]}
        first = caps.announce(["basedpyright", "ruff", "broken", "slow"], load=store.get)
        assert first.missing == ("basedpyright", "broken", "slow")

        async def start(name: str) -> dict[str, Any] | None:
            if name == "broken":
                raise RuntimeError("cannot start")
            if name == "slow":
                await asyncio.sleep(3600)
            return recorded(name)["capabilities"]

        done = await caps.complete(first, start, timeout=caps_timeout)
        assert done.missing == ("broken", "slow")
        assert list(done.known) == ["ruff", "basedpyright"]
        # the order of the union is the configuration's, whatever order they became known in
        everything = {s: recorded(s)["capabilities"] for s in ("basedpyright", "ruff")}
        assert (
            done.capabilities
            == caps.announce(["basedpyright", "ruff"], load=everything.get).capabilities
        )
        whole = done.with_known("broken", {}).with_known("slow", {})
        # nothing left to start
        assert await caps.complete(whole, start, timeout=caps_timeout) is whole

    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        runner.run(run())


@pytest.mark.parametrize(
    ("static", "registrations", "expected"),
    [
        (
            {"positionEncoding": "utf-8", "textDocumentSync": 2, "experimental": {"x": 1}},
            [(t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL, None)],
            {
                "positionEncoding": "utf-8",
                "textDocumentSync": {"openClose": True, "change": 2, "willSaveWaitUntil": True},
                "experimental": {"x": 1},
            },
        ),
        (
            {"workspace": {"workspaceFolders": {"supported": True}}},
            [(t.WORKSPACE_DID_RENAME_FILES, {"filters": []})],
            {
                "workspace": {
                    "workspaceFolders": {"supported": True},
                    "fileOperations": {"didRename": {"filters": []}},
                }
            },
        ),
    ],
)
def test_effective_keeps_what_the_union_does_not_cover(
    static: dict[str, Any], registrations: list[tuple[str, Any]], expected: dict[str, Any]
) -> None:
    assert caps.effective(static, registrations) == expected


def test_effective_of_real_servers_keeps_their_sync(recorded: Any) -> None:
    for server in ("basedpyright", "ruff", "clangd", "biome"):
        record = recorded(server)
        got = caps.effective(record["capabilities"], _pairs(record))
        sync = record["capabilities"]["textDocumentSync"]
        kind = sync if isinstance(sync, int) else sync["change"]
        assert got["textDocumentSync"]["change"] == kind, server
        assert got.get("positionEncoding") == record["capabilities"].get("positionEncoding")
