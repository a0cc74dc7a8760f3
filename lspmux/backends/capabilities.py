"""Capabilities both ways: what lspmux tells a backend it can do, and what it tells its client
the backends offer.

- `for_backend()` adjusts a client's capabilities (or lspmux's own, for shared backends) for a
  backend: UTF-16 positions only, dynamic registration (lspmux keeps registrations per backend
  and routes by them), configuration and workspace folders (lspmux answers them).
- `supports()` decides whether a backend is eligible for a route: a truthy static capability or
  a dynamic registration of the method.
- `merge_for_client()` unions what the backends offer into one `ServerCapabilities`.
- A small on-disk cache remembers each server's capabilities, so that the `initialize` answer,
  given before any backend has started, can already union trigger characters and commands.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lspmux.routing.table import ROUTES, Policy, Route

#: Dynamic registration is declared for these client capability sections: lspmux honours it.
_DYNAMIC = (
    "synchronization",
    "completion",
    "hover",
    "signatureHelp",
    "declaration",
    "definition",
    "typeDefinition",
    "implementation",
    "references",
    "documentHighlight",
    "documentSymbol",
    "codeAction",
    "codeLens",
    "documentLink",
    "colorProvider",
    "formatting",
    "rangeFormatting",
    "onTypeFormatting",
    "rename",
    "foldingRange",
    "selectionRange",
    "callHierarchy",
    "semanticTokens",
    "linkedEditingRange",
    "moniker",
    "typeHierarchy",
    "inlineValue",
    "inlayHint",
)

#: Client capability sections with required fields: declared only when the client declared them.
_REQUIRED_FIELDS = frozenset({"semanticTokens"})

#: lspmux's own client capabilities, used for shared backends and clients that send none.
LSPMUX_CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True, "showMessage": {}, "showDocument": {"support": True}},
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
        },
        "didChangeConfiguration": {"dynamicRegistration": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
        "symbol": {"dynamicRegistration": True},
        "executeCommand": {"dynamicRegistration": True},
        "configuration": True,
        "workspaceFolders": True,
    },
    "textDocument": {
        "synchronization": {"didSave": True, "willSave": False, "willSaveWaitUntil": False},
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "documentationFormat": ["markdown", "plaintext"],
                "resolveSupport": {
                    "properties": ["documentation", "detail", "additionalTextEdits"]
                },
                "insertReplaceSupport": True,
                "labelDetailsSupport": True,
            },
            "contextSupport": True,
        },
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "signatureHelp": {
            "signatureInformation": {"documentationFormat": ["markdown", "plaintext"]}
        },
        "definition": {"linkSupport": True},
        "declaration": {"linkSupport": True},
        "typeDefinition": {"linkSupport": True},
        "implementation": {"linkSupport": True},
        "references": {},
        "documentHighlight": {},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {
                    "valueSet": [
                        "",
                        "quickfix",
                        "refactor",
                        "refactor.extract",
                        "refactor.inline",
                        "refactor.rewrite",
                        "source",
                        "source.organizeImports",
                        "source.fixAll",
                    ]
                }
            },
            "isPreferredSupport": True,
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit"]},
        },
        "codeLens": {},
        "formatting": {},
        "rangeFormatting": {},
        "rename": {"prepareSupport": True},
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
        "foldingRange": {},
        "inlayHint": {},
    },
}


def for_backend(client: Mapping[str, Any] | None) -> dict[str, Any]:
    """The capabilities a backend is initialized with."""
    caps: dict[str, Any] = copy.deepcopy(dict(client) if client else LSPMUX_CLIENT_CAPABILITIES)
    general = caps.setdefault("general", {})
    general["positionEncodings"] = ["utf-16"]
    ws = caps.setdefault("workspace", {})
    ws["configuration"] = True
    ws["workspaceFolders"] = True
    ws.setdefault("didChangeConfiguration", {})["dynamicRegistration"] = True
    ws.setdefault("executeCommand", {})["dynamicRegistration"] = True
    window = caps.setdefault("window", {})
    window["workDoneProgress"] = True
    td = caps.setdefault("textDocument", {})
    # Backends are not told that lspmux can pull: then every server pushes (basedpyright,
    # rust-analyzer), re-publishing only what changed, while servers that offer pull anyway
    # (ruff) are pulled by lspmux.diagnostics.pull. Declaring `diagnostic` with
    # dynamicRegistration works too (basedpyright then registers pull and sends
    # workspace/diagnostic/refresh on every edit, and lspmux re-pulls every open file of it),
    # but costs a pull per open file per edit for no gain.
    td.pop("diagnostic", None)
    for section in _DYNAMIC:
        if section in td:
            td[section]["dynamicRegistration"] = True
        elif section not in _REQUIRED_FIELDS:  # those cannot be created empty
            td[section] = {"dynamicRegistration": True}
    td.setdefault("publishDiagnostics", {})["versionSupport"] = True
    return caps


def supports(
    capabilities: Mapping[str, Any], registered: Iterable[str], method: str, route: Route
) -> bool:
    """Whether a backend with these static capabilities and dynamically registered methods can
    serve `method`."""
    if route.capability is None:
        return True
    if method in registered:
        return True
    value = capabilities.get(route.capability)
    if route.capability == "workspace":  # file operations: workspace.fileOperations.<op>
        ops = (value or {}).get("fileOperations") or {}
        key = method.rsplit("/", 1)[-1].removesuffix("Files")  # willRenameFiles → willRename
        return bool(ops.get(key))
    if route.capability == "textDocumentSync":
        sync = value
        return isinstance(sync, dict) and bool(sync.get("willSaveWaitUntil"))
    return bool(value) or value == {}


def resolve_provider(capabilities: Mapping[str, Any], capability: str) -> bool:
    value = capabilities.get(capability)
    return isinstance(value, dict) and bool(value.get("resolveProvider"))


#: Trigger characters assumed for a server that has never been started here.
FALLBACK_TRIGGERS = [".", ":", "<", '"', "'", "/", "@"]


def merge_for_client(per_server: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """The `ServerCapabilities` lspmux announces: every routed feature some backend may offer,
    trigger characters and commands unioned, incremental sync, UTF-16 positions."""
    caps: dict[str, Any] = {
        "positionEncoding": "utf-16",
        "textDocumentSync": {
            "openClose": True,
            "change": 2,  # incremental: lspmux recomputes full text for full-sync backends
            "save": {"includeText": True},
            "willSave": False,
            "willSaveWaitUntil": False,
        },
    }
    for method, route in ROUTES.items():
        if route.capability is None or route.policy in (Policy.BROADCAST, Policy.ORIGIN):
            continue
        if route.capability in ("workspace", "textDocumentSync", "diagnosticProvider"):
            continue
        del method
        caps.setdefault(route.capability, True)
    triggers: list[str] = []
    retriggers: list[str] = []
    sig_triggers: list[str] = []
    commands: list[str] = []
    on_type_first: str | None = None
    on_type_more: list[str] = []
    legend: Any = None
    for server in per_server:
        if server is None:
            _union(triggers, FALLBACK_TRIGGERS)
            continue
        comp = server.get("completionProvider") or {}
        _union(triggers, comp.get("triggerCharacters") or [])
        sig = server.get("signatureHelpProvider") or {}
        _union(sig_triggers, sig.get("triggerCharacters") or [])
        _union(retriggers, sig.get("retriggerCharacters") or [])
        cmds = server.get("executeCommandProvider") or {}
        _union(commands, cmds.get("commands") or [])
        otf = server.get("documentOnTypeFormattingProvider")
        if isinstance(otf, dict):
            on_type_first = on_type_first or otf.get("firstTriggerCharacter")
            _union(on_type_more, otf.get("moreTriggerCharacter") or [])
        sem = server.get("semanticTokensProvider")
        if legend is None and isinstance(sem, dict):
            legend = sem.get("legend")
    caps["completionProvider"] = {"triggerCharacters": triggers, "resolveProvider": True}
    caps["signatureHelpProvider"] = {
        "triggerCharacters": sig_triggers or ["(", ","],
        "retriggerCharacters": retriggers,
    }
    caps["codeActionProvider"] = {"resolveProvider": True}
    caps["codeLensProvider"] = {"resolveProvider": True}
    caps["documentLinkProvider"] = {"resolveProvider": True}
    caps["renameProvider"] = {"prepareProvider": True}
    caps["inlayHintProvider"] = {"resolveProvider": True}
    caps["workspaceSymbolProvider"] = {"resolveProvider": True}
    caps["executeCommandProvider"] = {"commands": commands}
    if on_type_first:
        caps["documentOnTypeFormattingProvider"] = {
            "firstTriggerCharacter": on_type_first,
            "moreTriggerCharacter": [c for c in on_type_more if c != on_type_first],
        }
    else:
        caps.pop("documentOnTypeFormattingProvider", None)
    if legend is not None:
        caps["semanticTokensProvider"] = {"legend": legend, "full": {"delta": True}, "range": True}
    else:
        caps.pop("semanticTokensProvider", None)
    caps["workspace"] = {"workspaceFolders": {"supported": True, "changeNotifications": True}}
    return caps


def _union(into: list[str], items: Iterable[str]) -> None:
    for item in items:
        if item not in into:
            into.append(item)


# -- cache ------------------------------------------------------------------------------------


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lspmux" / "capabilities"


def load_cached(server: str) -> dict[str, Any] | None:
    try:
        data = json.loads((cache_dir() / f"{server}.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def store_cached(server: str, capabilities: Mapping[str, Any]) -> None:
    with contextlib.suppress(OSError):
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{server}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(capabilities))
        tmp.replace(folder / f"{server}.json")
