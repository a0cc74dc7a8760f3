"""Test helpers for Locate: document symbols derived from Python's `ast`, flat symbols, the
data files, a `LocateHost` test double (a dict of texts and symbols), and hypothesis
strategies for code-like texts and near-miss finds."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from lspmux.locate.pattern import SOURCE_TOKEN
from lspmux.text import Encoding, line_starts, units

DATA = Path(__file__).resolve().parents[2] / "data" / "locate"
DATA_FILES = sorted(p.name for p in DATA.iterdir() if p.suffix in {".py", ".js", ".c"})


def read(name: str) -> str:
    """A data file exactly as stored (CRLF kept)."""
    return (DATA / name).read_bytes().decode("utf-8")


def _lines(text: str) -> list[str]:
    starts = line_starts(text)
    ends = [*starts[1:], len(text)]
    return [text[a:b].rstrip("\r\n") for a, b in zip(starts, ends, strict=True)]


def _pos(lines: list[str], lineno: int, col_bytes: int, encoding: Encoding) -> dict[str, int]:
    line = lines[lineno - 1]
    prefix = line.encode("utf-8")[:col_bytes].decode("utf-8")
    return {"line": lineno - 1, "character": units(prefix, encoding)}


def _range(
    lines: list[str], a: tuple[int, int], b: tuple[int, int], enc: Encoding
) -> dict[str, Any]:
    return {"start": _pos(lines, *a, enc), "end": _pos(lines, *b, enc)}


def python_symbols(text: str, encoding: Encoding = "utf-16") -> list[dict[str, Any]]:
    """Hierarchical DocumentSymbol dicts for the classes and functions of a Python text, as
    pyright reports them: the range covers the decorators, the selectionRange the name."""
    lines = _lines(text)

    def visit(body: list[ast.stmt], in_class: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for node in body:
            if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            first = node.decorator_list[0] if node.decorator_list else node
            start_line = first.lineno
            start_col = len(lines[start_line - 1].encode()) - len(
                lines[start_line - 1].lstrip().encode()
            )
            keyword = "class" if isinstance(node, ast.ClassDef) else "def"
            head = lines[node.lineno - 1]
            m = re.compile(rf"\b{keyword}\s+({re.escape(node.name)})\b").search(head)
            assert m is not None, (node.name, head)
            name_col = len(head[: m.start(1)].encode())
            assert node.end_lineno is not None and node.end_col_offset is not None
            kind = 5 if isinstance(node, ast.ClassDef) else 6 if in_class else 12
            out.append(
                {
                    "name": node.name,
                    "kind": kind,
                    "range": _range(
                        lines,
                        (start_line, start_col),
                        (node.end_lineno, node.end_col_offset),
                        encoding,
                    ),
                    "selectionRange": _range(
                        lines,
                        (node.lineno, name_col),
                        (node.lineno, name_col + len(node.name.encode())),
                        encoding,
                    ),
                    "children": visit(node.body, isinstance(node, ast.ClassDef)),
                }
            )
        return out

    return visit(ast.parse(text).body, False)


def flatten(
    symbols: list[dict[str, Any]], uri: str = "file:///x", container: str | None = None
) -> list[dict[str, Any]]:
    """The same symbols as flat SymbolInformation dicts (range = the full range, as pyright's
    flat form does), children listed before their parents to exercise the nesting."""
    out: list[dict[str, Any]] = []
    for s in symbols:
        out.extend(flatten(s.get("children", []), uri, s["name"]))
        info: dict[str, Any] = {
            "name": s["name"],
            "kind": s["kind"],
            "location": {"uri": uri, "range": s["range"]},
        }
        if container is not None:
            info["containerName"] = container
        out.append(info)
    return out


def symbols_for(name: str, encoding: Encoding) -> list[dict[str, Any]] | None:
    return python_symbols(read(name), encoding) if name.endswith(".py") else None


def sym(
    name: str,
    rng: tuple[int, int, int, int],
    sel: tuple[int, int, int, int] | None = None,
    children: list[dict[str, Any]] | None = None,
    kind: int = 12,
) -> dict[str, Any]:
    """A DocumentSymbol from (line, char, line, char) tuples."""

    def r(t: tuple[int, int, int, int]) -> dict[str, Any]:
        return {
            "start": {"line": t[0], "character": t[1]},
            "end": {"line": t[2], "character": t[3]},
        }

    out: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "range": r(rng),
        "selectionRange": r(sel or rng),
    }
    if children is not None:
        out["children"] = children
    return out


@dataclass
class FakeHost:
    """A LocateHost test double: open documents and symbols from dicts."""

    roots: list[Path]
    docs: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    symbols: dict[str, list[dict[str, Any]] | None] = field(default_factory=dict)
    encoding: Encoding = "utf-16"
    symbol_calls: list[tuple[str, int | None]] = field(default_factory=list)

    def workspace_roots(self) -> list[Path]:
        return list(self.roots)

    def document_text(self, uri: str) -> tuple[str, int | None] | None:
        return self.docs.get(uri)

    async def document_symbols(
        self, uri: str, text: str, version: int | None
    ) -> list[dict[str, Any]] | None:
        self.symbol_calls.append((uri, version))
        return self.symbols.get(uri)


# --- strategies for fuzzy Locate properties -------------------------------------------------

FUZZ_WORDS = st.sampled_from(["a", "bb", "value", "values", "self", "count", "total", "tot"])
FUZZ_PUNCT = st.sampled_from(list("().,=+"))
_FUZZ_SEP = st.sampled_from([" ", "\n", "  "])


@st.composite
def code(draw: st.DrawFn, max_size: int) -> str:
    """Code-like text: words and punctuation separated by spaces and line breaks."""
    tokens = draw(st.lists(st.one_of(FUZZ_WORDS, FUZZ_PUNCT), min_size=1, max_size=max_size))
    return "".join(t + draw(_FUZZ_SEP) for t in tokens)


@st.composite
def near_find(draw: st.DrawFn, text: str) -> str:
    """A run of the text's tokens with a few tokens changed, dropped or added — or, now and
    then, unrelated tokens."""
    tokens = SOURCE_TOKEN.findall(text)
    if draw(st.integers(0, 4)) == 0:
        return draw(code(8))
    start = draw(st.integers(0, len(tokens) - 1))
    part = tokens[start : start + draw(st.integers(1, 12))]
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(part)))
        op = draw(st.sampled_from(["change", "drop", "add"]))
        new = draw(st.one_of(FUZZ_WORDS, FUZZ_PUNCT))
        if op == "add" or at == len(part):
            part.insert(at, new)
        elif op == "drop" and len(part) > 1:
            del part[at]
        else:
            part[at] = new
    return " ".join(part)
