"""Converting whole messages between position encodings, by method.

`PARAMS` and `RESULTS` say, per LSP method, which shape its params and its result have (see
`shapes.py`); the entry points run the shape with the document the positions refer to:

- `convert_params(method, params, src, dst, text_of, uri=None)`: a request's params, in either
  direction (client→backend requests; backend→client requests such as `workspace/applyEdit`).
- `convert_notification(method, params, ...)`: the same for notifications (`didChange`, whose
  incremental ranges are converted change by change against the text *before* the
  notification — so call it before applying the change to the documents you keep —, and
  `publishDiagnostics`).
- `convert_result(method, result, src, dst, text_of, request_params, uri=None)`: a response,
  whose bare positions (a Hover's range) are in the request's document.

The document of bare positions is `uri` when given, else the params' `textDocument.uri` (or the
hierarchy `item.uri`). Resolve requests (`completionItem/resolve`, `codeAction/resolve`,
`inlayHint/resolve`, ...) carry no document: pass `uri=` the document the item came from, or
their bare positions are left as they are (and logged).

Methods in neither table: their params or result are walked generically — every dict shaped
like a Position (`line` and `character`, integers) is converted in the document named by the
nearest enclosing `uri`/`textDocument`/`targetUri`, else the request's. Chosen over leaving them
untouched because an unconverted position is always wrong when the encodings differ, while a
look-alike that is not a position is rare. Methods known to carry no positions are skipped.
`workspace/executeCommand` arguments are opaque and never converted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import lspmux.encodings.shapes as s
from lspmux.encodings.lines import Converter, TextOf
from lspmux.routing import methods as lsp
from lspmux.text import Encoding

TDP = s.keyed(position=s.POSITION)  # TextDocumentPositionParams (+ work/partial tokens)
WITH_RANGE_PARAMS = s.keyed(range=s.RANGE)
HIERARCHY_PARAMS = s.keyed(item=s.HIERARCHY_ITEM)

PARAMS: dict[str, s.Shape] = {
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_HOVER,
            lsp.TEXT_DOCUMENT_DEFINITION,
            lsp.TEXT_DOCUMENT_DECLARATION,
            lsp.TEXT_DOCUMENT_TYPE_DEFINITION,
            lsp.TEXT_DOCUMENT_IMPLEMENTATION,
            lsp.TEXT_DOCUMENT_REFERENCES,
            lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
            lsp.TEXT_DOCUMENT_COMPLETION,
            lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
            lsp.TEXT_DOCUMENT_RENAME,
            lsp.TEXT_DOCUMENT_PREPARE_RENAME,
            lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
            lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE,
            lsp.TEXT_DOCUMENT_MONIKER,
            lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
            lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY,
        ),
        TDP,
    ),
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_RANGE_FORMATTING,
            lsp.TEXT_DOCUMENT_INLAY_HINT,
            lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
        ),
        WITH_RANGE_PARAMS,
    ),
    lsp.TEXT_DOCUMENT_RANGES_FORMATTING: s.keyed(ranges=s.RANGES),
    lsp.TEXT_DOCUMENT_SELECTION_RANGE: s.keyed(positions=s.each(s.POSITION)),
    lsp.TEXT_DOCUMENT_CODE_ACTION: s.keyed(
        range=s.RANGE, context=s.keyed(diagnostics=s.DIAGNOSTICS)
    ),
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: WITH_RANGE_PARAMS,
    lsp.TEXT_DOCUMENT_INLINE_VALUE: s.keyed(
        range=s.RANGE, context=s.keyed(stoppedLocation=s.RANGE)
    ),
    lsp.TEXT_DOCUMENT_INLINE_COMPLETION: s.keyed(
        position=s.POSITION, context=s.keyed(selectedCompletionInfo=s.WITH_RANGE)
    ),
    lsp.CALL_HIERARCHY_INCOMING_CALLS: HIERARCHY_PARAMS,
    lsp.CALL_HIERARCHY_OUTGOING_CALLS: HIERARCHY_PARAMS,
    lsp.TYPE_HIERARCHY_SUPERTYPES: HIERARCHY_PARAMS,
    lsp.TYPE_HIERARCHY_SUBTYPES: HIERARCHY_PARAMS,
    # resolve requests: the item itself (pass `uri=` for its bare positions)
    lsp.COMPLETION_ITEM_RESOLVE: s.COMPLETION_ITEM,
    lsp.CODE_ACTION_RESOLVE: s.CODE_ACTION,
    lsp.CODE_LENS_RESOLVE: s.WITH_RANGE,
    lsp.DOCUMENT_LINK_RESOLVE: s.WITH_RANGE,
    lsp.INLAY_HINT_RESOLVE: s.INLAY_HINT,
    lsp.WORKSPACE_SYMBOL_RESOLVE: s.SYMBOL_INFORMATION,
    # notifications
    lsp.TEXT_DOCUMENT_DID_CHANGE: s.DID_CHANGE,
    lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: s.own_uri(s.keyed(diagnostics=s.DIAGNOSTICS)),
    # server → client requests
    lsp.WORKSPACE_APPLY_EDIT: s.keyed(edit=s.WORKSPACE_EDIT),
    lsp.WINDOW_SHOW_DOCUMENT: s.own_uri(s.keyed(selection=s.RANGE)),
}

RESULTS: dict[str, s.Shape] = {
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_DEFINITION,
            lsp.TEXT_DOCUMENT_DECLARATION,
            lsp.TEXT_DOCUMENT_TYPE_DEFINITION,
            lsp.TEXT_DOCUMENT_IMPLEMENTATION,
            lsp.TEXT_DOCUMENT_REFERENCES,
        ),
        s.LOCATIONS,
    ),
    lsp.TEXT_DOCUMENT_HOVER: s.WITH_RANGE,
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT,
            lsp.TEXT_DOCUMENT_DOCUMENT_LINK,
            lsp.TEXT_DOCUMENT_CODE_LENS,
            lsp.TEXT_DOCUMENT_DOCUMENT_COLOR,
            lsp.TEXT_DOCUMENT_INLINE_VALUE,
        ),
        s.each(s.WITH_RANGE),
    ),
    lsp.CODE_LENS_RESOLVE: s.WITH_RANGE,
    lsp.DOCUMENT_LINK_RESOLVE: s.WITH_RANGE,
    lsp.TEXT_DOCUMENT_COMPLETION: s.COMPLETION,
    lsp.COMPLETION_ITEM_RESOLVE: s.COMPLETION_ITEM,
    lsp.TEXT_DOCUMENT_CODE_ACTION: s.each(s.CODE_ACTION),
    lsp.CODE_ACTION_RESOLVE: s.CODE_ACTION,
    lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL: s.DOCUMENT_SYMBOLS,
    lsp.WORKSPACE_SYMBOL: s.each(s.SYMBOL_INFORMATION),
    lsp.WORKSPACE_SYMBOL_RESOLVE: s.SYMBOL_INFORMATION,
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_FORMATTING,
            lsp.TEXT_DOCUMENT_RANGE_FORMATTING,
            lsp.TEXT_DOCUMENT_RANGES_FORMATTING,
            lsp.TEXT_DOCUMENT_ON_TYPE_FORMATTING,
            lsp.TEXT_DOCUMENT_WILL_SAVE_WAIT_UNTIL,
        ),
        s.TEXT_EDITS,
    ),
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_RENAME,
            lsp.WORKSPACE_WILL_CREATE_FILES,
            lsp.WORKSPACE_WILL_RENAME_FILES,
            lsp.WORKSPACE_WILL_DELETE_FILES,
        ),
        s.WORKSPACE_EDIT,
    ),
    lsp.TEXT_DOCUMENT_PREPARE_RENAME: s.PREPARE_RENAME,
    lsp.TEXT_DOCUMENT_FOLDING_RANGE: s.each(s.FOLDING_RANGE),
    lsp.TEXT_DOCUMENT_SELECTION_RANGE: s.each(s.SELECTION_RANGE),
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY,
            lsp.TEXT_DOCUMENT_PREPARE_TYPE_HIERARCHY,
            lsp.TYPE_HIERARCHY_SUPERTYPES,
            lsp.TYPE_HIERARCHY_SUBTYPES,
        ),
        s.each(s.HIERARCHY_ITEM),
    ),
    lsp.CALL_HIERARCHY_INCOMING_CALLS: s.each(s.INCOMING_CALL),
    lsp.CALL_HIERARCHY_OUTGOING_CALLS: s.each(s.OUTGOING_CALL),
    lsp.TEXT_DOCUMENT_INLAY_HINT: s.each(s.INLAY_HINT),
    lsp.INLAY_HINT_RESOLVE: s.INLAY_HINT,
    **dict.fromkeys(
        (
            lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
            lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
            lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA,
        ),
        s.SEMANTIC_TOKENS,
    ),
    lsp.TEXT_DOCUMENT_COLOR_PRESENTATION: s.each(s.COLOR_PRESENTATION),
    lsp.TEXT_DOCUMENT_LINKED_EDITING_RANGE: s.LINKED_EDITING,
    lsp.TEXT_DOCUMENT_DIAGNOSTIC: s.DOCUMENT_REPORT,
    lsp.WORKSPACE_DIAGNOSTIC: s.WORKSPACE_REPORT,
    lsp.TEXT_DOCUMENT_INLINE_COMPLETION: s.INLINE_COMPLETION,
}

# Methods whose params and results hold no positions: never walked.
NO_POSITIONS = frozenset(
    {
        lsp.INITIALIZE,
        lsp.INITIALIZED,
        lsp.SHUTDOWN,
        lsp.EXIT,
        lsp.TEXT_DOCUMENT_DID_OPEN,
        lsp.TEXT_DOCUMENT_DID_CLOSE,
        lsp.TEXT_DOCUMENT_DID_SAVE,
        lsp.TEXT_DOCUMENT_WILL_SAVE,
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.TEXT_DOCUMENT_MONIKER,
        lsp.WORKSPACE_EXECUTE_COMMAND,
        lsp.WORKSPACE_CONFIGURATION,
        lsp.WORKSPACE_DID_CHANGE_CONFIGURATION,
        lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
        lsp.WORKSPACE_WORKSPACE_FOLDERS,
        lsp.CLIENT_REGISTER_CAPABILITY,
        lsp.CLIENT_UNREGISTER_CAPABILITY,
        lsp.WINDOW_LOG_MESSAGE,
        lsp.WINDOW_SHOW_MESSAGE,
        lsp.WINDOW_SHOW_MESSAGE_REQUEST,
        lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
        lsp.PROGRESS,
        lsp.CANCEL_REQUEST,
        lsp.SET_TRACE,
        lsp.LOG_TRACE,
        lsp.TEXT_DOCUMENT_FOLDING_RANGE,  # params only (results: RESULTS)
        lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
        lsp.TEXT_DOCUMENT_DOCUMENT_LINK,
        lsp.TEXT_DOCUMENT_CODE_LENS,
        lsp.TEXT_DOCUMENT_DOCUMENT_COLOR,
        lsp.TEXT_DOCUMENT_FORMATTING,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA,
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.WORKSPACE_DIAGNOSTIC,
        lsp.WORKSPACE_SYMBOL,
        lsp.WORKSPACE_WILL_CREATE_FILES,
        lsp.WORKSPACE_WILL_RENAME_FILES,
        lsp.WORKSPACE_WILL_DELETE_FILES,
        lsp.WORKSPACE_DID_CREATE_FILES,
        lsp.WORKSPACE_DID_RENAME_FILES,
        lsp.WORKSPACE_DID_DELETE_FILES,
    }
)


def context_uri(params: Any) -> str | None:
    """The document the bare positions of a request refer to."""
    if not isinstance(params, Mapping):
        return None
    for key in ("textDocument", "item"):
        holder = params.get(key)
        if isinstance(holder, Mapping) and isinstance(holder.get("uri"), str):
            return str(holder["uri"])
    return None


def _generic(c: Converter, value: Any, uri: str | None) -> Any:
    """Every Position-shaped dict under the nearest named document (see the module doc)."""
    if isinstance(value, list):
        return [_generic(c, v, uri) for v in value]
    if not isinstance(value, dict):
        return value
    line, character = value.get("line"), value.get("character")
    if isinstance(line, int) and isinstance(character, int) and not isinstance(line, bool):
        return c.position(value, uri)
    own = value.get("uri") or value.get("targetUri") or context_uri(value)
    inner = own if isinstance(own, str) else uri
    return {k: _generic(c, v, inner) for k, v in value.items()}


def _run(table: dict[str, s.Shape], method: str, value: Any, c: Converter, uri: str | None) -> Any:
    if value is None:
        return value
    shape = table.get(method)
    if shape is not None:
        return shape(c, value, uri)
    if method in NO_POSITIONS or method in PARAMS or method in RESULTS:
        return value
    return _generic(c, value, uri)


def convert_params(
    method: str,
    params: Any,
    src: Encoding,
    dst: Encoding,
    text_of: TextOf,
    *,
    uri: str | None = None,
) -> Any:
    """`params` of a request (or notification) with its positions from `src` to `dst`."""
    if src == dst:
        return params
    return _run(PARAMS, method, params, Converter(src, dst, text_of), uri or context_uri(params))


convert_notification = convert_params


def convert_result(
    method: str,
    result: Any,
    src: Encoding,
    dst: Encoding,
    text_of: TextOf,
    request_params: Any = None,
    *,
    uri: str | None = None,
) -> Any:
    """The `result` of `method` with its positions from `src` to `dst`; bare positions are in
    the document of `request_params` (or `uri`)."""
    if src == dst:
        return result
    c = Converter(src, dst, text_of)
    return _run(RESULTS, method, result, c, uri or context_uri(request_params))
