"""The feature names a configuration may switch per server (`only_features`,
`except_features`), spelled once as plain strings: the config checks read them at every start,
before the routing table (which names its routes' features, and checks they are these) is
imported."""

from __future__ import annotations

#: Every feature name a user may write in `only_features` / `except_features` (config checks read
#: it here, on the start path, below the routing table; `routing/table.py` refuses to load when
#: its routes' features differ). "sync" (document synchronisation) is not switchable.
FEATURES: frozenset[str] = frozenset(
    [
        "callHierarchy",
        "codeAction",
        "codeLens",
        "color",
        "completion",
        "declaration",
        "definition",
        "diagnostics",
        "documentHighlight",
        "documentLink",
        "documentSymbol",
        "executeCommand",
        "fileOperations",
        "foldingRange",
        "formatting",
        "hover",
        "implementation",
        "inlayHint",
        "inlineCompletion",
        "inlineValue",
        "linkedEditingRange",
        "moniker",
        "onTypeFormatting",
        "rangeFormatting",
        "references",
        "rename",
        "selectionRange",
        "semanticTokens",
        "signatureHelp",
        "typeDefinition",
        "typeHierarchy",
        "willSaveWaitUntil",
        "workspaceSymbol",
    ]
)
