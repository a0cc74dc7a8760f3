"""The Locate engine: (text, symbols, spec, encoding) → an exact position or range.

Pure functions. `resolve_spec` finds the scope (the whole file, whole lines, or a symbol's
full range from the document symbols), then either the scope's natural position (a symbol's
name, a line scope's first non-blank character) or the find's match inside the scope's slice
of the text, and the marker's place in it. Work is proportional to the scope: the regex runs
over the scope only, compiled patterns and line starts are cached, offsets become LSP
positions with a bisect. Errors are `InvalidParams` (the spec cannot apply to this text) or
`RequestFailed` (the symbol or the find is not there) with data that says what to try next.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lspmux.errors import RequestFailed
from lspmux.locate.fuzzy import (
    SCATTERED,
    SHOWN,
    Candidate,
    FuzzyOutcome,
    find_tokens,
    fuzzy_search,
)
from lspmux.locate.markers import Want
from lspmux.locate.pattern import CompiledFind, closest_line, compile_find, search
from lspmux.locate.spec import Scope, ScopeKind, Spec, invalid, target_from_json
from lspmux.locate.symbols import candidates, find_path, tree
from lspmux.text import Encoding, line_end, line_starts, to_position, to_range

_NON_BLANK = re.compile(r"\S")


@lru_cache(maxsize=8)
def starts_of(text: str) -> list[int]:
    """Line starts of `text`, cached (a str caches its hash, so a repeated text costs O(1))."""
    return line_starts(text)


def line_count(text: str, starts: list[int]) -> int:
    """Lines as editors and `wc -l` count them: a final line break ends the last line rather
    than starting an empty one."""
    if len(starts) > 1 and starts[-1] == len(text):
        return len(starts) - 1
    return len(starts)


@dataclass(frozen=True, slots=True)
class ScopeSpan:
    """A resolved scope: offsets [start, end) and its natural position."""

    kind: ScopeKind
    start: int
    end: int
    natural: int
    symbol_path: tuple[str, ...] = ()
    lines: tuple[int, int] | None = None

    def describe(self) -> str:
        if self.kind == "symbol":
            return f"symbol {'.'.join(self.symbol_path)}"
        if self.kind == "lines" and self.lines is not None:
            a, b = self.lines
            return f"line {a}" if a == b else f"lines {a}-{b}"
        return "the whole file"

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "symbol":
            out["symbol_path"] = list(self.symbol_path)
        elif self.lines is not None:
            out["lines"] = list(self.lines)
        out["range"] = to_range(text, starts, self.start, self.end, encoding)
        return out


@dataclass(frozen=True, slots=True)
class MatchSpan:
    start: int
    end: int
    count: int
    partial: bool
    fuzzy: Candidate | None = None  # set when only a near match was found


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a spec lands: [start, end) (start == end for a position), its scope and match."""

    start: int
    end: int
    scope: ScopeSpan
    match: MatchSpan | None
    want: Want

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        """`position` (or `range`), `match` and `scope` as LSP-native JSON."""
        out: dict[str, Any] = {}
        if self.want == "range":
            out["range"] = to_range(text, starts, self.start, self.end, encoding)
        else:
            out["position"] = to_position(text, starts, self.start, encoding)
        if self.match is not None:
            m = self.match
            out["match"] = {
                "range": to_range(text, starts, m.start, m.end, encoding),
                "text": text[m.start : m.end],
                "count": m.count,
                "partial": m.partial,
            }
            if m.fuzzy is not None:
                out["match"].update(m.fuzzy.to_lsp(text, starts, encoding))
        out["scope"] = self.scope.to_lsp(text, starts, encoding)
        return out


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


def _not_found(
    cf: CompiledFind,
    text: str,
    starts: list[int],
    scope: ScopeSpan,
    encoding: Encoding,
    fuzzy: FuzzyOutcome | None = None,
) -> RequestFailed:
    line = closest_line(cf, text, starts, scope.start, scope.end)
    closest: dict[str, Any] | None = None
    detail = ""
    if line is not None:
        a, b = starts[line], line_end(text, starts, line)
        m = _NON_BLANK.search(text, a, b)
        closest = {
            "line": line + 1,
            "text": text[a:b],
            "position": to_position(text, starts, m.start() if m else a, encoding),
        }
        detail = f"; the closest line is {line + 1}: {text[a:b].strip()!r}"
    hint = (
        "; note that marker-looking text which is not a whole, unique marker is matched literally"
        if cf.lookalikes
        else ""
    )
    data: dict[str, Any] = {
        "find": cf.source,
        "scope_range": to_range(text, starts, scope.start, scope.end, encoding),
        "closest": closest,
    }
    nothing = "nothing"
    if fuzzy is not None:
        data["fuzzy"] = _fuzzy_data(fuzzy, fuzzy.near, text, starts, encoding)
        nothing = (
            f"nothing, not even approximately (no near match scores {fuzzy.threshold:g} or more)"
        )
        if fuzzy.near:
            best = fuzzy.near[0]
            line = bisect_right(starts, best.start)
            detail = f"; the best near match scores {best.score:.2f} on line {line}{detail}"
    return RequestFailed(
        f"find {cf.source!r} matches {nothing} in {scope.describe()}{detail}{hint}; check the "
        "spelling of the find or widen the scope",
        data=data,
    )


def _fuzzy_data(
    out: FuzzyOutcome,
    shown: tuple[Candidate, ...],
    text: str,
    starts: list[int],
    encoding: Encoding,
) -> dict[str, Any]:
    return {
        "threshold": out.threshold,
        "candidates": [c.summary(text, starts, encoding) for c in shown[:SHOWN]],
    }


def _resolve_fuzzy(
    cf: CompiledFind,
    spec: Spec,
    text: str,
    starts: list[int],
    scope: ScopeSpan,
    encoding: Encoding,
    want: Want,
) -> Resolution:
    """The near match of a find that matched nothing exactly (docs/locate.md, Fuzzy)."""
    assert spec.find is not None and spec.fuzzy is not None
    out = fuzzy_search(
        find_tokens(spec.find, spec.marker, want), text, scope.start, scope.end, spec.fuzzy
    )
    where = {
        "find": spec.find,
        "scope_range": to_range(text, starts, scope.start, scope.end, encoding),
    }
    if out.too_many:
        raise RequestFailed(
            f"fuzzy find {spec.find!r} is too unspecific for {scope.describe()}: its rarest "
            f"words ({', '.join(out.anchors)}) occur more than {out.hits - 1} times; narrow the "
            "scope or add a distinctive word to the find",
            data={**where, "fuzzy": {"threshold": out.threshold, "anchors": list(out.anchors)}},
        )
    if scope.kind == "lines" and out.reported is None:  # nothing here: is it elsewhere?
        _exact_elsewhere(cf, spec, text, starts, scope, encoding, out.accepted[:1])
    if not out.accepted:
        raise _not_found(cf, text, starts, scope, encoding, out)
    if out.refused is not None or spec.find_index:
        raise _refusal(out, spec, text, starts, scope, encoding, where)
    assert out.reported is not None
    best = out.reported
    if scope.kind == "lines":
        _check_lines(cf, spec, text, starts, scope, encoding, want, best)
    match = MatchSpan(best.start, best.end, len(out.accepted), False, best)
    marks = [landing.offset for landing in best.markers]
    if want == "range":
        a, b = (min(marks), max(marks)) if len(marks) == 2 else (best.start, best.end)
        return Resolution(a, b, scope, match, want)
    at = marks[0] if marks else best.start
    return Resolution(at, at, scope, match, want)


def _line_of(starts: list[int], offset: int) -> int:
    return bisect_right(starts, offset)


def _refusal(
    out: FuzzyOutcome,
    spec: Spec,
    text: str,
    starts: list[int],
    scope: ScopeSpan,
    encoding: Encoding,
    where: dict[str, Any],
) -> RequestFailed:
    """The error for a best near match that is not an answer (docs/locate.md, Fuzzy)."""
    best = out.accepted[0]
    shown = out.rivals or out.accepted
    lines = ", ".join(str(_line_of(starts, c.start)) for c in shown[:SHOWN])
    if out.refused == "tie":
        problem = f"{len(shown)} near matches tie with score {best.score:.2f} (lines {lines})"
    elif out.refused == "close":
        runner = shown[1]
        problem = (
            f"the best near match (line {_line_of(starts, best.start)}, score {best.score:.2f}) "
            f"is not clearly better than the one on line {_line_of(starts, runner.start)} "
            f"(score {runner.score:.2f}; a lead of at least {out.margin:g} is needed)"
        )
    elif out.refused == "moved":
        problem = (
            f"the marked item {out.moved_item!r} moved or is gone in the near match on line "
            f"{lines}, and the marker would land on another item of the find"
        )
    elif out.refused == "lost":
        runner = shown[1]
        problem = (
            f"the best near match (line {_line_of(starts, best.start)}, score "
            f"{best.score:.2f}) lacks {out.moved_item}, which still occurs in the near match on "
            f"line {_line_of(starts, runner.start)} (score {runner.score:.2f})"
        )
    elif out.refused == "scattered":
        problem = (
            f"its only near match (line {_line_of(starts, best.start)}, score "
            f"{best.score:.2f}) differs from it in separate places (or stops short of an "
            "end while the line goes on), which looks more like a neighbouring statement "
            f"than this one edited (such a match needs a score of {SCATTERED:g})"
        )
    else:
        problem = "find_index applies to exact matches only"
    data = _fuzzy_data(out, shown, text, starts, encoding)
    data["margin"] = out.margin
    if out.refused:
        data["refused"] = out.refused
    return RequestFailed(
        f"fuzzy find {spec.find!r} is ambiguous in {scope.describe()}: {problem}; narrow "
        "the scope (a line scope such as :LINE) or make the find more specific",
        data={**where, "fuzzy": data},
    )


def _exact_elsewhere(
    cf: CompiledFind,
    spec: Spec,
    text: str,
    starts: list[int],
    scope: ScopeSpan,
    encoding: Encoding,
    near: tuple[Candidate, ...],
) -> None:
    """Raises when a line scope that holds no exact match of the find (at best the near
    match `near`) is stale: the find matches exactly elsewhere in the file."""
    found = search(cf, text, 0, len(text))
    if not found.count or found.match is None:
        return
    m = found.match
    rng = to_range(text, starts, m.start(), m.end(), encoding)
    there = {"line": rng["start"]["line"] + 1, "range": rng, "text": m.group(), "score": 1.0}
    here = [c.summary(text, starts, encoding) for c in near]
    what = (
        f"only nearly matches {scope.describe()} (score {near[0].score:.2f})"
        if near
        else f"does not match {scope.describe()}"
    )
    raise RequestFailed(
        f"fuzzy find {spec.find!r} {what} but matches exactly on line {there['line']}: the "
        "line scope looks stale; use that line, or a symbol scope",
        data={
            "find": spec.find,
            "scope_range": to_range(text, starts, scope.start, scope.end, encoding),
            "fuzzy": {"threshold": spec.fuzzy, "stale_scope": True, "candidates": [*here, there]},
        },
    )


def _check_lines(
    cf: CompiledFind,
    spec: Spec,
    text: str,
    starts: list[int],
    scope: ScopeSpan,
    encoding: Encoding,
    want: Want,
    best: Candidate,
) -> None:
    """A line scope that holds only a near match may be stale: the statement the find was
    written against may now be elsewhere and another one stand at that line number. The
    near match is accepted only when the whole file has no exact match of the find and no
    near match elsewhere scoring within the margin of it; otherwise this raises, with the
    match elsewhere as a candidate."""
    assert spec.find is not None and spec.fuzzy is not None
    _exact_elsewhere(cf, spec, text, starts, scope, encoding, (best,))
    here = best.summary(text, starts, encoding)
    whole = fuzzy_search(find_tokens(spec.find, spec.marker, want), text, 0, len(text), spec.fuzzy)
    rivals = [
        c
        for c in (*whole.accepted, *whole.rivals)
        if (c.end <= scope.start or c.start >= scope.end)
        and best.score - c.score < whole.margin - 1e-9
    ]
    if rivals:
        rival = max(rivals, key=lambda c: c.score)
        there = rival.summary(text, starts, encoding)
        raise RequestFailed(
            f"fuzzy find {spec.find!r} only nearly matches {scope.describe()} (score "
            f"{best.score:.2f}), and line {there['line']} matches it as well or better (score "
            f"{rival.score:.2f}): the line scope may be stale; check which one you mean",
            data={
                "find": spec.find,
                "scope_range": to_range(text, starts, scope.start, scope.end, encoding),
                "fuzzy": {
                    "threshold": spec.fuzzy,
                    "stale_scope": True,
                    "candidates": [here, there],
                },
            },
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
            return _resolve_fuzzy(cf, spec, text, starts, scope, encoding, want)
        raise _not_found(cf, text, starts, scope, encoding)
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
