"""The reading tools: one function per question an agent asks (definition, references, hover,
symbols, workspace_symbols, call_hierarchy, locate, describe; `diagnostics` is in checking.py).

Each takes the session (`AgentLsp`) and the tool's arguments and returns a `Result`: the text
an agent reads and the structured data (`structuredContent`: LSP-native 0-based positions
beside the 1-based `path:line:col` labels). Anything the caller can fix raises `ToolError`.
The editing tools are in `edit_tools.py`, the session tools in `admin_tools.py`.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from lspmux.agent import render
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp, Target
from lspmux.agent.paths import uri_to_path

SEVERITIES = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}


class Result:
    """A tool's answer: `text` for reading, `data` for `structuredContent` / `--json`."""

    __slots__ = ("data", "text")

    def __init__(self, text: str, data: dict[str, Any] | None = None) -> None:
        self.text = text
        self.data: dict[str, Any] = data if data is not None else {}


# -- locations --------------------------------------------------------------------------------


def location_row(lsp: AgentLsp, uri: str, rng: dict[str, Any]) -> dict[str, Any]:
    """One location as the tools print it, with its LSP range and its source line."""
    start = rng["start"]
    return {
        "label": lsp.label(uri, start),
        "path": lsp.label_path(uri_to_path(uri)),
        "uri": uri,
        "range": rng,
        "line_text": lsp.line(uri, int(start["line"])) or "",
    }


def location_rows(lsp: AgentLsp, result: Any) -> list[dict[str, Any]]:
    """Rows for a definition-like answer: a Location, Location[] or LocationLink[]."""
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, int, int]] = set()
    for item in items:
        if "targetUri" in item:
            uri, rng = item["targetUri"], item.get("targetSelectionRange") or item["targetRange"]
        else:
            uri, rng = item["uri"], item["range"]
        key = (uri, rng["start"]["line"], rng["start"]["character"])
        if key not in seen:
            seen.add(key)
            rows.append(location_row(lsp, uri, rng))
    return rows


def _at_data(target: Target) -> dict[str, Any]:
    return {"at": target.label, "uri": target.uri, "position": target.position}


async def goto(lsp: AgentLsp, method: str, at: str, symbol: str | None, word: str) -> Result:
    """definition / type_definition / implementation / declaration at `at`."""
    target = await lsp.target(at, symbol)
    result = await lsp.request(
        method, {"textDocument": {"uri": target.uri}, "position": target.position}
    )
    rows = location_rows(lsp, result)
    text = render.counted("", len(rows), word, render.location_rows(rows))
    if not rows:
        text += f" at {target.label}"
    return Result(text, {**_at_data(target), "count": len(rows), "locations": rows})


async def definition(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    return await goto(lsp, "textDocument/definition", at, symbol, "definition")


async def type_definition(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    return await goto(lsp, "textDocument/typeDefinition", at, symbol, "type definition")


async def implementation(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    return await goto(lsp, "textDocument/implementation", at, symbol, "implementation")


async def declaration(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    return await goto(lsp, "textDocument/declaration", at, symbol, "declaration")


async def references(
    lsp: AgentLsp,
    at: str,
    symbol: str | None = None,
    include_declaration: bool = True,
    limit: int = 100,
) -> Result:
    """Every reference; waits until the servers have loaded the project (the file's
    diagnostics are in and no progress is open), so a cold start does not answer early."""
    target = await lsp.target(at, symbol)
    await lsp.settle([target.uri], quiet=0.0)
    where = {"textDocument": {"uri": target.uri}, "position": target.position}
    result = await lsp.request(
        "textDocument/references", {**where, "context": {"includeDeclaration": True}}
    )
    rows = location_rows(lsp, result)
    if not include_declaration:
        declared: set[tuple[str, int, int]] = set()
        for method in ("textDocument/definition", "textDocument/declaration"):
            try:
                found = location_rows(lsp, await lsp.request(method, where))
            except ToolError:
                continue
            declared |= {(r["uri"], *_start(r["range"])) for r in found}
        rows = [r for r in rows if (r["uri"], *_start(r["range"])) not in declared]
    rows.sort(key=lambda r: (r["path"], *_start(r["range"])))
    total = len(rows)
    shown = rows[: max(0, limit)]
    text = render.counted("", len(shown), "reference", render.location_rows(shown), total)
    data = {**_at_data(target), "count": total, "references": shown, "truncated": total > limit}
    return Result(text, data)


def _start(rng: dict[str, Any]) -> tuple[int, int]:
    return int(rng["start"]["line"]), int(rng["start"]["character"])


async def hover(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    target = await lsp.target(at, symbol)
    result = await lsp.request(
        "textDocument/hover", {"textDocument": {"uri": target.uri}, "position": target.position}
    )
    text = render.flatten_markup((result or {}).get("contents"))
    data = {**_at_data(target), "hover": text, "range": (result or {}).get("range")}
    return Result(text or f"No hover information at {target.label}", data)


# -- symbols ----------------------------------------------------------------------------------


async def symbols(lsp: AgentLsp, file: str) -> Result:
    """The document's symbol tree."""
    path = lsp.path(file)
    doc = await lsp.sync(path)
    result = await lsp.request("textDocument/documentSymbol", {"textDocument": {"uri": doc.uri}})
    tree = _symbol_tree(lsp, doc.uri, result or [])
    lines: list[str] = []

    def walk(nodes: list[dict[str, Any]], depth: int) -> None:
        for node in nodes:
            lines.append(f"{'  ' * depth}{node['kind']} {node['name']}  {node['label']}")
            walk(node["children"], depth + 1)

    walk(tree, 0)
    if not lines:
        return Result(f"No symbols in {lsp.label_path(path)}", {"file": file, "symbols": []})
    return Result("\n".join(lines), {"file": lsp.label_path(path), "symbols": tree})


def _symbol_tree(lsp: AgentLsp, uri: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DocumentSymbol[] as nodes; flat SymbolInformation[] nested by range containment."""

    def node(item: dict[str, Any], rng: dict[str, Any], sel: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": item.get("name", ""),
            "kind": render.symbol_kind(item.get("kind")),
            "detail": item.get("detail"),
            "label": lsp.label(uri, sel["start"]),
            "range": rng,
            "selection_range": sel,
            "children": [],
        }

    if items and "location" in items[0]:
        flat = sorted(items, key=lambda i: _start(i["location"]["range"]))
        roots: list[dict[str, Any]] = []
        stack: list[dict[str, Any]] = []
        for item in flat:
            rng = item["location"]["range"]
            n = node(item, rng, rng)
            while stack and not _contains(stack[-1]["range"], rng):
                stack.pop()
            (stack[-1]["children"] if stack else roots).append(n)
            stack.append(n)
        return roots

    def convert(item: dict[str, Any]) -> dict[str, Any]:
        n = node(item, item["range"], item.get("selectionRange") or item["range"])
        n["children"] = [convert(c) for c in item.get("children") or []]
        return n

    return [convert(i) for i in items]


def _contains(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
    return _start(outer) <= _start(inner) and (
        int(inner["end"]["line"]),
        int(inner["end"]["character"]),
    ) <= (int(outer["end"]["line"]), int(outer["end"]["character"]))


async def workspace_symbols(lsp: AgentLsp, query: str, limit: int = 100) -> Result:
    """Symbols matching `query` across the workspace, merged and de-duplicated."""
    await lsp.open_languages()
    result = await lsp.request("workspace/symbol", {"query": query}) or []
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, int]] = set()
    for item in result:
        loc = item.get("location") or {}
        uri = loc.get("uri", "")
        rng = loc.get("range")
        key = (item.get("name", ""), uri, _start(rng)[0] if rng else -1)
        if key in seen or not uri.startswith("file:"):
            continue
        seen.add(key)
        row = location_row(lsp, uri, rng) if rng else {"label": lsp.label_path(uri_to_path(uri))}
        row.update(
            name=item.get("name", ""),
            kind=render.symbol_kind(item.get("kind")),
            container=item.get("containerName") or "",
        )
        rows.append(row)
    total = len(rows)
    shown = rows[: max(0, limit)]
    lines = [
        f"{r['kind']} {r['name']}"
        + (f" (in {r['container']})" if r["container"] else "")
        + f"  {r['label']}"
        for r in shown
    ]
    text = render.counted(f"for {query!r}", len(shown), "symbol", lines, total)
    return Result(text, {"query": query, "count": total, "symbols": shown})


# -- diagnostics ------------------------------------------------------------------------------


def expand_files(lsp: AgentLsp, pattern: str) -> list[Path]:
    """The files a path or glob (relative to the root) names, each confined to the root."""
    if not any(c in pattern for c in "*?["):
        return [lsp.path(pattern)]
    base = pattern if os.path.isabs(pattern) else str(lsp.root / pattern)
    found = [lsp.path(m) for m in sorted(glob.glob(base, recursive=True)) if os.path.isfile(m)]
    if not found:
        raise ToolError(f"{pattern!r} matches no file under {lsp.root}", pattern=pattern)
    return list(dict.fromkeys(found))


# -- call hierarchy, locate, describe ----------------------------------------------------------


async def prepare(lsp: AgentLsp, method: str, target: Target) -> list[dict[str, Any]]:
    """The items of a `textDocument/prepare…Hierarchy` request at `target`."""
    params = {"textDocument": {"uri": target.uri}, "position": target.position}
    return list(await lsp.request(method, params) or [])


async def call_hierarchy(
    lsp: AgentLsp, at: str, symbol: str | None = None, direction: str = "incoming"
) -> Result:
    if direction not in ("incoming", "outgoing"):
        raise ToolError(f"direction is 'incoming' or 'outgoing' (got {direction!r})")
    target = await lsp.target(at, symbol)
    items = await prepare(lsp, "textDocument/prepareCallHierarchy", target)
    if not items:
        return Result(f"No callable symbol at {target.label}", {**_at_data(target), "calls": []})
    calls: list[dict[str, Any]] = []
    for item in items:
        answer = await lsp.request(f"callHierarchy/{direction}Calls", {"item": item}) or []
        for call in answer:
            peer = call["from" if direction == "incoming" else "to"]
            own = location_row(lsp, peer["uri"], peer.get("selectionRange") or peer["range"])
            # fromRanges are in the caller's file for incoming calls, in the item's own file
            # (where it calls the callee) for outgoing ones
            site_uri = peer["uri"] if direction == "incoming" else item["uri"]
            ranges = {_start(r): r for r in call.get("fromRanges") or []}  # once each
            sites = [location_row(lsp, site_uri, ranges[k]) for k in sorted(ranges)]
            row = dict(sites[0] if direction == "incoming" and sites else own)
            row.update(
                name=peer.get("name", ""),
                kind=render.symbol_kind(peer.get("kind")),
                detail=peer.get("detail"),
                calls=len(sites),
                symbol=own,
                sites=sites,
            )
            calls.append(row)
    name = items[0].get("name", "")
    word = "caller" if direction == "incoming" else "callee"
    lines: list[str] = []
    for c in calls:
        lines.append(f"{c['name']}  {c['symbol']['label']}  {c['symbol']['line_text'].strip()}")
        lines += [f"  {s['label']}  {s['line_text'].strip()}".rstrip() for s in c["sites"]]
    title = f"of {name}"
    if direction == "incoming":
        title += f" ({render.plural(sum(c['calls'] for c in calls), 'call site')})"
    text = render.counted(title, len(calls), word, lines)
    return Result(text, {**_at_data(target), "item": name, "direction": direction, "calls": calls})


async def locate(lsp: AgentLsp, at: str, range: bool = False) -> Result:
    """Where a Locate string (or any `at`) points, and the text matched there."""
    target = await lsp.target(at, want_range=range)
    line = lsp.line(target.uri, int(target.position["line"])) or ""
    data: dict[str, Any] = {**_at_data(target), "line_text": line}
    label = target.label
    if range and target.range is not None:
        end = target.range["end"]
        label = (
            f"{target.label}-{lsp.label(target.uri, end).rsplit(':', 2)[-2]}:"
            + (lsp.label(target.uri, end).rsplit(":", 1)[-1])
        )
        data["range"] = target.range
        data["label"] = label
    return Result(f"{label}  {line.strip()}", data)


async def describe(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    """The shortest Locate string for a position."""
    target = await lsp.target(at, symbol)
    result = await lsp.request(
        "locate/describe", {"textDocument": {"uri": target.uri}, "position": target.position}
    )
    spec = result.get("locate", "")
    exact = bool(result.get("exact", True))
    text = spec if exact else f"{spec}  (nearest token: {result.get('label')})"
    return Result(text, {**_at_data(target), **result})
