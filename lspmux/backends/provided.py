"""What backends provide: the providers of `ServerCapabilities`, the static capabilities that
dynamic registrations amount to, and the union of several backends' capabilities.

- which registration method is which `ServerCapabilities` key (or file operation, or sync
  option) is `routing/capabilities.py`'s (`PROVIDERS`, `FILE_OPERATIONS`, `SYNC_OPTIONS`: the
  same declaration the routes' capability keys come from).
- `registered_capabilities()` turns `client/registerCapability` registrations into the static
  capabilities they amount to; `effective()` adds them to a backend's static capabilities.
- `union()` is what several backends serve together, each provider's options unioned.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from lspmux.routing import semantic_tokens
from lspmux.routing.capabilities import BY_METHOD, FILE_OPERATIONS, SYNC_OPTIONS


def offered(value: Any) -> bool:
    return bool(value) or value == {}


# -- dynamic registrations -----------------------------------------------------------------------


def registered_capabilities(registrations: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The static capabilities a backend's registrations amount to, from `(method,
    registerOptions)` pairs (`Backend.registrations.values()`). Several registrations of one
    method (per document selector) union their options. Registrations that are no server
    capability (watched files, configuration) amount to nothing here."""
    parts: list[dict[str, Any]] = []
    for method, options in registrations:
        opts = {
            k: v
            for k, v in (options if isinstance(options, Mapping) else {}).items()
            if k not in ("documentSelector", "id")
        }
        if method in BY_METHOD:
            parts.append({BY_METHOD[method]: opts or True})
        elif method in FILE_OPERATIONS:
            op = {"filters": opts.get("filters") or []}
            parts.append({"workspace": {"fileOperations": {FILE_OPERATIONS[method]: op}}})
        elif method in SYNC_OPTIONS:
            parts.append({"textDocumentSync": {SYNC_OPTIONS[method]: True}})
    return union(parts)


def effective(
    static: Mapping[str, Any], registrations: Iterable[tuple[str, Any]]
) -> dict[str, Any]:
    """A backend's static capabilities with its registrations added: what it serves now. Keys
    the union does not cover (`positionEncoding`, the sync kind, experimental ones) stay as
    the server gave them."""
    out = copy.deepcopy(dict(static))
    for key, value in union([static, registered_capabilities(registrations)]).items():
        mine = out.get(key)
        if key == "textDocumentSync" and isinstance(mine, int):  # the bare sync kind
            mine = {"openClose": True, "change": mine}
        out[key] = {**mine, **value} if key in _SECTIONS and isinstance(mine, dict) else value
    return out


#: Capabilities that hold more than what `union()` computes for them.
_SECTIONS = ("textDocumentSync", "workspace")


# -- the union -----------------------------------------------------------------------------------

#: Providers announced as `true` when any backend offers them (their options carry nothing a
#: client acts on beyond workDoneProgress, which lspmux reports itself).
FLAGS = (
    "hoverProvider",
    "declarationProvider",
    "definitionProvider",
    "typeDefinitionProvider",
    "implementationProvider",
    "referencesProvider",
    "documentHighlightProvider",
    "documentSymbolProvider",
    "documentFormattingProvider",
    "foldingRangeProvider",
    "selectionRangeProvider",
    "linkedEditingRangeProvider",
    "colorProvider",
    "callHierarchyProvider",
    "typeHierarchyProvider",
    "monikerProvider",
    "inlineValueProvider",
    "inlineCompletionProvider",
)
#: Providers whose only option that matters is a boolean some backend may set.
BOOL_OPTION = {
    "codeLensProvider": "resolveProvider",
    "documentLinkProvider": "resolveProvider",
    "inlayHintProvider": "resolveProvider",
    "workspaceSymbolProvider": "resolveProvider",
    "renameProvider": "prepareProvider",
    "documentRangeFormattingProvider": "rangesSupport",
}


def union(per_backend: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """What a set of backends serves together, each provider's options unioned: trigger and
    commit characters, commands, code action kinds, file operation filters, semantic token
    legends; `resolveProvider` and friends true when some backend has them. Only capabilities
    lspmux routes are kept."""
    backends = [b for b in per_backend if b]
    out: dict[str, Any] = {}

    def offering(key: str) -> list[Any]:
        return [b[key] for b in backends if offered(b.get(key))]

    for key in FLAGS:
        if offering(key):
            out[key] = True
    for key, option in BOOL_OPTION.items():
        if values := offering(key):
            out[key] = {option: any(opt(v, option) for v in values)}
    if values := offering("completionProvider"):
        comp: dict[str, Any] = {
            "triggerCharacters": _chars(values, "triggerCharacters"),
            "resolveProvider": any(opt(v, "resolveProvider") for v in values),
        }
        if commit := _chars(values, "allCommitCharacters"):
            comp["allCommitCharacters"] = commit
        if any(
            opt(v.get("completionItem") if isinstance(v, dict) else None, "labelDetailsSupport")
            for v in values
        ):
            comp["completionItem"] = {"labelDetailsSupport": True}
        out["completionProvider"] = comp
    if values := offering("signatureHelpProvider"):
        out["signatureHelpProvider"] = {
            "triggerCharacters": _chars(values, "triggerCharacters"),
            "retriggerCharacters": _chars(values, "retriggerCharacters"),
        }
    if values := offering("codeActionProvider"):
        action: dict[str, Any] = {"resolveProvider": any(opt(v, "resolveProvider") for v in values)}
        # a backend that does not list its kinds may return any: then no list is announced
        if all(isinstance(v, dict) and v.get("codeActionKinds") for v in values):
            action["codeActionKinds"] = _chars(values, "codeActionKinds")
        out["codeActionProvider"] = action
    if values := offering("executeCommandProvider"):
        out["executeCommandProvider"] = {"commands": _chars(values, "commands")}
    on_type = offering("documentOnTypeFormattingProvider")
    if values := [v for v in on_type if opt(v, "firstTriggerCharacter")]:
        first = values[0]["firstTriggerCharacter"]
        more = [
            {"c": [v["firstTriggerCharacter"], *(v.get("moreTriggerCharacter") or [])]}
            for v in values
        ]
        out["documentOnTypeFormattingProvider"] = {
            "firstTriggerCharacter": first,
            "moreTriggerCharacter": [c for c in _chars(more, "c") if c != first],
        }
    if values := [v for v in offering("semanticTokensProvider") if isinstance(v, dict)]:
        legend, _ = semantic_tokens.union_legend([v.get("legend") for v in values])
        sem: dict[str, Any] = {
            "legend": legend,
            "full": any(offered(v.get("full")) for v in values),
        }
        sem["range"] = any(opt(v, "range") for v in values)
        out["semanticTokensProvider"] = sem
    if values := offering("diagnosticProvider"):
        out["diagnosticProvider"] = {
            "interFileDependencies": any(opt(v, "interFileDependencies") for v in values),
            "workspaceDiagnostics": any(opt(v, "workspaceDiagnostics") for v in values),
        }
    syncs = [_sync(b.get("textDocumentSync")) for b in backends if "textDocumentSync" in b]
    if syncs:
        sync = {k: any(s.get(k) for s in syncs) for k in ("willSave", "willSaveWaitUntil")}
        out["textDocumentSync"] = {k: v for k, v in sync.items() if v}
    ops: dict[str, list[Any]] = {}
    for b in backends:
        for op, value in (((b.get("workspace") or {}).get("fileOperations")) or {}).items():
            if op in FILE_OPERATIONS.values() and isinstance(value, dict):
                filters = ops.setdefault(op, [])
                filters += [f for f in value.get("filters") or [] if f not in filters]
    if ops:
        out["workspace"] = {"fileOperations": {op: {"filters": f} for op, f in ops.items()}}
    return out


def opt(value: Any, option: str) -> Any:
    return value.get(option) if isinstance(value, dict) else None


def _chars(values: Iterable[Any], option: str) -> list[Any]:
    out: list[Any] = []
    for value in values:
        for item in opt(value, option) or []:
            if item not in out:
                out.append(item)
    return out


def _sync(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
