"""The one method table: every method lspmux knows, in all four directions, and who answers it.

Four dictionaries, one per direction, map a method name (a `routing/methods.py` constant, or one
of lspmux's own `locate/*` / `lspmux/*` names below) to a `Route`:

- `CLIENT_REQUESTS`: what the client asks. Routed to backends (`first`, `merge`, `origin`) or
  answered by lspmux itself (`local`, `diagnostics`).
- `CLIENT_NOTIFICATIONS`: what the client tells. Handled by lspmux (`local`), and/or sent to
  every backend concerned (`broadcast`).
- `SERVER_REQUESTS`: what a backend asks. Answered by lspmux from the server's own
  configuration, with the instance's first client's answer under it (`answer`), recorded and passed on (`register`), given a token of lspmux's
  (`progress`), passed on only to a client that declared support (`refresh`), or relayed to a
  client with the ids remapped (`relay`).
- `SERVER_NOTIFICATIONS`: what a backend tells. Merged into the diagnostics store (`store`),
  renamed (`progress`, `cancel`), or relayed to the clients concerned (`relay`).

A route names its policy, the feature name users write in `only_features`/`except_features`,
the server capability that makes a backend eligible, the merger of a merged method, the
*family* whose items come back through `origin` methods (completion items to
`completionItem/resolve`, …), and the local handler that serves it (a name the session's
dispatch and relay modules look up; `tests/unit/routing/test_routing_table.py` checks that every
handler named here exists). No other module spells a method's policy; `docs/routing.md` is
generated from these tables and checked against them.

A method no table knows keeps the behaviour lspmux always had: a client request goes to the
first backend of its file that answers it, a client notification to every backend of its file,
a server request and a server notification to the client.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lspmux.routing import merge
from lspmux.routing import methods as lsp


class Direction(enum.Enum):
    CLIENT_REQUEST = "client → server requests"
    CLIENT_NOTIFICATION = "client → server notifications"
    SERVER_REQUEST = "server → client requests"
    SERVER_NOTIFICATION = "server → client notifications"


class Policy(enum.Enum):
    """How a method is handled; the values are the words `docs/routing.md` uses."""

    # client → server
    FIRST = "first"  # the first eligible backend's answer
    MERGE = "merge"  # every eligible backend; results concatenated, de-duplicated, tagged
    ORIGIN = "origin"  # back to the backend that produced the item or command
    BROADCAST = "broadcast"  # notification to every backend concerned
    DIAGNOSTICS = "diagnostics"  # answered from the merged diagnostics store
    LOCAL = "local"  # answered or handled by lspmux itself
    # server → client
    ANSWER = "answer"  # answered by lspmux from the server's configuration
    REGISTER = "register"  # recorded per backend, then passed on as each client can take it
    PROGRESS = "progress"  # progress tokens renamed per client
    REFRESH = "refresh"  # relayed to clients that declared support, else answered null
    RELAY = "relay"  # to the client concerned, ids remapped; its answer goes back
    STORE = "store"  # into the diagnostics store; the client sees the merged union
    CANCEL = "cancel"  # a server cancelling its own request: rewritten to the client's id


@dataclass(frozen=True, slots=True)
class Route:
    policy: Policy
    feature: str
    capability: str | None = None  # key in ServerCapabilities; None: always eligible
    position: bool = False  # params carry textDocument + position (Locate can fill them)
    range: bool = False  # params carry textDocument + range (Locate can fill them)
    merger: Callable[[merge.Results], Any] | None = None  # MERGE: how answers combine
    family: str | None = None  # items come back through ORIGIN methods of this family
    handler: str | None = None  # the local handler (session.dispatch / session.relay)
    client_capability: str | None = None  # dotted client capability needed to pass it on
    resolved_by: str | None = None  # a resolve method: whose `resolveProvider` says it resolves


def _r(
    policy: Policy,
    feature: str,
    capability: str | None = None,
    *,
    position: bool = False,
    range: bool = False,
    merger: Callable[[merge.Results], Any] | None = None,
    family: str | None = None,
    handler: str | None = None,
    client_capability: str | None = None,
    resolved_by: str | None = None,
) -> Route:
    if policy is Policy.MERGE and merger is None:
        merger = merge.concat
    return Route(
        policy,
        feature,
        capability,
        position,
        range,
        merger,
        family,
        handler,
        client_capability,
        resolved_by,
    )


F, M, OR, B, L = Policy.FIRST, Policy.MERGE, Policy.ORIGIN, Policy.BROADCAST, Policy.LOCAL

#: lspmux's own methods.
LOCATE_RESOLVE = "locate/resolve"
LOCATE_RESOLVE_RANGE = "locate/resolveRange"
LOCATE_DESCRIBE = "locate/describe"
DIAGNOSTIC_STATUS = "lspmux/diagnosticStatus"

#: Client → server requests.
CLIENT_REQUESTS: dict[str, Route] = {
    # -- lifecycle and lspmux's own methods -------------------------------------------------
    lsp.INITIALIZE: _r(L, "lifecycle", handler="initialize"),
    lsp.SHUTDOWN: _r(L, "lifecycle", handler="shutdown"),
    LOCATE_RESOLVE: _r(L, "locate", handler="locate_resolve"),
    LOCATE_RESOLVE_RANGE: _r(L, "locate", handler="locate_resolve_range"),
    LOCATE_DESCRIBE: _r(L, "locate", handler="locate_describe"),
    DIAGNOSTIC_STATUS: _r(L, "diagnostics", handler="diagnostic_status"),
    # -- first eligible -------------------------------------------------------------------
    lsp.TEXT_DOCUMENT_HOVER: _r(F, "hover", "hoverProvider", position=True),
    lsp.TEXT_DOCUMENT_SIGNATURE_HELP: _r(
        F, "signatureHelp", "signatureHelpProvider", position=True
    ),
    lsp.TEXT_DOCUMENT_RENAME: _r(F, "rename", "renameProvider", position=True),
    lsp.TEXT_DOCUMENT_PREPARE_RENAME: _r(F, "rename", "renameProvider", position=True),
    lsp.TEXT_DOCUMENT_FORMATTING: _r(F, "formatting", "documentFormattingProvider"),
    lsp.TEXT_DOCUMENT_RANGE_FORMATTING: _r(
        F, "rangeFormatting", "documentRangeFormattingProvider", range=True
    ),
    lsp.TEXT_DOCUMENT_RANGES_FORMATTING: _r(
        F, "rangeFormatting", "documentRangeFormattingProvider"
    ),
    lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING: _r(
        F, "onTypeFormatting", "documentOnTypeFormattingProvider", position=True
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT: _r(
        F, "documentHighlight", "documentHighlightProvider", position=True
    ),
    lsp.TEXT_DOCUMENT_INLAY_HINT: _r(
        F, "inlayHint", "inlayHintProvider", range=True, family="inlayHint"
    ),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: _r(F, "semanticTokens", "semanticTokensProvider"),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA: _r(F, "semanticTokens", "semanticTokensProvider"),
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: _r(
        F, "semanticTokens", "semanticTokensProvider", range=True
    ),
    lsp.TEXT_DOCUMENT_FOLDING_RANGE: _r(F, "foldingRange", "foldingRangeProvider"),
    lsp.TEXT_DOCUMENT_SELECTION_RANGE: _r(F, "selectionRange", "selectionRangeProvider"),
    lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE: _r(
        F, "linkedEditingRange", "linkedEditingRangeProvider", position=True
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_COLOR: _r(F, "color", "colorProvider"),
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: _r(F, "color", "colorProvider", range=True),
    lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY: _r(
        F, "callHierarchy", "callHierarchyProvider", position=True, family="callHierarchy"
    ),
    lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY: _r(
        F, "typeHierarchy", "typeHierarchyProvider", position=True, family="typeHierarchy"
    ),
    lsp.TEXT_DOCUMENT_MONIKER: _r(F, "moniker", "monikerProvider", position=True),
    lsp.TEXT_DOCUMENT_INLINE_VALUE: _r(F, "inlineValue", "inlineValueProvider", range=True),
    lsp.TEXT_DOCUMENT_INLINE_COMPLETION: _r(
        F, "inlineCompletion", "inlineCompletionProvider", position=True
    ),
    lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: _r(F, "willSaveWaitUntil", "textDocumentSync"),
    # -- all eligible, merged ---------------------------------------------------------------
    lsp.TEXT_DOCUMENT_COMPLETION: _r(
        M,
        "completion",
        "completionProvider",
        position=True,
        merger=merge.completion,
        family="completion",
    ),
    lsp.TEXT_DOCUMENT_CODE_ACTION: _r(
        M,
        "codeAction",
        "codeActionProvider",
        range=True,
        merger=merge.code_actions,
        family="codeAction",
    ),
    lsp.TEXT_DOCUMENT_CODE_LENS: _r(
        M, "codeLens", "codeLensProvider", merger=merge.tagged_list, family="codeLens"
    ),
    lsp.TEXT_DOCUMENT_DEFINITION: _r(
        M, "definition", "definitionProvider", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_DECLARATION: _r(
        M, "declaration", "declarationProvider", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_TYPE_DEFINITION: _r(
        M, "typeDefinition", "typeDefinitionProvider", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_IMPLEMENTATION: _r(
        M, "implementation", "implementationProvider", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_REFERENCES: _r(
        M, "references", "referencesProvider", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL: _r(
        M, "documentSymbol", "documentSymbolProvider", merger=merge.concat
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_LINK: _r(
        M, "documentLink", "documentLinkProvider", merger=merge.tagged_list, family="documentLink"
    ),
    lsp.WORKSPACE_SYMBOL: _r(
        M,
        "workspaceSymbol",
        "workspaceSymbolProvider",
        merger=merge.tagged_list,
        family="workspaceSymbol",
    ),
    lsp.WORKSPACE_WILL_CREATE_FILES: _r(
        M, "fileOperations", "workspace", merger=merge.workspace_edits
    ),
    lsp.WORKSPACE_WILL_RENAME_FILES: _r(
        M, "fileOperations", "workspace", merger=merge.workspace_edits
    ),
    lsp.WORKSPACE_WILL_DELETE_FILES: _r(
        M, "fileOperations", "workspace", merger=merge.workspace_edits
    ),
    # -- diagnostics ------------------------------------------------------------------------
    lsp.TEXT_DOCUMENT_DIAGNOSTIC: _r(
        Policy.DIAGNOSTICS, "diagnostics", "diagnosticProvider", handler="document_diagnostic"
    ),
    lsp.WORKSPACE_DIAGNOSTIC: _r(
        Policy.DIAGNOSTICS, "diagnostics", "diagnosticProvider", handler="workspace_diagnostic"
    ),
    # -- back to the origin -------------------------------------------------------------------
    lsp.COMPLETION_ITEM_RESOLVE: _r(
        OR, "completion", family="completion", resolved_by="completionProvider"
    ),
    lsp.CODE_ACTION_RESOLVE: _r(
        OR, "codeAction", family="codeAction", resolved_by="codeActionProvider"
    ),
    lsp.CODE_LENS_RESOLVE: _r(OR, "codeLens", family="codeLens", resolved_by="codeLensProvider"),
    lsp.DOCUMENT_LINK_RESOLVE: _r(
        OR, "documentLink", family="documentLink", resolved_by="documentLinkProvider"
    ),
    lsp.INLAY_HINT_RESOLVE: _r(
        OR, "inlayHint", family="inlayHint", resolved_by="inlayHintProvider"
    ),
    lsp.WORKSPACE_SYMBOL_RESOLVE: _r(
        OR, "workspaceSymbol", family="workspaceSymbol", resolved_by="workspaceSymbolProvider"
    ),
    lsp.WORKSPACE_EXECUTE_COMMAND: _r(
        OR, "executeCommand", "executeCommandProvider", family="codeAction"
    ),
    lsp.CALL_HIERARCHY_INCOMING_CALLS: _r(OR, "callHierarchy", family="callHierarchy"),
    lsp.CALL_HIERARCHY_OUTGOING_CALLS: _r(OR, "callHierarchy", family="callHierarchy"),
    lsp.TYPE_HIERARCHY_SUPERTYPES: _r(OR, "typeHierarchy", family="typeHierarchy"),
    lsp.TYPE_HIERARCHY_SUBTYPES: _r(OR, "typeHierarchy", family="typeHierarchy"),
}

#: Client → server notifications.
CLIENT_NOTIFICATIONS: dict[str, Route] = {
    lsp.INITIALIZED: _r(L, "lifecycle", handler="initialized"),
    lsp.EXIT: _r(L, "lifecycle", handler="exit"),
    lsp.CANCEL_REQUEST: _r(L, "lifecycle", handler="cancel"),
    lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL: _r(L, "sync", handler="progress_cancel"),
    lsp.TEXT_DOCUMENT_DID_OPEN: _r(B, "sync", handler="did_open"),
    lsp.TEXT_DOCUMENT_DID_CHANGE: _r(B, "sync", handler="did_change"),
    lsp.TEXT_DOCUMENT_DID_SAVE: _r(B, "sync", handler="did_save"),
    lsp.TEXT_DOCUMENT_DID_CLOSE: _r(B, "sync", handler="did_close"),
    lsp.TEXT_DOCUMENT_WILL_SAVE: _r(B, "sync"),
    lsp.WORKSPACE_DID_CHANGE_CONFIGURATION: _r(B, "sync"),
    lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES: _r(B, "sync", handler="did_change_watched_files"),
    lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: _r(
        B, "sync", handler="did_change_workspace_folders"
    ),
    lsp.WORKSPACE_DID_CREATE_FILES: _r(B, "sync"),
    lsp.WORKSPACE_DID_RENAME_FILES: _r(B, "sync"),
    lsp.WORKSPACE_DID_DELETE_FILES: _r(B, "sync"),
    lsp.SET_TRACE: _r(B, "sync"),
}

#: Server → client requests.
SERVER_REQUESTS: dict[str, Route] = {
    # Asked of the instance's first client, merged under the configured settings (backend.py).
    lsp.WORKSPACE_CONFIGURATION: _r(
        Policy.ANSWER, "sync", handler="configuration", client_capability="workspace.configuration"
    ),
    lsp.WORKSPACE_WORKSPACE_FOLDERS: _r(Policy.ANSWER, "sync", handler="workspace_folders"),
    lsp.CLIENT_REGISTER_CAPABILITY: _r(Policy.REGISTER, "sync", handler="register"),
    lsp.CLIENT_UNREGISTER_CAPABILITY: _r(Policy.REGISTER, "sync", handler="unregister"),
    lsp.WINDOW_WORK_DONE_PROGRESS_CREATE: _r(
        Policy.PROGRESS,
        "sync",
        handler="progress_create",
        client_capability="window.workDoneProgress",
    ),
    lsp.WORKSPACE_DIAGNOSTIC_REFRESH: _r(
        Policy.REFRESH,
        "diagnostics",
        handler="diagnostic_refresh",
        client_capability="workspace.diagnostics.refreshSupport",
    ),
    lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH: _r(
        Policy.REFRESH,
        "semanticTokens",
        handler="refresh",
        client_capability="workspace.semanticTokens.refreshSupport",
    ),
    lsp.WORKSPACE_INLAY_HINT_REFRESH: _r(
        Policy.REFRESH,
        "inlayHint",
        handler="refresh",
        client_capability="workspace.inlayHint.refreshSupport",
    ),
    lsp.WORKSPACE_INLINE_VALUE_REFRESH: _r(
        Policy.REFRESH,
        "inlineValue",
        handler="refresh",
        client_capability="workspace.inlineValue.refreshSupport",
    ),
    lsp.WORKSPACE_CODE_LENS_REFRESH: _r(
        Policy.REFRESH,
        "codeLens",
        handler="refresh",
        client_capability="workspace.codeLens.refreshSupport",
    ),
    lsp.WORKSPACE_FOLDING_RANGE_REFRESH: _r(
        Policy.REFRESH,
        "foldingRange",
        handler="refresh",
        client_capability="workspace.foldingRange.refreshSupport",
    ),
    lsp.WORKSPACE_APPLY_EDIT: _r(
        Policy.RELAY, "sync", handler="relay", client_capability="workspace.applyEdit"
    ),
    lsp.WINDOW_SHOW_MESSAGE_REQUEST: _r(Policy.RELAY, "sync", handler="relay"),
    lsp.WINDOW_SHOW_DOCUMENT: _r(
        Policy.RELAY, "sync", handler="relay", client_capability="window.showDocument.support"
    ),
}

#: Server → client notifications.
SERVER_NOTIFICATIONS: dict[str, Route] = {
    lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _r(Policy.STORE, "diagnostics", handler="publish"),
    lsp.PROGRESS: _r(Policy.PROGRESS, "sync", handler="progress"),
    lsp.CANCEL_REQUEST: _r(Policy.CANCEL, "sync", handler="cancel"),
    lsp.WINDOW_LOG_MESSAGE: _r(Policy.RELAY, "sync", handler="log_message"),
    lsp.WINDOW_SHOW_MESSAGE: _r(Policy.RELAY, "sync", handler="forward"),
    lsp.TELEMETRY_EVENT: _r(Policy.RELAY, "sync", handler="forward"),
    lsp.LOG_TRACE: _r(Policy.RELAY, "sync", handler="forward"),
}

TABLES: dict[Direction, dict[str, Route]] = {
    Direction.CLIENT_REQUEST: CLIENT_REQUESTS,
    Direction.CLIENT_NOTIFICATION: CLIENT_NOTIFICATIONS,
    Direction.SERVER_REQUEST: SERVER_REQUESTS,
    Direction.SERVER_NOTIFICATION: SERVER_NOTIFICATIONS,
}

#: Client → server methods that backends serve (requests and notifications), by method:
#: what `only_features` / `except_features` and the capability checks apply to.
ROUTES: dict[str, Route] = {
    m: r
    for table in (CLIENT_REQUESTS, CLIENT_NOTIFICATIONS)
    for m, r in table.items()
    if r.policy is not Policy.LOCAL and r.feature not in ("lifecycle", "locate")
}

#: Every feature name a user may write in `only_features` / `except_features`.
#: "sync" (document synchronisation) is not switchable: a backend always sees its documents.
FEATURES: frozenset[str] = frozenset(r.feature for r in ROUTES.values()) - {"sync"}


def client_declares(capabilities: Any, dotted: str | None) -> bool:
    """Whether the client's capabilities have `dotted` (e.g. "window.workDoneProgress") true."""
    if dotted is None:
        return True
    node = capabilities
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return False
        node = node.get(part)
    return bool(node)
