"""Symbols as units an agent reads: `source` (a symbol's text and range, with its docstring
and decorators) and `type_hierarchy` (supertypes and subtypes, where a server serves it:
clangd does, basedpyright does not).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lspmux.agent import render
from lspmux.agent.at import LineCol, parse_at
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp, Target
from lspmux.agent.tools import Result, _at_data, _contains, location_row, prepare
from lspmux.text import line_starts, position_to_offset


async def _symbol_range(
    lsp: AgentLsp, target: Target
) -> tuple[dict[str, Any], str, dict[str, int]]:
    """The range of the innermost symbol at `target` (documentSymbol), its name, and where
    its name is."""
    found = await lsp.request("textDocument/documentSymbol", {"textDocument": {"uri": target.uri}})
    point = {"start": target.position, "end": target.position}
    best: tuple[dict[str, Any], str, dict[str, int]] | None = None

    def walk(items: list[dict[str, Any]]) -> None:
        nonlocal best
        for item in items:
            rng = item.get("range") or (item.get("location") or {}).get("range")
            if rng is not None and _contains(rng, point):
                if best is None or _contains(best[0], rng):
                    sel = (item.get("selectionRange") or rng)["start"]
                    best = (rng, str(item.get("name", "")), sel)
                walk(item.get("children") or [])

    walk(found or [])
    if best is None:
        raise ToolError(f"no symbol encloses {target.label}", at=target.label)
    return best


class Span(NamedTuple):
    """A symbol an `at` names: where, its range, its name, and the text from the start of its
    first line to its end (what `source` shows and the symbol edits replace)."""

    target: Target
    range: dict[str, Any]
    name: str
    name_at: str  # `path:line:col` of its name (references are asked there)
    start: int  # offset of the start of its first line
    end: int  # offset of its end
    text: str  # the whole document


async def symbol_span(lsp: AgentLsp, at: str, symbol: str | None = None) -> Span:
    """The symbol `at` names: a Locate symbol path (`app.py:Greeter.greet`), else the
    innermost symbol around the position or text match."""
    parsed = parse_at(at, symbol)
    target = await lsp.target(at, symbol, want_range=True)
    scope = "" if isinstance(parsed, LineCol) or "@" in parsed.spec else parsed.spec
    if ":" in scope and target.range is not None:  # `file:Scope.name`: the symbol's range
        rng, name = target.range, scope.rsplit(":", 1)[1]
        name_at = (await lsp.target(at, symbol)).label
    else:  # a position or a text match: the innermost symbol around it
        rng, name, sel = await _symbol_range(lsp, target)
        name_at = lsp.label(target.uri, sel)
    text = lsp.text_of(target.uri) or ""
    starts = line_starts(text)
    end = rng["end"]
    b = position_to_offset(text, starts, int(end["line"]), int(end["character"]), lsp.encoding)
    return Span(target, rng, name, name_at, starts[int(rng["start"]["line"])], b, text)


async def source(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    """The text of the symbol `at` names (a Locate string such as 'app.py:Greeter.greet', or
    any position inside the symbol), as the server's symbol range gives it."""
    span = await symbol_span(lsp, at, symbol)
    uri, rng = span.target.uri, span.range
    first = location_row(lsp, uri, rng)["label"]
    last = lsp.label(uri, rng["end"]).rsplit(":", 2)
    label = f"{first}-{last[1]}:{last[2]}"
    body = span.text[span.start : span.end]
    data = {**_at_data(span.target), "name": span.name, "label": label, "range": rng,
            "source": body}  # fmt: skip
    return Result(f"{span.name}  {label}\n{body}", data)


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
