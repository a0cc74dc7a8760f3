"""The Locate engine: (text, symbols, spec, encoding) → an exact position or range.

Pure functions. `resolve_spec` finds the scope (the whole file, whole lines, or a symbol's
full range from the document symbols), then either the scope's natural position (a symbol's
name, a line scope's first non-blank character) or the find's match inside the scope's slice
of the text, and the marker's place in it. Work is proportional to the scope: the regex runs
over the scope only, compiled patterns and line starts are cached, offsets become LSP
positions with a bisect. Errors are `InvalidParams` (the spec cannot apply to this text) or
`RequestFailed` (the symbol or the find is not there) with data that says what to try next.
What a resolution is: resolution.py; a find with no exact match: near_match.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lspmux.errors import RequestFailed
from lspmux.locate.markers import Want
from lspmux.locate.near_match import not_found, resolve_near
from lspmux.locate.pattern import compile_find, search
from lspmux.locate.resolution import MatchSpan, Resolution, ScopeSpan, line_count, starts_of
from lspmux.locate.spec import Scope, Spec, invalid, target_from_json
from lspmux.locate.symbols import candidates, find_path, tree
from lspmux.text import Encoding, line_end, to_range

__all__ = ["MatchSpan", "Resolution", "ScopeSpan", "resolve_scope", "resolve_spec", "starts_of"]

_NON_BLANK = re.compile(r"\S")


def resolve_scope(
    text: str,
    starts: list[int],
    symbols: list[dict[str, Any]] | None,
    scope: Scope,
    encoding: Encoding = "utf-16",
) -> ScopeSpan:
    """The offsets of `scope` in `text`."""
    if scope.kind == "lines" and scope.lines is not None:
        first, last = scope.lines
        if first < 1 or last < first:
            raise invalid(f"bad line range {first}-{last}", line=[first, last])
        count = line_count(text, starts)
        if last > count:
            raise invalid(
                f"line {last} is past the end: the file has {count} lines",
                line=[first, last],
                line_count=count,
            )
        start, end = starts[first - 1], line_end(text, starts, last - 1)
        m = _NON_BLANK.search(text, start, end)
        return ScopeSpan("lines", start, end, m.start() if m else start, lines=(first, last))
    if scope.kind == "symbol":
        return _symbol_scope(text, starts, symbols, scope.symbol_path, encoding)
    return ScopeSpan("file", 0, len(text), 0)


def _symbol_scope(
    text: str,
    starts: list[int],
    symbols: list[dict[str, Any]] | None,
    path: tuple[str, ...],
    encoding: Encoding,
) -> ScopeSpan:
    dotted = ".".join(path)
    if symbols is None:
        raise RequestFailed(
            f"cannot find symbol {dotted}: no language server offers document symbols for this "
            "file; use a line scope or a find without a scope",
            data={"symbol_path": list(path), "candidates": []},
        )
    roots = tree(symbols, text, starts, encoding)
    chain, ambiguous = find_path(roots, path)
    if chain is None:
        if ambiguous:
            found = [[s.name for s in c] for c in ambiguous]
            shown = ", ".join(".".join(p) for p in found)
            raise RequestFailed(
                f"symbol path {dotted} is ambiguous: it could be {shown}; give the full path",
                data={"symbol_path": list(path), "candidates": found},
            )
        near = candidates(roots, path)
        hint = f"; nearest: {', '.join('.'.join(p) for p in near)}" if near else ""
        raise RequestFailed(
            f"no symbol {dotted} in this document{hint}",
            data={"symbol_path": list(path), "candidates": near},
        )
    node = chain[-1]
    return ScopeSpan(
        "symbol", node.start, node.end, node.sel_start, symbol_path=tuple(s.name for s in chain)
    )


def resolve_spec(
    text: str,
    starts: list[int] | None,
    symbols: list[dict[str, Any]] | None,
    spec: Spec | Mapping[str, Any],
    encoding: Encoding = "utf-16",
    *,
    want: Want = "position",
) -> Resolution:
    """Resolve `spec` (a Spec, or the JSON object form of `locate`) in `text`.

    `starts` are the text's line starts (computed and cached when None); `symbols` the raw
    `textDocument/documentSymbol` answer (None when no backend offers symbols)."""
    if not isinstance(spec, Spec):
        spec = target_from_json(spec).spec
    if starts is None:
        starts = starts_of(text)
    scope = resolve_scope(text, starts, symbols, spec.scope, encoding)
    if spec.find is None:
        if scope.kind == "file":
            raise invalid("nothing to locate: give a scope, a find, or both")
        if want == "range":
            return Resolution(scope.start, scope.end, scope, None, want)
        return Resolution(scope.natural, scope.natural, scope, None, want)
    cf = compile_find(spec.find, spec.marker, want)
    if cf.strict is None:  # the find is only a marker: the start of the scope
        return Resolution(
            scope.start, scope.start, scope, MatchSpan(scope.start, scope.start, 1, False), want
        )
    hits = search(cf, text, scope.start, scope.end, spec.find_index)
    if hits.count == 0:
        if spec.fuzzy is not None:  # only now: an exact match always wins
            return resolve_near(cf, spec, text, starts, scope, encoding, want)
        raise not_found(cf, text, starts, scope, encoding)
    m = hits.match
    if m is None:
        raise RequestFailed(
            f"find_index {spec.find_index} is past the matches: find {spec.find!r} matches "
            f"{hits.count} time{'s' if hits.count != 1 else ''} in {scope.describe()}; "
            f"use a find_index from 0 to {hits.count - 1}",
            data={
                "count": hits.count,
                "find_index": spec.find_index,
                "scope_range": to_range(text, starts, scope.start, scope.end, encoding),
            },
        )
    match = MatchSpan(m.start(), m.end(), hits.count, hits.partial)
    marks = [m.start(g) for g in range(1, cf.marks + 1)]
    if want == "range":
        a, b = (min(marks), max(marks)) if cf.marks == 2 else (m.start(), m.end())
        return Resolution(a, b, scope, match, want)
    at = marks[0] if marks else m.start()
    return Resolution(at, at, scope, match, want)
