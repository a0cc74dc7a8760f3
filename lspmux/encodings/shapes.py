"""Where positions live in LSP structures: one small converter per shape.

A *shape* is a function `(converter, value, uri) -> value` that returns `value` with every
position it holds converted; `uri` is the document the value's positions refer to when the value
does not say (a Hover's range is in the hovered document, a Location names its own). Shapes are
built from a few combinators (`keyed`, `each`, `own_uri`) so that each LSP structure is one line;
values that are not shaped as expected (None, a bare Command, an unknown key) pass unchanged.
Nothing is mutated: a converted dict is a shallow copy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lspmux.encodings.lines import Converter, TextLines, full_text
from lspmux.text import apply_change

Shape = Callable[[Converter, Any, "str | None"], Any]


def POSITION(c: Converter, v: Any, uri: str | None) -> Any:
    return c.position(v, uri)


def RANGE(c: Converter, v: Any, uri: str | None) -> Any:
    if not isinstance(v, dict) or "start" not in v or "end" not in v:
        return v
    return c.range(v, uri)


def keyed(**shapes: Shape) -> Shape:
    """A dict whose listed keys hold the given shapes."""

    def shape(c: Converter, v: Any, uri: str | None) -> Any:
        if not isinstance(v, dict):
            return v
        out = v
        for key, sub in shapes.items():
            if key in v:
                new = sub(c, v[key], uri)
                if new is not v[key]:
                    if out is v:
                        out = dict(v)
                    out[key] = new
        return out

    return shape


def each(sub: Shape) -> Shape:
    """A list of `sub` (anything else passes unchanged)."""

    def shape(c: Converter, v: Any, uri: str | None) -> Any:
        if not isinstance(v, list):
            return v
        return [sub(c, item, uri) for item in v]

    return shape


def own_uri(sub: Shape, key: str = "uri") -> Shape:
    """A dict whose positions are in the document it names under `key`."""

    def shape(c: Converter, v: Any, uri: str | None) -> Any:
        if not isinstance(v, dict):
            return v
        named = v.get(key)
        if isinstance(named, dict):  # textDocument: {uri, version}
            named = named.get("uri")
        return sub(c, v, named if isinstance(named, str) else uri)

    return shape


def lazy(get: Callable[[], Shape]) -> Shape:
    """A shape defined later (recursive structures)."""
    return lambda c, v, uri: get()(c, v, uri)


def one_or_many(sub: Shape) -> Shape:
    return lambda c, v, uri: each(sub)(c, v, uri) if isinstance(v, list) else sub(c, v, uri)


def by_key(key: str, present: Shape, absent: Shape) -> Shape:
    """`present` for a dict holding `key`, `absent` for any other value."""
    return lambda c, v, uri: (present if isinstance(v, dict) and key in v else absent)(c, v, uri)


def uri_map(sub: Shape) -> Shape:
    """`{uri: value}`: each value's positions are in its key's document."""

    def shape(c: Converter, v: Any, uri: str | None) -> Any:
        if not isinstance(v, dict):
            return v
        return {k: sub(c, item, k) for k, item in v.items()}

    return shape


RANGES = each(RANGE)
LOCATION = own_uri(keyed(range=RANGE))


def _location_link(c: Converter, v: Any, uri: str | None) -> Any:
    """Target ranges are in `targetUri`; `originSelectionRange` in the request's document."""
    if not isinstance(v, dict):
        return v
    target = v.get("targetUri")
    target = target if isinstance(target, str) else uri
    out = keyed(originSelectionRange=RANGE)(c, v, uri)
    return keyed(targetRange=RANGE, targetSelectionRange=RANGE)(c, out, target)


LOCATION_OR_LINK = by_key("targetUri", _location_link, LOCATION)
LOCATIONS = one_or_many(LOCATION_OR_LINK)

DIAGNOSTIC = keyed(range=RANGE, relatedInformation=each(keyed(location=LOCATION)))
DIAGNOSTICS = each(DIAGNOSTIC)

TEXT_EDIT = keyed(range=RANGE, insert=RANGE, replace=RANGE)  # + Annotated, InsertReplace
TEXT_EDITS = each(TEXT_EDIT)
WORKSPACE_EDIT = keyed(
    changes=uri_map(TEXT_EDITS),
    documentChanges=each(own_uri(keyed(edits=TEXT_EDITS), "textDocument")),  # file ops pass
)

COMPLETION_ITEM = keyed(textEdit=TEXT_EDIT, additionalTextEdits=TEXT_EDITS)
EDIT_RANGE = by_key("start", RANGE, keyed(insert=RANGE, replace=RANGE))
COMPLETION = by_key(
    "items",
    keyed(items=each(COMPLETION_ITEM), itemDefaults=keyed(editRange=EDIT_RANGE)),
    each(COMPLETION_ITEM),
)

CODE_ACTION = keyed(edit=WORKSPACE_EDIT, diagnostics=DIAGNOSTICS)  # a Command passes
WITH_RANGE = keyed(range=RANGE)  # DocumentHighlight, DocumentLink, CodeLens, ColorInformation,
# Hover, InlineValue*
SYMBOL_INFORMATION = keyed(location=LOCATION)  # also WorkspaceSymbol (location may be {uri})
DOCUMENT_SYMBOL: Shape = keyed(
    range=RANGE, selectionRange=RANGE, children=each(lazy(lambda: DOCUMENT_SYMBOL))
)
DOCUMENT_SYMBOLS = each(by_key("location", SYMBOL_INFORMATION, DOCUMENT_SYMBOL))
SELECTION_RANGE: Shape = keyed(range=RANGE, parent=lazy(lambda: SELECTION_RANGE))
HIERARCHY_ITEM = own_uri(keyed(range=RANGE, selectionRange=RANGE))  # call and type hierarchy
INCOMING_CALL_ITEM = keyed(**{"from": HIERARCHY_ITEM})


def INCOMING_CALL(c: Converter, v: Any, uri: str | None) -> Any:
    """fromRanges are in the caller's (`from`) document."""
    out = INCOMING_CALL_ITEM(c, v, uri)
    caller = (v.get("from") or {}).get("uri") if isinstance(v, dict) else None
    return keyed(fromRanges=RANGES)(c, out, caller if isinstance(caller, str) else uri)


OUTGOING_CALL = keyed(to=HIERARCHY_ITEM, fromRanges=RANGES)  # fromRanges: in the request's item
INLAY_HINT = keyed(
    position=POSITION, textEdits=TEXT_EDITS, label=each(keyed(location=LOCATION))
)  # a string label passes
PREPARE_RENAME = by_key("start", RANGE, keyed(range=RANGE))
COLOR_PRESENTATION = keyed(textEdit=TEXT_EDIT, additionalTextEdits=TEXT_EDITS)
LINKED_EDITING = keyed(ranges=RANGES)
FULL_REPORT = keyed(items=DIAGNOSTICS)
DOCUMENT_REPORT = keyed(items=DIAGNOSTICS, relatedDocuments=uri_map(FULL_REPORT))
WORKSPACE_REPORT = keyed(items=each(own_uri(FULL_REPORT)))
TDP = keyed(position=POSITION)  # TextDocumentPositionParams (+ work/partial tokens)
WITH_RANGE_PARAMS = keyed(range=RANGE)
HIERARCHY_PARAMS = keyed(item=HIERARCHY_ITEM)
INLINE_COMPLETION = one_or_many(by_key("items", keyed(items=each(WITH_RANGE)), WITH_RANGE))


def FOLDING_RANGE(c: Converter, v: Any, uri: str | None) -> Any:
    """Lines need nothing; the optional start/endCharacter are columns of their lines."""
    if not isinstance(v, dict):
        return v
    out = v
    for line_key, char_key in (("startLine", "startCharacter"), ("endLine", "endCharacter")):
        line, char = v.get(line_key), v.get(char_key)
        if isinstance(line, int) and isinstance(char, int):
            new = c.character(uri, line, char)
            if new != char:
                out = {**out, char_key: new}
    return out


def SEMANTIC_TOKENS(c: Converter, v: Any, uri: str | None) -> Any:
    """`data` is relative: (deltaLine, deltaStart, length, type, modifiers) per token, where
    deltaStart and length are in encoding units; decoded to absolute, converted, re-encoded. A
    delta result (`edits`) cannot be converted without the previous tokens: it passes, and a
    converting session should serve deltas by diffing full results."""
    if not isinstance(v, dict) or not isinstance(v.get("data"), list):
        return v
    data = v["data"]
    if c.lines(uri) is None:
        return v
    out: list[int] = []
    line = start = new_start = 0
    found = c.line_map(uri, 0)
    for i in range(0, len(data) - 4, 5):
        d_line, d_start, length = data[i], data[i + 1], data[i + 2]
        if d_line:
            line += d_line
            start = new_start = 0
            found = c.line_map(uri, line)
        if found is None:  # an ASCII line: nothing moves
            out += data[i : i + 5]
            continue
        start += d_start
        new_prev = new_start
        new_start = found.convert(start)
        new_length = found.convert(start + length) - new_start
        out += [d_line, new_start - new_prev, new_length, data[i + 3], data[i + 4]]
    return {**v, "data": out}


def DID_CHANGE(c: Converter, v: Any, uri: str | None) -> Any:
    """Incremental ranges are in the text *before* their change: each is converted against the
    text the previous changes left, and `rangeLength` (deprecated, in the old units) dropped."""
    if not isinstance(v, dict) or not isinstance(v.get("contentChanges"), list):
        return v
    uri = (v.get("textDocument") or {}).get("uri", uri)
    changes: list[Any] = v["contentChanges"]
    if not any(isinstance(ch, dict) and "range" in ch for ch in changes):
        return v
    out = []
    text: str | None = None
    for i, change in enumerate(changes):
        if not isinstance(change, dict):
            out.append(change)
            continue
        if "range" in change:
            new = {k: val for k, val in change.items() if k != "rangeLength"}
            new["range"] = RANGE(c, change["range"], uri)
            out.append(new)
        else:
            out.append(change)
        if i + 1 < len(changes) and uri is not None:
            if text is None and "range" in change:
                lines = c.lines(uri)
                if lines is None:
                    return {**v, "contentChanges": out + changes[i + 1 :]}
                text = full_text(lines)
            text = apply_change(text or "", change, c.src)
            c.set_lines(uri, TextLines(text))
    return {**v, "contentChanges": out}


def context_uri(params: Any) -> str | None:
    """The document the bare positions of a request refer to."""
    if not isinstance(params, Mapping):
        return None
    for key in ("textDocument", "item"):
        holder = params.get(key)
        if isinstance(holder, Mapping) and isinstance(holder.get("uri"), str):
            return str(holder["uri"])
    return None


def ANY_POSITIONS(c: Converter, value: Any, uri: str | None) -> Any:
    """A value of no known shape: every Position-shaped dict (`line` and `character`,
    integers) converted in the document named by the nearest enclosing
    `uri`/`targetUri`/`textDocument`, else `uri`."""
    if isinstance(value, list):
        return [ANY_POSITIONS(c, v, uri) for v in value]
    if not isinstance(value, dict):
        return value
    line, character = value.get("line"), value.get("character")
    if isinstance(line, int) and isinstance(character, int) and not isinstance(line, bool):
        return c.position(value, uri)
    own = value.get("uri") or value.get("targetUri") or context_uri(value)
    inner = own if isinstance(own, str) else uri
    return {k: ANY_POSITIONS(c, v, inner) for k, v in value.items()}
