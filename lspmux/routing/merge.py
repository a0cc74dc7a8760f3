"""Combining answers from several backends, and tagging items with their origin.

Pure functions on raw LSP dicts. Items that go back to a server later (completion items, code
actions, code lenses, document links, workspace symbols, inlay hints) get their `data` wrapped
as `{"lspmux": [origin, original_data]}`; `untag()` restores the original before the item goes
back to its origin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

TAG = "lspmux"

Results = list[tuple[int, Any]]  # (origin, result) per backend that answered


def tag(item: dict[str, Any], origin: int) -> dict[str, Any]:
    item["data"] = {TAG: [origin, item.get("data")]}
    return item


def untag(item: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """(origin, item with its original data) — origin None when the item was not tagged."""
    data = item.get("data")
    if isinstance(data, dict) and len(data) == 1:
        tagged = data.get(TAG)
        # Anything but [int, data] (a client's garbage) is not a tag: the item goes untagged.
        if isinstance(tagged, list) and len(tagged) == 2 and type(tagged[0]) is int:
            origin, original = tagged
            out = dict(item)
            if original is None:
                out.pop("data", None)
            else:
                out["data"] = original
            return origin, out
    return None, item


def _key(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _dedupe(items: list[Any], key: Callable[[Any], Any] = _key) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for item in items:
        k = key(item)
        if k in seen:
            continue
        seen.add(k)
        out.append(item)
    return out


def completion(results: Results) -> Any:
    """CompletionItem[] | CompletionList from several servers → one CompletionList. Each list's
    `itemDefaults` are applied to its own items (they cannot be shared across servers)."""
    items: list[dict[str, Any]] = []
    incomplete = False
    for origin, res in results:
        if res is None:
            continue
        if isinstance(res, list):
            raw_items, defaults = res, None
        else:
            raw_items = res.get("items") or []
            defaults = res.get("itemDefaults")
            incomplete = incomplete or bool(res.get("isIncomplete"))
        for item in raw_items:
            if defaults:
                item = _apply_item_defaults(item, defaults)
            items.append(tag(item, origin))

    def key(it: dict[str, Any]) -> Any:
        return (
            it.get("label"),
            it.get("kind"),
            it.get("insertText"),
            _key(it.get("textEdit")) if it.get("textEdit") else None,
        )

    return {"isIncomplete": incomplete, "items": _dedupe(items, key)}


def _apply_item_defaults(item: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    item = dict(item)
    for field in ("commitCharacters", "insertTextFormat", "insertTextMode", "data"):
        if field in defaults and field not in item:
            item[field] = defaults[field]
    rng = defaults.get("editRange")
    if rng is not None and "textEdit" not in item:
        text = item.get("textEditText") or item.get("insertText") or item["label"]
        if "insert" in rng:
            item["textEdit"] = {"newText": text, "insert": rng["insert"], "replace": rng["replace"]}
        else:
            item["textEdit"] = {"newText": text, "range": rng}
    return item


def locations(results: Results) -> Any:
    """Location | Location[] | LocationLink[] from several servers → one de-duplicated list.
    Links stay links when every answer used links; otherwise links become Locations."""
    flat: list[dict[str, Any]] = []
    for _origin, res in results:
        if res is None:
            continue
        flat.extend(res if isinstance(res, list) else [res])
    if not flat:
        return None
    if all("targetUri" in x for x in flat):
        return _dedupe(flat, lambda x: (x["targetUri"], _key(x.get("targetSelectionRange"))))
    as_locations = [
        {"uri": x["targetUri"], "range": x.get("targetSelectionRange") or x["targetRange"]}
        if "targetUri" in x
        else x
        for x in flat
    ]
    return _dedupe(as_locations, lambda x: (x.get("uri"), _key(x.get("range"))))


def tagged_list(results: Results) -> Any:
    """Concatenate lists whose items may go back to their server (code lenses, links, hints,
    workspace symbols): each item tagged with its origin; identical items once."""
    out: list[Any] = []
    any_list = False
    for origin, res in results:
        if res is None:
            continue
        any_list = True
        for item in res:
            out.append(tag(item, origin) if isinstance(item, dict) else item)
    if not any_list:
        return None
    return _dedupe(out, lambda x: _key(untag(x)[1]) if isinstance(x, dict) else _key(x))


def code_actions(results: Results) -> Any:
    """(Command | CodeAction)[] from several servers: CodeActions tagged with their origin
    (so codeAction/resolve reaches it); Commands go by their command name."""
    out: list[Any] = []
    any_list = False
    for origin, res in results:
        if res is None:
            continue
        any_list = True
        for action in res:
            if isinstance(action, dict) and "title" in action and "arguments" not in action:
                out.append(
                    tag(action, origin) if not isinstance(action.get("command"), str) else action
                )
            else:
                out.append(action)
    return out if any_list else None


def concat(results: Results) -> Any:
    """Plain concatenation with de-duplication (document symbols, file operations…)."""
    out: list[Any] = []
    any_list = False
    for _origin, res in results:
        if res is None:
            continue
        any_list = True
        out.extend(res if isinstance(res, list) else [res])
    return _dedupe(out) if any_list else None


def workspace_edits(results: Results) -> Any:
    """willCreate/willRename/willDeleteFiles: the first non-null edit (edits from several
    servers cannot be combined safely)."""
    for _origin, res in results:
        if res:
            return res
    return None
