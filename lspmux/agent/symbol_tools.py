"""Symbols as units an agent reads: `source` (a symbol's text and range, with its docstring
and decorators) and `type_hierarchy` (supertypes and subtypes, where a server serves it:
clangd does, basedpyright does not).
"""

from __future__ import annotations

from typing import Any

from lspmux.agent import render
from lspmux.agent.at import LineCol, parse_at
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp, Target
from lspmux.agent.tools import Result, _at_data, _contains, location_row, prepare
from lspmux.text import line_starts, position_to_offset


async def _symbol_range(lsp: AgentLsp, target: Target) -> tuple[dict[str, Any], str]:
    """The range of the innermost symbol at `target` (documentSymbol), and its name."""
    found = await lsp.request("textDocument/documentSymbol", {"textDocument": {"uri": target.uri}})
    point = {"start": target.position, "end": target.position}
    best: tuple[dict[str, Any], str] | None = None

    def walk(items: list[dict[str, Any]]) -> None:
        nonlocal best
        for item in items:
            rng = item.get("range") or (item.get("location") or {}).get("range")
            if rng is not None and _contains(rng, point):
                if best is None or _contains(best[0], rng):
                    best = (rng, str(item.get("name", "")))
                walk(item.get("children") or [])

    walk(found or [])
    if best is None:
        raise ToolError(f"no symbol encloses {target.label}", at=target.label)
    return best


async def source(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    """The text of the symbol `at` names (a Locate string such as 'app.py:Greeter.greet', or
    any position inside the symbol), as the server's symbol range gives it."""
    parsed = parse_at(at, symbol)
    target = await lsp.target(at, symbol, want_range=True)
    scope = "" if isinstance(parsed, LineCol) or "@" in parsed.spec else parsed.spec
    if ":" in scope and target.range is not None:  # `file:Scope.name`: the symbol's range
        rng, name = target.range, scope.rsplit(":", 1)[1]
    else:  # a position or a text match: the innermost symbol around it
        rng, name = await _symbol_range(lsp, target)
    text = lsp.text_of(target.uri) or ""
    starts = line_starts(text)
    start_line, end = int(rng["start"]["line"]), rng["end"]
    a = starts[start_line]  # from the start of its first line: indentation and decorators
    b = position_to_offset(text, starts, int(end["line"]), int(end["character"]), lsp.encoding)
    body = text[a:b]
    first = location_row(lsp, target.uri, rng)["label"]
    last = lsp.label(target.uri, end).rsplit(":", 2)
    span = f"{first}-{last[1]}:{last[2]}"
    data = {**_at_data(target), "name": name, "label": span, "range": rng, "source": body}
    return Result(f"{name}  {span}\n{body}", data)


async def type_hierarchy(
    lsp: AgentLsp, at: str, symbol: str | None = None, direction: str = "both"
) -> Result:
    """Supertypes and/or subtypes of the type at `at`."""
    if direction not in ("supertypes", "subtypes", "both"):
        raise ToolError(f"direction is 'supertypes', 'subtypes' or 'both' (got {direction!r})")
    target = await lsp.target(at, symbol)
    items = await prepare(lsp, "textDocument/prepareTypeHierarchy", target)
    if not items:
        return Result(f"No type at {target.label}", {**_at_data(target), "types": []})
    wanted = ["supertypes", "subtypes"] if direction == "both" else [direction]
    data: dict[str, Any] = {**_at_data(target), "item": items[0].get("name", "")}
    lines: list[str] = []
    for which in wanted:
        rows: list[dict[str, Any]] = []
        for item in items:
            for peer in await lsp.request(f"typeHierarchy/{which}", {"item": item}) or []:
                row = location_row(lsp, peer["uri"], peer.get("selectionRange") or peer["range"])
                row.update(name=peer.get("name", ""), kind=render.symbol_kind(peer.get("kind")),
                           detail=peer.get("detail"))  # fmt: skip
                rows.append(row)
        data[which] = rows
        lines.append(f"{render.plural(len(rows), which[:-1])} of {data['item']}:")
        lines += [f"  {r['kind']} {r['name']}  {r['label']}" for r in rows]
    return Result("\n".join(lines), data)
