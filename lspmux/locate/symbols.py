"""Document symbols as one tree, and symbol paths looked up in it.

Backends answer `textDocument/documentSymbol` with hierarchical `DocumentSymbol[]` or flat
`SymbolInformation[]` (and a host that merges several backends may hand over both). `tree`
turns either into `Sym` nodes with text offsets, nests flat or mis-nested symbols by range
containment, merges duplicates (same name and range), and gives flat symbols a selection
range by finding their name. `find_path` looks a symbol path up (exact names first, then
names with decorations such as `foo(int)`, `ns::Foo`, `impl Foo` stripped, then as a unique
suffix of a path); `candidates` suggests the nearest existing paths. Trees are cached by the
identity of the (symbols, text) pair, so a host that caches its answers pays once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lspmux.text import Encoding, position_to_offset

Pos = tuple[int, int]  # (line, character) in the session's encoding


@dataclass(slots=True, eq=False)
class Sym:
    """A symbol: its name, its LSP range (`first`..`last`) and name range (`sel`), and — computed
    on first use, since most lookups never need them — the matching text offsets."""

    name: str
    kind: int | None
    first: Pos
    last: Pos
    sel: tuple[Pos, Pos] | None
    conv: _Converter
    children: list[Sym] = field(default_factory=list)
    offsets: tuple[int, int, int, int] | None = None

    def _spans(self) -> tuple[int, int, int, int]:
        if self.offsets is None:
            conv = self.conv
            start = conv.offset(self.first)
            end = max(start, conv.offset(self.last))
            if self.sel is not None:
                sel_start = min(max(conv.offset(self.sel[0]), start), end)
                sel_end = min(max(conv.offset(self.sel[1]), sel_start), end)
            else:
                sel_start, sel_end = conv.name_span(self.name, start, end)
            self.offsets = (start, end, sel_start, sel_end)
        return self.offsets

    @property
    def start(self) -> int:
        return self._spans()[0]

    @property
    def end(self) -> int:
        return self._spans()[1]

    @property
    def sel_start(self) -> int:
        """Where the symbol's name starts (its natural position)."""
        return self._spans()[2]

    @property
    def sel_end(self) -> int:
        return self._spans()[3]

    def contains(self, pos: Pos) -> bool:
        return self.first <= pos < self.last


_SIGNATURE = re.compile(r"\s*\(.*\)\s*$", re.DOTALL)
_GENERIC = re.compile(r"\s*<.*>\s*$", re.DOTALL)
_IMPL = re.compile(r"impl\b\s*(?:<.*?>)?\s*(?:.+?\s+for\s+)?(.+)$", re.DOTALL)
_WORD = re.compile(r"\w+")


def loose_name(name: str) -> str:
    """A symbol name without the decorations servers add: signature, generic arguments,
    `impl [Trait for]`, namespace qualifiers."""
    n = name.strip()
    m = _IMPL.match(n)
    if m:
        n = m.group(1).strip()
    n = _SIGNATURE.sub("", n)
    n = _GENERIC.sub("", n)
    if "::" in n:
        n = n.rsplit("::", 1)[1]
    return n.strip()


def _pos(p: Any) -> tuple[int, int]:
    return int(p["line"]), int(p["character"])


def _range(r: Any) -> tuple[Pos, Pos]:
    first, last = _pos(r["start"]), _pos(r["end"])
    return first, max(first, last)


class _Converter:
    def __init__(self, text: str, starts: list[int], encoding: Encoding) -> None:
        self.text, self.starts, self.encoding = text, starts, encoding

    def offset(self, p: Pos) -> int:
        return position_to_offset(self.text, self.starts, p[0], p[1], self.encoding)

    def sym(self, raw: dict[str, Any]) -> Sym | None:
        try:
            name = str(raw["name"])
            if "location" in raw:
                (first, last), sel = _range(raw["location"]["range"]), None
            else:
                first, last = _range(raw["range"])
                sel = _range(raw["selectionRange"]) if raw.get("selectionRange") else None
        except (KeyError, TypeError, ValueError):
            return None  # a malformed symbol contributes nothing
        if sel == (first, last):
            sel = None  # a selection that is the whole range says nothing about the name
        node = Sym(name, raw.get("kind"), first, last, sel, self)
        for child in raw.get("children") or ():
            c = self.sym(child) if isinstance(child, dict) else None
            if c is not None:
                node.children.append(c)
        return node

    def name_span(self, name: str, start: int, end: int) -> tuple[int, int]:
        """Where the name stands in a symbol's range (for symbols without a selection)."""
        key = loose_name(name) or name
        m = re.compile(rf"(?<!\w){re.escape(key)}(?!\w)").search(self.text, start, end)
        if m is None:
            return start, start
        return m.start(), m.end()


def _nest(nodes: list[Sym]) -> list[Sym]:
    """Nest `nodes` (and recursively their children) by range containment."""
    nodes = sorted(nodes, key=lambda n: (n.first, -n.last[0], -n.last[1]))
    roots: list[Sym] = []
    stack: list[Sym] = []
    for n in nodes:
        while stack and not (stack[-1].first <= n.first and n.last <= stack[-1].last):
            stack.pop()
        top = stack[-1] if stack else None
        if top is not None and (top.name, top.first, top.last) == (n.name, n.first, n.last):
            top.children.extend(n.children)  # the same symbol from another backend
            continue
        (top.children if top is not None else roots).append(n)
        stack.append(n)
    for n in roots:
        _nest_children(n)
    return roots


def _nest_children(node: Sym) -> None:
    if node.children:
        node.children = _nest(node.children)


_CACHE: dict[int, tuple[list[dict[str, Any]], str, Encoding, list[Sym]]] = {}
_CACHE_SIZE = 8


def tree(
    symbols: list[dict[str, Any]], text: str, starts: list[int], encoding: Encoding
) -> list[Sym]:
    """The symbol tree of `symbols` (DocumentSymbol[] and/or SymbolInformation[])."""
    hit = _CACHE.get(id(symbols))
    if hit is not None and hit[0] is symbols and hit[1] is text and hit[2] == encoding:
        return hit[3]
    conv = _Converter(text, starts, encoding)
    nodes = [s for s in (conv.sym(raw) for raw in symbols if isinstance(raw, dict)) if s]
    roots = _nest(nodes)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(symbols)] = (symbols, text, encoding, roots)
    return roots


def walk(
    roots: list[Sym], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[Sym]]]:
    """Every (path, chain of nodes) in document order, parents before children."""
    stack: list[tuple[tuple[str, ...], list[Sym], list[Sym]]] = [
        (prefix, [], list(reversed(roots)))
    ]
    while stack:
        path, chain, todo = stack[-1]
        if not todo:
            stack.pop()
            continue
        node = todo.pop()
        sub = (*path, node.name)
        yield sub, [*chain, node]
        stack.append((sub, [*chain, node], list(reversed(node.children))))


_INDEX: dict[int, tuple[list[Sym], dict[str, list[Sym]]]] = {}
_INDEX_SIZE = 4096


def _named(nodes: list[Sym], name: str) -> list[Sym]:
    """The nodes called `name`, through an index kept per sibling list (a file with thousands
    of top-level symbols is looked up in O(1), not scanned)."""
    hit = _INDEX.get(id(nodes))
    if hit is None or hit[0] is not nodes:
        index: dict[str, list[Sym]] = {}
        for node in nodes:
            index.setdefault(node.name, []).append(node)
        if len(_INDEX) >= _INDEX_SIZE:
            _INDEX.clear()
        hit = _INDEX[id(nodes)] = (nodes, index)
    return hit[1].get(name, [])


def _match(nodes: list[Sym], path: tuple[str, ...], loose: bool) -> list[Sym] | None:
    if not path:
        return []
    for node in nodes if loose else _named(nodes, path[0]):
        if node.name == path[0] or (loose and loose_name(node.name) == path[0]):
            rest = _match(node.children, path[1:], loose)
            if rest is not None:
                return [node, *rest]
    return None


def find_path(roots: list[Sym], path: tuple[str, ...]) -> tuple[list[Sym] | None, list[list[Sym]]]:
    """(chain root → symbol for `path`, []) or (None, the chains of an ambiguous suffix).

    A path is looked up from the top level, first with exact names, then with loose names;
    failing that, a path that names the tail of exactly one symbol path is accepted."""
    for loose in (False, True):
        chain = _match(roots, path, loose)
        if chain is not None:
            return chain, []
    n = len(path)
    for loose in (False, True):
        found: dict[tuple[str, ...], list[Sym]] = {}
        for full, chain in walk(roots):
            if len(full) > n and all(
                s.name == p or (loose and loose_name(s.name) == p)
                for s, p in zip(chain[-n:], path, strict=True)
            ):
                found.setdefault(full, chain)
        if len(found) == 1:
            return next(iter(found.values())), []
        if found:
            return None, list(found.values())
    return None, []


def candidates(roots: list[Sym], path: tuple[str, ...], limit: int = 8) -> list[list[str]]:
    """The existing symbol paths nearest to `path` (difflib on dotted paths, then the
    children of the longest prefix that exists, then the top level)."""
    paths = [full for full, _ in walk(roots)]
    dotted = {".".join(p): p for p in paths}
    out: list[tuple[str, ...]] = [
        dotted[d]
        for d in difflib.get_close_matches(".".join(path), list(dotted), n=limit, cutoff=0.5)
    ]
    for k in range(len(path) - 1, -1, -1):
        prefix = _match(roots, path[:k], True)
        if prefix is not None:
            level = prefix[-1].children if prefix else roots
            base = tuple(s.name for s in prefix)
            out.extend((*base, c.name) for c in level)
            break
    seen: dict[tuple[str, ...], None] = {}
    for p in out:
        seen.setdefault(p, None)
    return [list(p) for p in list(seen)[:limit]]


def enclosing(roots: list[Sym], pos: Pos) -> list[Sym]:
    """The chain of symbols whose range contains the LSP position `pos`, outermost first."""
    chain: list[Sym] = []
    level = roots
    while True:
        inner = next((s for s in level if s.contains(pos)), None)
        if inner is None:
            return chain
        chain.append(inner)
        level = inner.children
