"""Text for agents: hover markup flattened, symbol kinds named, lists counted (pure).

Every location printed is `path:line:col` (1-based, relative to the root), so an agent can
paste it back as `at`.
"""

from __future__ import annotations

import re
from typing import Any

SYMBOL_KINDS = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum-member",
    "struct",
    "event",
    "operator",
    "type-parameter",
]
CODE_FENCE = re.compile(r"^```[\w+-]*\s*$")


def symbol_kind(kind: Any) -> str:
    try:
        return SYMBOL_KINDS[int(kind) - 1]
    except (ValueError, TypeError, IndexError):
        return "symbol"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def flatten_markup(contents: Any) -> str:
    """Hover `contents` (MarkupContent, MarkedString or a list of them) as plain text: code
    fences and markdown escapes removed, horizontal rules kept as blank lines."""
    if contents is None:
        return ""
    if isinstance(contents, list):
        return "\n\n".join(p for p in (flatten_markup(c) for c in contents) if p)
    if isinstance(contents, dict):
        value = str(contents.get("value") or "")
        if contents.get("kind") == "plaintext" or "language" in contents:
            return value.strip()
        return _plain(value)
    return _plain(str(contents))


def _plain(markdown: str) -> str:
    out: list[str] = []
    for line in markdown.splitlines():
        if CODE_FENCE.match(line.strip()):
            continue
        if line.strip() in ("---", "***", "___"):
            out.append("")
            continue
        line = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>])", r"\1", line)
        line = line.replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">")
        out.append(line.rstrip())
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def location_rows(items: list[dict[str, Any]]) -> list[str]:
    """`path:line:col  source line` for rows of {label, line_text}."""
    return [f"{r['label']}  {r['line_text'].strip()}".rstrip() for r in items]


def counted(title: str, n: int, word: str, rows: list[str], total: int | None = None) -> str:
    """`Found N word(s)` (with the total when rows were cut) followed by the rows."""
    head = f"Found {plural(n if total is None else total, word)}"
    if total is not None and total > len(rows):
        head += f" (showing {len(rows)})"
    if title:
        head += f" {title}"
    return "\n".join([head, *rows])
