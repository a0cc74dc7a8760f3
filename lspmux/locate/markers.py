"""Marker detection: which `<|>`-style marker in a find pattern marks the position.

Markers are `<|>`, `<<|>>`, … up to `MAX_LEVEL` levels. A marker occurrence is *whole*: its
`<` run and its `>` run have the same length and are not part of longer runs, so the `<|>`
inside `<<|>>` does not count for level 1 and `<<|>` is no marker at all. The marker of a
pattern is the deepest level that occurs exactly once; for a range, a deepest level that
occurs exactly twice delimits the range. Everything else that looks like a marker is literal
text. An explicit marker string replaces detection. Pure functions only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lspmux.locate.spec import invalid

MAX_LEVEL = 10
Want = Literal["position", "range"]

_RUN = re.compile(r"(?<!<)(<+)\|(>+)(?!>)")
_LOOKALIKE = re.compile(r"<+\|>+")


def marker(level: int) -> str:
    """The marker string of `level` (1 → `<|>`)."""
    return "<" * level + "|" + ">" * level


def whole_markers(pattern: str) -> dict[int, list[int]]:
    """Start offsets of every whole marker in `pattern`, by level."""
    found: dict[int, list[int]] = {}
    for m in _RUN.finditer(pattern):
        left, right = len(m.group(1)), len(m.group(2))
        if left == right <= MAX_LEVEL:
            found.setdefault(left, []).append(m.start())
    return found


def deepest_level(pattern: str) -> int:
    """The deepest whole-marker level in `pattern`, 0 when it has none."""
    return max(whole_markers(pattern), default=0)


@dataclass(frozen=True, slots=True)
class Marked:
    """A pattern cut at its markers: one part (no marker), two (a position between them) or
    three (a range: the middle part lies between the two markers)."""

    parts: tuple[str, ...]
    marker: str | None
    lookalikes: bool  # marker-looking text that stays literal (worth a hint when nothing matches)


def _cut(pattern: str, at: list[int], width: int) -> tuple[str, ...]:
    parts: list[str] = []
    prev = 0
    for start in at:
        parts.append(pattern[prev:start])
        prev = start + width
    parts.append(pattern[prev:])
    return tuple(parts)


def split_markers(pattern: str, want: Want = "position", explicit: str | None = None) -> Marked:
    """Cut `pattern` at the marker(s) that locate the position (or range)."""
    if explicit is not None:
        at = [m.start() for m in re.finditer(re.escape(explicit), pattern)]
        allowed = (1, 2) if want == "range" else (1,)
        if len(at) not in allowed:
            times = "once or twice" if want == "range" else "exactly once"
            raise invalid(
                f"marker {explicit!r} occurs {len(at)} times in find {pattern!r}; it must occur {times}",
                marker=explicit,
                count=len(at),
            )
        return Marked(_cut(pattern, at, len(explicit)), explicit, False)
    levels = whole_markers(pattern)
    if not levels:
        return Marked((pattern,), None, _LOOKALIKE.search(pattern) is not None)
    deepest = max(levels)
    if want == "range" and len(levels[deepest]) == 2:
        return Marked(
            _cut(pattern, levels[deepest], 2 * deepest + 1),
            marker(deepest),
            _lookalikes(pattern) > 2,
        )
    once = [level for level, at in levels.items() if len(at) == 1]
    if not once:
        return Marked((pattern,), None, True)  # every level occurs more than once
    level = max(once)
    return Marked(
        _cut(pattern, levels[level], 2 * level + 1), marker(level), _lookalikes(pattern) > 1
    )


def _lookalikes(pattern: str) -> int:
    return sum(1 for _ in _LOOKALIKE.finditer(pattern))
