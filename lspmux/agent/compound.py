"""Tools that answer several questions in one call: `explore` (what an agent asks first about
a symbol) and `batch` (any tool calls, in order, each with its own result or error)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lspmux.agent import render, specs, tools
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.tools import Result

#: At most this many calls in one batch.
MAX_BATCH = 50


async def explore(lsp: AgentLsp, at: str, symbol: str | None = None) -> Result:
    """Hover, definition, every caller with every call site, the reference count and the
    symbol's source, for the symbol at `at`; a part no server answers is said so."""
    from lspmux.agent import symbol_tools

    target = await lsp.target(at, symbol)
    label = target.label
    parts: list[tuple[str, Callable[[], Awaitable[Result]]]] = [
        ("hover", lambda: tools.hover(lsp, label)),
        ("definition", lambda: tools.definition(lsp, label)),
        ("references", lambda: tools.references(lsp, label, include_declaration=False, limit=0)),
        ("callers", lambda: tools.call_hierarchy(lsp, label)),
        ("source", lambda: symbol_tools.source(lsp, at, symbol)),
    ]
    data: dict[str, Any] = {"at": target.label, "uri": target.uri, "position": target.position}
    sections: list[str] = []
    for name, call in parts:
        try:
            result = await call()
        except ToolError as exc:
            data[name] = {"error": exc.message}
            sections.append(f"## {name}\n(none: {exc.message})")
            continue
        data[name] = result.data
        text = result.text
        if name == "references":
            text = f"{render.plural(result.data['count'], 'reference')} (declaration left out)"
        sections.append(f"## {name}\n{text}")
    return Result("\n\n".join(sections), data)


async def batch(lsp: AgentLsp, calls: list[dict[str, Any]] | str) -> Result:
    """Run `calls` ([{tool, arguments}]) in order; each answered with its result or error."""
    import json

    if isinstance(calls, str):
        try:
            calls = json.loads(calls)
        except ValueError as exc:
            raise ToolError(f"`calls` is not JSON: {exc}") from exc
    if not isinstance(calls, list) or not calls:
        raise ToolError("`calls` is a non-empty list of {tool, arguments}")
    if len(calls) > MAX_BATCH:
        raise ToolError(f"at most {MAX_BATCH} calls in one batch (got {len(calls)})")
    results: list[dict[str, Any]] = []
    sections: list[str] = []
    for i, call in enumerate(calls, 1):
        name = call.get("tool") if isinstance(call, dict) else None
        try:
            if not isinstance(name, str):
                raise ToolError(f"call {i} has no `tool` (a tool name): {call!r}")
            if name == "batch":
                raise ToolError("a batch cannot hold another batch")
            result = await specs.call(lsp, name, call.get("arguments") or {})
        except ToolError as exc:
            results.append({"tool": name, "ok": False, "error": exc.message, **exc.data})
            sections.append(f"## {i}. {name}: error\n{exc.message}")
            continue
        results.append({"tool": name, "ok": True, "text": result.text, "data": result.data})
        sections.append(f"## {i}. {name}\n{result.text}")
    return Result("\n\n".join(sections), {"results": results})
