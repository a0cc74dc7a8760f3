"""Which `ServerCapabilities` key serves each method: declared once, here, for the routes and
for the backends — down to the option inside a key where a registration names one (a file
operation under `workspace.fileOperations`, `willSave` under `textDocumentSync`).

Pure data below `backends/`: the backends read it to turn registrations into capabilities and
to tell a server what its client can register (`backends/provided.py`,
`backends/client_caps.py`); the method table (`routing/table.py`) gives every route its
`capability` from `capability_of()` as it assembles the families' routes, so no family spells
a capability key.
"""

from __future__ import annotations

from lspmux.routing import methods as lsp

#: Registration method, ServerCapabilities key, client capability section (textDocument.X or
#: workspace.X) of every provider a server may offer statically or register dynamically.
PROVIDERS: tuple[tuple[str, str, str], ...] = (
    (lsp.TEXT_DOCUMENT_COMPLETION, "completionProvider", "textDocument.completion"),
    (lsp.TEXT_DOCUMENT_HOVER, "hoverProvider", "textDocument.hover"),
    (lsp.TEXT_DOCUMENT_SIGNATURE_HELP, "signatureHelpProvider", "textDocument.signatureHelp"),
    (lsp.TEXT_DOCUMENT_DECLARATION, "declarationProvider", "textDocument.declaration"),
    (lsp.TEXT_DOCUMENT_DEFINITION, "definitionProvider", "textDocument.definition"),
    (lsp.TEXT_DOCUMENT_TYPE_DEFINITION, "typeDefinitionProvider", "textDocument.typeDefinition"),
    (lsp.TEXT_DOCUMENT_IMPLEMENTATION, "implementationProvider", "textDocument.implementation"),
    (lsp.TEXT_DOCUMENT_REFERENCES, "referencesProvider", "textDocument.references"),
    (
        lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
        "documentHighlightProvider",
        "textDocument.documentHighlight",
    ),
    (lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, "documentSymbolProvider", "textDocument.documentSymbol"),
    (lsp.TEXT_DOCUMENT_CODE_ACTION, "codeActionProvider", "textDocument.codeAction"),
    (lsp.TEXT_DOCUMENT_CODE_LENS, "codeLensProvider", "textDocument.codeLens"),
    (lsp.TEXT_DOCUMENT_DOCUMENT_LINK, "documentLinkProvider", "textDocument.documentLink"),
    (lsp.TEXT_DOCUMENT_DOCUMENT_COLOR, "colorProvider", "textDocument.colorProvider"),
    (lsp.TEXT_DOCUMENT_FORMATTING, "documentFormattingProvider", "textDocument.formatting"),
    (
        lsp.TEXT_DOCUMENT_RANGE_FORMATTING,
        "documentRangeFormattingProvider",
        "textDocument.rangeFormatting",
    ),
    (
        lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
        "documentOnTypeFormattingProvider",
        "textDocument.onTypeFormatting",
    ),
    (lsp.TEXT_DOCUMENT_RENAME, "renameProvider", "textDocument.rename"),
    (lsp.TEXT_DOCUMENT_FOLDING_RANGE, "foldingRangeProvider", "textDocument.foldingRange"),
    (lsp.TEXT_DOCUMENT_SELECTION_RANGE, "selectionRangeProvider", "textDocument.selectionRange"),
    (
        lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
        "callHierarchyProvider",
        "textDocument.callHierarchy",
    ),
    # the one registration method that is not a request method
    ("textDocument/semanticTokens", "semanticTokensProvider", "textDocument.semanticTokens"),
    (
        lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE,
        "linkedEditingRangeProvider",
        "textDocument.linkedEditingRange",
    ),
    (lsp.TEXT_DOCUMENT_MONIKER, "monikerProvider", "textDocument.moniker"),
    (
        lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY,
        "typeHierarchyProvider",
        "textDocument.typeHierarchy",
    ),
    (lsp.TEXT_DOCUMENT_INLINE_VALUE, "inlineValueProvider", "textDocument.inlineValue"),
    (lsp.TEXT_DOCUMENT_INLAY_HINT, "inlayHintProvider", "textDocument.inlayHint"),
    (
        lsp.TEXT_DOCUMENT_INLINE_COMPLETION,
        "inlineCompletionProvider",
        "textDocument.inlineCompletion",
    ),
    (lsp.TEXT_DOCUMENT_DIAGNOSTIC, "diagnosticProvider", "textDocument.diagnostic"),
    (lsp.WORKSPACE_SYMBOL, "workspaceSymbolProvider", "workspace.symbol"),
    (lsp.WORKSPACE_EXECUTE_COMMAND, "executeCommandProvider", "workspace.executeCommand"),
)
BY_METHOD = {method: key for method, key, _ in PROVIDERS}
BY_KEY = {key: (method, section) for method, key, section in PROVIDERS}

#: Methods served by a capability other than the one registered under their own name: the
#: companions of a provider (prepareRename, the semantic token requests, …), and what the
#: document sync and file operation capabilities serve.
SERVED_BY: dict[str, str] = {
    lsp.TEXT_DOCUMENT_PREPARE_RENAME: "renameProvider",
    lsp.TEXT_DOCUMENT_RANGES_FORMATTING: "documentRangeFormattingProvider",
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: "colorProvider",
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL: "semanticTokensProvider",
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA: "semanticTokensProvider",
    lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE: "semanticTokensProvider",
    lsp.WORKSPACE_DIAGNOSTIC: "diagnosticProvider",
    lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: "textDocumentSync",
    lsp.WORKSPACE_WILL_CREATE_FILES: "workspace",  # workspace.fileOperations.willCreate
    lsp.WORKSPACE_WILL_RENAME_FILES: "workspace",
    lsp.WORKSPACE_WILL_DELETE_FILES: "workspace",
}


#: File operation registrations → workspace.fileOperations.<op>.
FILE_OPERATIONS = {
    lsp.WORKSPACE_WILL_CREATE_FILES: "willCreate",
    lsp.WORKSPACE_DID_CREATE_FILES: "didCreate",
    lsp.WORKSPACE_WILL_RENAME_FILES: "willRename",
    lsp.WORKSPACE_DID_RENAME_FILES: "didRename",
    lsp.WORKSPACE_WILL_DELETE_FILES: "willDelete",
    lsp.WORKSPACE_DID_DELETE_FILES: "didDelete",
}
#: Synchronisation registrations that change what lspmux must announce:
#: textDocumentSync.<option>.
SYNC_OPTIONS = {
    lsp.TEXT_DOCUMENT_WILL_SAVE: "willSave",
    lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: "willSaveWaitUntil",
}


def capability_of(method: str) -> str | None:
    """The `ServerCapabilities` key a server must offer to be sent `method` (None: any server
    of the file may be sent it)."""
    return BY_METHOD.get(method) or SERVED_BY.get(method)
