"""The routes lspmux forwards by policy alone: first eligible (hover, rename, formatting, …),
all eligible and merged (completion, definition, references, …), and back to the origin of an
item (`completionItem/resolve`, …). No handler: `session/forward.py` serves every one of them.

`needs_option`: a server that offers the capability must also set this option of it
(`renameProvider.prepareProvider`, `documentRangeFormattingProvider.rangesSupport`).
"""

from __future__ import annotations

import lspmux.encodings.shapes as s
from lspmux.routing import adapt, merge
from lspmux.routing import methods as lsp
from lspmux.routing.route import Policy, Route, route

F, M, OR = Policy.FIRST, Policy.MERGE, Policy.ORIGIN


def _locations(feature: str, *, links: bool = False) -> Route:
    """A request at a position answered with locations, merged from every eligible server.
    `links`: they may be `LocationLink`s, made `Location`s for a client whose section of the
    same name lacks `linkSupport` (the fitting kind is the feature)."""
    return route(
        M, feature, position=True, merger=merge.locations, params_shape=s.TDP,
        result_shape=s.LOCATIONS, fit=feature if links else None,
    )  # fmt: skip


def _prepare_hierarchy(feature: str) -> Route:
    """The first request of a call or type hierarchy: items its later requests go back with."""
    return route(
        F, feature, position=True, family=feature, params_shape=s.TDP,
        result_shape=s.each(s.HIERARCHY_ITEM),
    )  # fmt: skip


def _resolve(feature: str, resolved_by: str, item: s.Shape, fit: str | None = None) -> Route:
    """A resolve request: the item back to the server that made it, answered with the item."""
    return route(
        OR, feature, family=feature, resolved_by=resolved_by, params_shape=item,
        result_shape=item, fit=fit,
    )  # fmt: skip


def _hierarchy(feature: str, result: s.Shape) -> Route:
    """A call or type hierarchy request on an item its `prepare…` answered: back to the server
    that made the item."""
    return route(OR, feature, family=feature, params_shape=s.HIERARCHY_PARAMS, result_shape=result)


REQUESTS: dict[str, Route] = {
    # -- first eligible -------------------------------------------------------------------
    lsp.TEXT_DOCUMENT_HOVER: route(
        F, "hover", position=True, params_shape=s.TDP, result_shape=s.WITH_RANGE, fit=adapt.HOVER
    ),
    lsp.TEXT_DOCUMENT_SIGNATURE_HELP: route(
        F, "signatureHelp", position=True, params_shape=s.TDP, fit=adapt.SIGNATURE_HELP
    ),
    lsp.TEXT_DOCUMENT_RENAME: route(
        F, "rename", position=True, params_shape=s.TDP, result_shape=s.WORKSPACE_EDIT
    ),
    lsp.TEXT_DOCUMENT_PREPARE_RENAME: route(
        F,
        "rename",
        position=True,
        needs_option="prepareProvider",
        params_shape=s.TDP,
        result_shape=s.PREPARE_RENAME,
    ),
    lsp.TEXT_DOCUMENT_FORMATTING: route(F, "formatting", result_shape=s.TEXT_EDITS),
    lsp.TEXT_DOCUMENT_RANGE_FORMATTING: route(
        F,
        "rangeFormatting",
        range=True,
        params_shape=s.WITH_RANGE_PARAMS,
        result_shape=s.TEXT_EDITS,
    ),
    lsp.TEXT_DOCUMENT_RANGES_FORMATTING: route(
        F,
        "rangeFormatting",
        needs_option="rangesSupport",
        params_shape=s.keyed(ranges=s.RANGES),
        result_shape=s.TEXT_EDITS,
    ),
    lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING: route(
        F, "onTypeFormatting", position=True, params_shape=s.TDP, result_shape=s.TEXT_EDITS
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT: route(
        F, "documentHighlight", position=True, params_shape=s.TDP, result_shape=s.each(s.WITH_RANGE)
    ),
    lsp.TEXT_DOCUMENT_INLAY_HINT: route(
        F,
        "inlayHint",
        range=True,
        family="inlayHint",
        params_shape=s.WITH_RANGE_PARAMS,
        result_shape=s.each(s.INLAY_HINT),
    ),
    lsp.TEXT_DOCUMENT_FOLDING_RANGE: route(F, "foldingRange", result_shape=s.each(s.FOLDING_RANGE)),
    lsp.TEXT_DOCUMENT_SELECTION_RANGE: route(
        F,
        "selectionRange",
        params_shape=s.keyed(positions=s.each(s.POSITION)),
        result_shape=s.each(s.SELECTION_RANGE),
    ),
    lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE: route(
        F, "linkedEditingRange", position=True, params_shape=s.TDP, result_shape=s.LINKED_EDITING
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_COLOR: route(F, "color", result_shape=s.each(s.WITH_RANGE)),
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: route(
        F,
        "color",
        range=True,
        params_shape=s.WITH_RANGE_PARAMS,
        result_shape=s.each(s.COLOR_PRESENTATION),
    ),
    lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY: _prepare_hierarchy("callHierarchy"),
    lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY: _prepare_hierarchy("typeHierarchy"),
    lsp.TEXT_DOCUMENT_MONIKER: route(F, "moniker", position=True, params_shape=s.TDP),
    lsp.TEXT_DOCUMENT_INLINE_VALUE: route(
        F,
        "inlineValue",
        range=True,
        params_shape=s.keyed(range=s.RANGE, context=s.keyed(stoppedLocation=s.RANGE)),
        result_shape=s.each(s.WITH_RANGE),
    ),
    lsp.TEXT_DOCUMENT_INLINE_COMPLETION: route(
        F,
        "inlineCompletion",
        position=True,
        params_shape=s.keyed(
            position=s.POSITION, context=s.keyed(selectedCompletionInfo=s.WITH_RANGE)
        ),
        result_shape=s.INLINE_COMPLETION,
    ),
    lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL: route(
        F, "willSaveWaitUntil", result_shape=s.TEXT_EDITS
    ),
    # -- all eligible, merged ---------------------------------------------------------------
    lsp.TEXT_DOCUMENT_COMPLETION: route(
        M,
        "completion",
        position=True,
        merger=merge.completion,
        family="completion",
        params_shape=s.TDP,
        result_shape=s.COMPLETION,
        fit=adapt.COMPLETION,
    ),
    lsp.TEXT_DOCUMENT_CODE_LENS: route(
        M,
        "codeLens",
        merger=merge.tagged_list,
        family="codeLens",
        result_shape=s.each(s.WITH_RANGE),
    ),
    lsp.TEXT_DOCUMENT_DEFINITION: _locations("definition", links=True),
    lsp.TEXT_DOCUMENT_DECLARATION: _locations("declaration", links=True),
    lsp.TEXT_DOCUMENT_TYPE_DEFINITION: _locations("typeDefinition", links=True),
    lsp.TEXT_DOCUMENT_IMPLEMENTATION: _locations("implementation", links=True),
    lsp.TEXT_DOCUMENT_REFERENCES: _locations("references"),
    lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL: route(
        M, "documentSymbol", merger=merge.concat, result_shape=s.DOCUMENT_SYMBOLS
    ),
    lsp.TEXT_DOCUMENT_DOCUMENT_LINK: route(
        M,
        "documentLink",
        merger=merge.tagged_list,
        family="documentLink",
        result_shape=s.each(s.WITH_RANGE),
    ),
    lsp.WORKSPACE_SYMBOL: route(
        M,
        "workspaceSymbol",
        merger=merge.tagged_list,
        family="workspaceSymbol",
        result_shape=s.each(s.SYMBOL_INFORMATION),
    ),
    lsp.WORKSPACE_WILL_CREATE_FILES: route(
        M, "fileOperations", merger=merge.workspace_edits, result_shape=s.WORKSPACE_EDIT
    ),
    lsp.WORKSPACE_WILL_RENAME_FILES: route(
        M, "fileOperations", merger=merge.workspace_edits, result_shape=s.WORKSPACE_EDIT
    ),
    lsp.WORKSPACE_WILL_DELETE_FILES: route(
        M, "fileOperations", merger=merge.workspace_edits, result_shape=s.WORKSPACE_EDIT
    ),
    # -- back to the origin -------------------------------------------------------------------
    lsp.COMPLETION_ITEM_RESOLVE: _resolve(
        "completion", "completionProvider", s.COMPLETION_ITEM, fit=adapt.COMPLETION
    ),
    lsp.CODE_LENS_RESOLVE: _resolve("codeLens", "codeLensProvider", s.WITH_RANGE),
    lsp.DOCUMENT_LINK_RESOLVE: _resolve("documentLink", "documentLinkProvider", s.WITH_RANGE),
    lsp.INLAY_HINT_RESOLVE: _resolve("inlayHint", "inlayHintProvider", s.INLAY_HINT),
    lsp.WORKSPACE_SYMBOL_RESOLVE: _resolve(
        "workspaceSymbol", "workspaceSymbolProvider", s.SYMBOL_INFORMATION
    ),
    lsp.CALL_HIERARCHY_INCOMING_CALLS: _hierarchy("callHierarchy", s.each(s.INCOMING_CALL)),
    lsp.CALL_HIERARCHY_OUTGOING_CALLS: _hierarchy("callHierarchy", s.each(s.OUTGOING_CALL)),
    lsp.TYPE_HIERARCHY_SUPERTYPES: _hierarchy("typeHierarchy", s.each(s.HIERARCHY_ITEM)),
    lsp.TYPE_HIERARCHY_SUBTYPES: _hierarchy("typeHierarchy", s.each(s.HIERARCHY_ITEM)),
}
