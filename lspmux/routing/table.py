"""The one dispatch table: which backends get each client→server method, and how answers combine.

Every method lspmux routes is spelled here (through `lsprotocol.types` constants) and nowhere
else. A `Route` names its policy (see DESIGN.md's routing table), the feature name users put in
`only_features` / `except_features`, the server capability that makes a backend eligible, and
the registration method a server may use to offer it dynamically. `docs/routing.md` is checked
against this table by `tests/unit/routing/test_routing_doc.py`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lsprotocol import types as t


class Policy(enum.Enum):
    """How a method is routed; the values are the words `docs/routing.md` uses."""

    FIRST = "first"  # the first eligible backend's answer
    MERGE = "merge"  # every eligible backend; results concatenated, de-duplicated, tagged
    ORIGIN = "origin"  # back to the backend that produced the item or command
    BROADCAST = "broadcast"  # notification to every backend concerned
    DIAGNOSTICS = "diagnostics"  # kept per (uri, source); the client sees the union
    LOCAL = "local"  # answered by lspmux itself


@dataclass(frozen=True, slots=True)
class Route:
    policy: Policy
    feature: str
    capability: str | None = None  # key in ServerCapabilities; None: always eligible
    position: bool = False  # params carry textDocument + position (Locate can fill them)
    range: bool = False  # params carry textDocument + range (Locate can fill them)


def _r(
    policy: Policy,
    feature: str,
    capability: str | None = None,
    *,
    position: bool = False,
    range: bool = False,
) -> Route:
    return Route(policy, feature, capability, position, range)


F, M, OR, B = Policy.FIRST, Policy.MERGE, Policy.ORIGIN, Policy.BROADCAST

#: Client→server requests and notifications, by method.
ROUTES: dict[str, Route] = {
    # -- first eligible -------------------------------------------------------------------
    t.TEXT_DOCUMENT_HOVER: _r(F, "hover", "hoverProvider", position=True),
    t.TEXT_DOCUMENT_SIGNATURE_HELP: _r(F, "signatureHelp", "signatureHelpProvider", position=True),
    t.TEXT_DOCUMENT_RENAME: _r(F, "rename", "renameProvider", position=True),
    t.TEXT_DOCUMENT_PREPARE_RENAME: _r(F, "rename", "renameProvider", position=True),
    t.TEXT_DOCUMENT_FORMATTING: _r(F, "formatting", "documentFormattingProvider"),
    t.TEXT_DOCUMENT_RANGE_FORMATTING: _r(
        F, "rangeFormatting", "documentRangeFormattingProvider", range=True
    ),
    t.TEXT_DOCUMENT_RANGES_FORMATTING: _r(F, "rangeFormatting", "documentRangeFormattingProvider"),
    t.TEXT_DOCUMENT_ON_TYPE_FORMATTING: _r(
        F, "onTypeFormatting", "documentOnTypeFormattingProvider", position=True
    ),
    t.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT: _r(
        F, "documentHighlight", "documentHighlightProvider", position=True
    ),
    t.TEXT_DOCUMENT_INLAY_HINT: _r(F, "inlayHint", "inlayHintProvider", range=True),
    t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: _r(F, "semanticTokens", "semanticTokensProvider"),
    t.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA: _r(F, "semanticTokens", "semanticTokensProvider"),
    t.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: _r(
        F, "semanticTokens", "semanticTokensProvider", range=True
    ),
    t.TEXT_DOCUMENT_FOLDING_RANGE: _r(F, "foldingRange", "foldingRangeProvider"),
    t.TEXT_DOCUMENT_SELECTION_RANGE: _r(F, "selectionRange", "selectionRangeProvider"),
    t.TEXT_DOCUMENT_LINKED_EDITING_RANGE: _r(
        F, "linkedEditingRange", "linkedEditingRangeProvider", position=True
    ),
    t.TEXT_DOCUMENT_DOCUMENT_COLOR: _r(F, "color", "colorProvider"),
    t.TEXT_DOCUMENT_COLOR_PRESENTATION: _r(F, "color", "colorProvider", range=True),
    t.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY: _r(
        F, "callHierarchy", "callHierarchyProvider", position=True
    ),
    t.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY: _r(
        F, "typeHierarchy", "typeHierarchyProvider", position=True
    ),
    t.TEXT_DOCUMENT_MONIKER: _r(F, "moniker", "monikerProvider", position=True),
    t.TEXT_DOCUMENT_INLINE_VALUE: _r(F, "inlineValue", "inlineValueProvider", range=True),
    t.TEXT_DOCUMENT_INLINE_COMPLETION: _r(
        F, "inlineCompletion", "inlineCompletionProvider", position=True
    ),
    t.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: _r(F, "willSaveWaitUntil", "textDocumentSync"),
    # -- all eligible, merged ---------------------------------------------------------------
    t.TEXT_DOCUMENT_COMPLETION: _r(M, "completion", "completionProvider", position=True),
    t.TEXT_DOCUMENT_CODE_ACTION: _r(M, "codeAction", "codeActionProvider", range=True),
    t.TEXT_DOCUMENT_CODE_LENS: _r(M, "codeLens", "codeLensProvider"),
    t.TEXT_DOCUMENT_DEFINITION: _r(M, "definition", "definitionProvider", position=True),
    t.TEXT_DOCUMENT_DECLARATION: _r(M, "declaration", "declarationProvider", position=True),
    t.TEXT_DOCUMENT_TYPE_DEFINITION: _r(
        M, "typeDefinition", "typeDefinitionProvider", position=True
    ),
    t.TEXT_DOCUMENT_IMPLEMENTATION: _r(
        M, "implementation", "implementationProvider", position=True
    ),
    t.TEXT_DOCUMENT_REFERENCES: _r(M, "references", "referencesProvider", position=True),
    t.TEXT_DOCUMENT_DOCUMENT_SYMBOL: _r(M, "documentSymbol", "documentSymbolProvider"),
    t.TEXT_DOCUMENT_DOCUMENT_LINK: _r(M, "documentLink", "documentLinkProvider"),
    t.WORKSPACE_SYMBOL: _r(M, "workspaceSymbol", "workspaceSymbolProvider"),
    t.WORKSPACE_WILL_CREATE_FILES: _r(M, "fileOperations", "workspace"),
    t.WORKSPACE_WILL_RENAME_FILES: _r(M, "fileOperations", "workspace"),
    t.WORKSPACE_WILL_DELETE_FILES: _r(M, "fileOperations", "workspace"),
    # -- diagnostics ------------------------------------------------------------------------
    t.TEXT_DOCUMENT_DIAGNOSTIC: _r(Policy.DIAGNOSTICS, "diagnostics", "diagnosticProvider"),
    t.WORKSPACE_DIAGNOSTIC: _r(Policy.DIAGNOSTICS, "diagnostics", "diagnosticProvider"),
    # -- back to the origin -------------------------------------------------------------------
    t.COMPLETION_ITEM_RESOLVE: _r(OR, "completion"),
    t.CODE_ACTION_RESOLVE: _r(OR, "codeAction"),
    t.CODE_LENS_RESOLVE: _r(OR, "codeLens"),
    t.DOCUMENT_LINK_RESOLVE: _r(OR, "documentLink"),
    t.INLAY_HINT_RESOLVE: _r(OR, "inlayHint"),
    t.WORKSPACE_SYMBOL_RESOLVE: _r(OR, "workspaceSymbol"),
    t.WORKSPACE_EXECUTE_COMMAND: _r(OR, "executeCommand", "executeCommandProvider"),
    t.CALL_HIERARCHY_INCOMING_CALLS: _r(OR, "callHierarchy"),
    t.CALL_HIERARCHY_OUTGOING_CALLS: _r(OR, "callHierarchy"),
    t.TYPE_HIERARCHY_SUPERTYPES: _r(OR, "typeHierarchy"),
    t.TYPE_HIERARCHY_SUBTYPES: _r(OR, "typeHierarchy"),
    # -- broadcast notifications ------------------------------------------------------------
    t.TEXT_DOCUMENT_DID_OPEN: _r(B, "sync"),
    t.TEXT_DOCUMENT_DID_CHANGE: _r(B, "sync"),
    t.TEXT_DOCUMENT_DID_SAVE: _r(B, "sync"),
    t.TEXT_DOCUMENT_DID_CLOSE: _r(B, "sync"),
    t.TEXT_DOCUMENT_WILL_SAVE: _r(B, "sync"),
    t.WORKSPACE_DID_CHANGE_CONFIGURATION: _r(B, "sync"),
    t.WORKSPACE_DID_CHANGE_WATCHED_FILES: _r(B, "sync"),
    t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: _r(B, "sync"),
    t.WORKSPACE_DID_CREATE_FILES: _r(B, "sync"),
    t.WORKSPACE_DID_RENAME_FILES: _r(B, "sync"),
    t.WORKSPACE_DID_DELETE_FILES: _r(B, "sync"),
    t.SET_TRACE: _r(B, "sync"),
    t.WINDOW_WORK_DONE_PROGRESS_CANCEL: _r(B, "sync"),
}

#: Every feature name a user may write in `only_features` / `except_features`.
#: "sync" (document synchronisation) is not switchable: a backend always sees its documents.
FEATURES: frozenset[str] = frozenset(r.feature for r in ROUTES.values()) - {"sync"}

#: Method names whose answers lspmux produces itself (lifecycle and Locate).
LOCATE_RESOLVE = "locate/resolve"
LOCATE_RESOLVE_RANGE = "locate/resolveRange"
LOCATE_DESCRIBE = "locate/describe"
LOCAL_METHODS: frozenset[str] = frozenset(
    {
        t.INITIALIZE,
        t.INITIALIZED,
        t.SHUTDOWN,
        t.EXIT,
        t.CANCEL_REQUEST,
        t.PROGRESS,
        LOCATE_RESOLVE,
        LOCATE_RESOLVE_RANGE,
        LOCATE_DESCRIBE,
    }
)


def route_for(method: str) -> Route | None:
    """The route of a known method, or None for a method lspmux does not know."""
    return ROUTES.get(method)
