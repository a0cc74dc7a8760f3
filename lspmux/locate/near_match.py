"""A find that matches nothing exactly: its near match, when the spec asks for one (docs/locate.md,
Fuzzy), or the error that says what is closest.

A near match is an answer only when it is clearly the best one in its scope; in a line scope
only when the line scope is not stale (the find matches nowhere else in the file, exactly or
nearly as well). Every refusal carries data — the closest line, the candidates with their
scores — that says what to try next.
"""

from __future__ import annotations

import re
from bisect import bisect_right
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
from lspmux.locate.pattern import CompiledFind, closest_line, search
from lspmux.locate.resolution import MatchSpan, Resolution, ScopeSpan
from lspmux.locate.spec import Spec
from lspmux.text import Encoding, line_end, to_position, to_range

_NON_BLANK = re.compile(r"\S")


def not_found(
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


def resolve_near(
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
        raise not_found(cf, text, starts, scope, encoding, out)
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
