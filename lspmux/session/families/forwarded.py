"""The routes lspmux forwards by policy alone: first eligible (hover, rename, formatting, …),
all eligible and merged (completion, definition, references, …), and back to the origin of an
item (`completionItem/resolve`, …). No handler: `session/forward.py` serves every one of them.

`needs_option`: a server that offers the capability must also set this option of it
(`renameProvider.prepareProvider`, `documentRangeFormattingProvider.rangesSupport`).
"""

from __future__ import annotations

from lspmux.routing import merge
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route

F, M, OR = Policy.FIRST, Policy.MERGE, Policy.ORIGIN

REQUESTS: dict[str, Route] = {
    # -- first eligible -------------------------------------------------------------------
    lsp.TEXT_DOCUMENT_HOVER: route(F, "hover", position=True),
    lsp.TEXT_DOCUMENT_SIGNATURE_HELP: route(F, "signatureHelp", position=True),
    lsp.TEXT_DOCUMENT_RENAME: route(F, "rename", position=True),
    lsp.TEXT_DOCUMENT_PREPARE_RENAME: route(
        F, "rename", position=True, needs_option="prepareProvider"
    ),
    lsp.TEXT_DOCUMENT_FORMATTING: route(F, "formatting"),
    lsp.TEXT_DOCUMENT_RANGE_FORMATTING: route(F, "rangeFormatting", range=True),
    lsp.TEXT_DOCUMENT_RANGES_FORMATTING: route(F, "rangeFormatting", needs_option="rangesSupport"),
    lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING: route(F, "onTypeFormatting", position=True),
    lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT: route(F, "documentHighlight", position=True),
    lsp.TEXT_DOCUMENT_INLAY_HINT: route(F, "inlayHint", range=True, family="inlayHint"),
    lsp.TEXT_DOCUMENT_FOLDING_RANGE: route(F, "foldingRange"),
    lsp.TEXT_DOCUMENT_SELECTION_RANGE: route(F, "selectionRange"),
    lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE: route(F, "linkedEditingRange", position=True),
    lsp.TEXT_DOCUMENT_DOCUMENT_COLOR: route(F, "color"),
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: route(F, "color", range=True),
    lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY: route(
        F, "callHierarchy", position=True, family="callHierarchy"
    ),
    lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY: route(
        F, "typeHierarchy", position=True, family="typeHierarchy"
    ),
    lsp.TEXT_DOCUMENT_MONIKER: route(F, "moniker", position=True),
    lsp.TEXT_DOCUMENT_INLINE_VALUE: route(F, "inlineValue", range=True),
    lsp.TEXT_DOCUMENT_INLINE_COMPLETION: route(F, "inlineCompletion", position=True),
    lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: route(F, "willSaveWaitUntil"),
    # -- all eligible, merged ---------------------------------------------------------------
    lsp.TEXT_DOCUMENT_COMPLETION: route(
        M,
        "completion",
        position=True,
        merger=merge.completion,
        family="completion",
    ),
    lsp.TEXT_DOCUMENT_CODE_LENS: route(M, "codeLens", merger=merge.tagged_list, family="codeLens"),
    lsp.TEXT_DOCUMENT_DEFINITION: route(M, "definition", position=True, merger=merge.locations),
    lsp.TEXT_DOCUMENT_DECLARATION: route(M, "declaration", position=True, merger=merge.locations),
    lsp.TEXT_DOCUMENT_TYPE_DEFINITION: route(
        M, "typeDefinition", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_IMPLEMENTATION: route(
        M, "implementation", position=True, merger=merge.locations
    ),
    lsp.TEXT_DOCUMENT_REFERENCES: route(M, "references", position=True, merger=merge.locations),
    lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL: route(M, "documentSymbol", merger=merge.concat),
    lsp.TEXT_DOCUMENT_DOCUMENT_LINK: route(
        M, "documentLink", merger=merge.tagged_list, family="documentLink"
    ),
    lsp.WORKSPACE_SYMBOL: route(
        M,
        "workspaceSymbol",
        merger=merge.tagged_list,
        family="workspaceSymbol",
    ),
    lsp.WORKSPACE_WILL_CREATE_FILES: route(M, "fileOperations", merger=merge.workspace_edits),
    lsp.WORKSPACE_WILL_RENAME_FILES: route(M, "fileOperations", merger=merge.workspace_edits),
    lsp.WORKSPACE_WILL_DELETE_FILES: route(M, "fileOperations", merger=merge.workspace_edits),
    # -- back to the origin -------------------------------------------------------------------
    lsp.COMPLETION_ITEM_RESOLVE: route(
        OR, "completion", family="completion", resolved_by="completionProvider"
    ),
    lsp.CODE_LENS_RESOLVE: route(OR, "codeLens", family="codeLens", resolved_by="codeLensProvider"),
    lsp.DOCUMENT_LINK_RESOLVE: route(
        OR, "documentLink", family="documentLink", resolved_by="documentLinkProvider"
    ),
    lsp.INLAY_HINT_RESOLVE: route(
        OR, "inlayHint", family="inlayHint", resolved_by="inlayHintProvider"
    ),
    lsp.WORKSPACE_SYMBOL_RESOLVE: route(
        OR, "workspaceSymbol", family="workspaceSymbol", resolved_by="workspaceSymbolProvider"
    ),
    lsp.CALL_HIERARCHY_INCOMING_CALLS: route(OR, "callHierarchy", family="callHierarchy"),
    lsp.CALL_HIERARCHY_OUTGOING_CALLS: route(OR, "callHierarchy", family="callHierarchy"),
    lsp.TYPE_HIERARCHY_SUPERTYPES: route(OR, "typeHierarchy", family="typeHierarchy"),
    lsp.TYPE_HIERARCHY_SUBTYPES: route(OR, "typeHierarchy", family="typeHierarchy"),
}
