"""What a backend is told about its client: the `capabilities` and `initializationOptions` of the
`initialize` lspmux sends it, and the encoding it answered.

- `for_backend()` starts from the client's own capabilities (or lspmux's, for a backend shared by
  several clients, whose answers `routing/adapt.py` then fits to each client) and keeps them no
  richer than the client where an answer goes straight back to it (snippets, markup kinds, link
  support). lspmux adds only what it handles itself: work-done progress (passed on only to a
  client that takes it), dynamic registration (it keeps registrations per backend and routes by
  them), watched files, configuration, workspace folders, versioned diagnostics, semantic tokens asked in full (lspmux computes the deltas,
  `routing/semantic_tokens.py`), and — when the session pulls — pull diagnostics.
- The position encoding is the one lspmux plans for the backend: `general.positionEncodings` is
  that one alone and clangd's `offsetEncoding` extension is narrowed to it.
- `merge_init_options()`: the client's `initializationOptions` under the configured ones.
- `answered_encoding()`: the encoding a backend's `initialize` result says it uses.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from lspmux.routing.capabilities import PROVIDERS

#: The token types and modifiers of LSP 3.17 (lsprotocol's `SemanticTokenTypes` and
#: `SemanticTokenModifiers`, spelled out: that module is too slow to import at start).
SEMANTIC_TOKEN_TYPES = (
    *("namespace", "type", "class", "enum", "interface", "struct", "typeParameter"),
    *("parameter", "variable", "property", "enumMember", "event", "function", "method"),
    *("macro", "keyword", "modifier", "comment", "string", "number", "regexp", "operator"),
    *("decorator", "label"),
)
SEMANTIC_TOKEN_MODIFIERS = (
    *("declaration", "definition", "readonly", "static", "deprecated", "abstract", "async"),
    *("modification", "documentation", "defaultLibrary"),
)

#: Client capability sections whose dynamic registration lspmux honours (it keeps registrations
#: per backend and routes by them, whatever the client can do): document synchronisation and
#: every textDocument provider but pull diagnostics (declared per delivery, below).
DYNAMIC_SECTIONS = (
    "synchronization",
    *(
        section.removeprefix("textDocument.")
        for _, _, section in PROVIDERS
        if section.startswith("textDocument.") and section != "textDocument.diagnostic"
    ),
)

#: Client capability sections with required fields: declared only when the client declared them.
_REQUIRED_FIELDS = frozenset({"semanticTokens"})

_MARKUP = ["markdown", "plaintext"]

#: lspmux's own client capabilities: for shared backends (whose answers are adapted to each
#: client) and for clients that send none.
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
                "documentationFormat": _MARKUP,
                "resolveSupport": {
                    "properties": ["documentation", "detail", "additionalTextEdits"]
                },
                "insertReplaceSupport": True,
                "labelDetailsSupport": True,
            },
            "contextSupport": True,
        },
        "hover": {"contentFormat": _MARKUP},
        "signatureHelp": {"signatureInformation": {"documentationFormat": _MARKUP}},
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
        "semanticTokens": {
            "requests": {"full": True, "range": True},
            "tokenTypes": list(SEMANTIC_TOKEN_TYPES),
            "tokenModifiers": list(SEMANTIC_TOKEN_MODIFIERS),
            "formats": ["relative"],
            "overlappingTokenSupport": False,
            "multilineTokenSupport": False,
        },
    },
}


def for_backend(
    client: Mapping[str, Any] | None,
    *,
    position_encoding: str = "utf-16",
    pull_diagnostics: bool = False,
) -> dict[str, Any]:
    """The capabilities a backend is initialized with, for this client (None: a backend shared
    by several clients; an empty mapping is a client that declared nothing, and gets nothing).

    `position_encoding` is the encoding lspmux plans for this backend (the session's, or one it
    converts from); `pull_diagnostics` declares pull diagnostics (dynamic registration and
    refresh, both answered by lspmux) so that servers offering them register them."""
    caps: dict[str, Any] = copy.deepcopy(
        dict(client) if client is not None else LSPMUX_CLIENT_CAPABILITIES
    )
    general = caps.setdefault("general", {})
    general["positionEncodings"] = [position_encoding]
    if "offsetEncoding" in caps:  # clangd's extension: it would pick from the client's list
        caps["offsetEncoding"] = [position_encoding]
    # Every server may report progress: lspmux answers its `window/workDoneProgress/create`,
    # passes its progress on only to clients that take it (families/progress.py), shows it in
    # `lspmux status`, and learns from it when rust-analyzer has loaded its project
    # (backends/loading.py: told of no progress, it could not be waited for).
    window = caps.get("window")
    caps["window"] = {**(window if isinstance(window, dict) else {}), "workDoneProgress": True}
    ws = caps.setdefault("workspace", {})
    ws["configuration"] = True
    ws["workspaceFolders"] = True
    ws.setdefault("didChangeConfiguration", {})["dynamicRegistration"] = True
    ws.setdefault("executeCommand", {})["dynamicRegistration"] = True
    watched = ws.setdefault("didChangeWatchedFiles", {})
    if not watched.get("dynamicRegistration"):  # lspmux watches the globs itself: plain ones
        watched["relativePatternSupport"] = False
    watched["dynamicRegistration"] = True
    td = caps.setdefault("textDocument", {})
    # Pull diagnostics are declared only when the session pulls: then servers that offer them
    # (basedpyright) register them and send refreshes, which lspmux answers. Otherwise every
    # server pushes, and servers that offer pull anyway (ruff) are pulled by
    # the diagnostics family's Puller. The client's own pull section never reaches a backend.
    td.pop("diagnostic", None)
    ws.pop("diagnostics", None)
    if pull_diagnostics:
        td["diagnostic"] = {"dynamicRegistration": True, "relatedDocumentSupport": False}
        ws["diagnostics"] = {"refreshSupport": True}
    for section in DYNAMIC_SECTIONS:
        if section in td:
            td[section]["dynamicRegistration"] = True
        elif section not in _REQUIRED_FIELDS:  # those cannot be created empty
            td[section] = {"dynamicRegistration": True}
    published = td.setdefault("publishDiagnostics", {})
    published["versionSupport"] = True  # the store drops stale versions
    published["relatedInformation"] = True  # kept in the store, shown as the client can
    tokens = td.get("semanticTokens")
    if isinstance(tokens, dict):  # lspmux answers deltas itself from full results
        requests = tokens.setdefault("requests", {})
        requests["full"] = True
        tokens.setdefault("formats", ["relative"])
    return caps


def init_options(value: Any) -> Any:
    """The client's `initializationOptions` as a server should get them: None for none (an
    empty object says nothing either)."""
    return None if value is None or value == {} else value


def merge_init_options(client: Any, configured: Any) -> Any:
    """The `initializationOptions` a backend gets: the client's merged with the configured ones
    (`[servers.NAME.initialization_options]`). Tables merge key by key, recursively; on any
    other conflict the configuration wins. None when neither gives any."""
    if configured is None:
        return copy.deepcopy(client)
    if isinstance(client, Mapping) and isinstance(configured, Mapping):
        out = copy.deepcopy(dict(client))
        for key, value in configured.items():
            out[key] = merge_init_options(out[key], value) if key in out else copy.deepcopy(value)
        return out
    return copy.deepcopy(configured)


def answered_encoding(result: Mapping[str, Any] | None) -> str:
    """The position encoding a backend's `initialize` result says it uses: `positionEncoding`,
    else clangd's `offsetEncoding`, else UTF-16 (the protocol's default)."""
    caps = (result or {}).get("capabilities") or {}
    for value in (caps.get("positionEncoding"), (result or {}).get("offsetEncoding")):
        if isinstance(value, str) and value:
            return value
    return "utf-16"
