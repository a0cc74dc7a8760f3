"""Symbols as units an agent edits: `replace_symbol`, `insert_before`, `insert_after`,
`safe_delete`.

Each names its symbol by a Locate string (`app.py:Greeter.greet`) or a position inside it;
the symbol spans from the start of its first line (indentation, decorators) to the end of its
range, as `source` shows it — so `source`'s text, changed, is what `replace_symbol` takes.
`apply` false (the default) answers with a unified diff; `apply` true writes through the same
path as rename (edit_tools.show_or_write: paths inside the root, a file changed since refused,
another client's unsaved buffer respected, written atomically) with the `check` of every
writing tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lspmux.agent import render
from lspmux.agent.edit_tools import make_plan, show_or_write
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.symbol_tools import Span, symbol_span
from lspmux.agent.tools import Result
from lspmux.text import Encoding, line_starts, offset_to_position


def _position(text: str, offset: int, encoding: Encoding) -> dict[str, int]:
    line, character = offset_to_position(text, line_starts(text), offset, encoding)
    return {"line": line, "character": character}


async def _edit(
    lsp: AgentLsp, span: Span, a: int, b: int, new_text: str, what: str, apply: bool, check: bool
) -> Result:
    """Replace offsets [a, b) of the span's document by `new_text`: diff, or written."""
    rng = {
        "start": _position(span.text, a, lsp.encoding),
        "end": _position(span.text, b, lsp.encoding),
    }
    plan = make_plan(lsp, {"changes": {span.target.uri: [{"range": rng, "newText": new_text}]}})
    result = await show_or_write(lsp, plan, apply, what, check=check)
    result.data.update(symbol=span.name, at=span.target.label)
    return result


def _line_end(text: str, offset: int) -> int:
    """The offset after the line break of the line holding `offset` (or the text's end)."""
    nl = text.find("\n", offset)
    return len(text) if nl < 0 else nl + 1


def _as_lines(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _span_edit(span: Span, kind: str, new_text: str) -> tuple[int, int, str]:
    """(start, end, text) of `kind` on the symbol: replace it, or insert whole lines before
    its first line or after its last line."""
    if kind == "replace_symbol":
        return span.start, span.end, new_text.rstrip("\n")
    if kind == "insert_before":
        return span.start, span.start, _as_lines(new_text)
    after = _line_end(span.text, span.end)
    text = _as_lines(new_text)
    if after == len(span.text) and not span.text.endswith("\n"):
        text = "\n" + text.rstrip("\n")
    return after, after, text


def _symbol_edit_tool(kind: str, doc: str) -> Callable[..., Awaitable[Result]]:
    async def tool(
        lsp: AgentLsp,
        at: str,
        new_text: str,
        symbol: str | None = None,
        apply: bool = False,
        check: bool = True,
    ) -> Result:
        span = await symbol_span(lsp, at, symbol)
        a, b, text = _span_edit(span, kind, new_text)
        return await _edit(lsp, span, a, b, text, kind, apply, check)

    tool.__name__, tool.__doc__ = kind, doc
    return tool


replace_symbol = _symbol_edit_tool(
    "replace_symbol", "Replace the whole symbol (as `source` shows it) by `new_text`."
)
insert_before = _symbol_edit_tool(
    "insert_before", "Insert `new_text` (whole lines) before the symbol's first line."
)
insert_after = _symbol_edit_tool(
    "insert_after", "Insert `new_text` (whole lines) after the symbol's last line."
)


async def safe_delete(
    lsp: AgentLsp, at: str, symbol: str | None = None, apply: bool = False, check: bool = True
) -> Result:
    """Delete the symbol only when nothing outside it references it; else list the
    references (nothing is changed)."""
    from lspmux.agent.tools import references

    span = await symbol_span(lsp, at, symbol)
    sel = span.target
    found = await references(lsp, span.name_at, include_declaration=False, limit=1000)
    inside = (span.range["start"]["line"], span.range["end"]["line"])
    outside = [
        r for r in found.data["references"]
        if r["uri"] != sel.uri or not inside[0] <= r["range"]["start"]["line"] <= inside[1]
    ]  # fmt: skip
    if outside:
        lines = [f"{r['label']}  {r['line_text'].strip()}" for r in outside]
        text = render.counted(f"of {span.name}: not deleted", len(lines), "reference", lines)
        return Result(text, {"symbol": span.name, "deleted": False, "references": outside})
    end = _line_end(span.text, span.end)
    result = await _edit(lsp, span, span.start, end, "", "safe_delete", apply, check)
    result.data["deleted"] = bool(result.data.get("applied"))
    result.data["references"] = []
    return result
