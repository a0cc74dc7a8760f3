"""Semantic tokens across backends: lspmux answers deltas itself and speaks one legend.

- Deltas. lspmux announces `full: {delta: true}` whatever the backends do, asks them for full
  results only, and answers `textDocument/semanticTokens/full/delta` itself: `DeltaBridge` keeps
  the last full `data` per document under a `resultId` it mints, and `diff()` turns old and new
  `data` into `SemanticTokensEdit`s (common prefix and suffix, cut on token boundaries).
- Legends. Backends for different file types have different legends (basedpyright's
  `selfParameter`, clangd's `concept`...). `union_legend()` builds the one legend lspmux
  announces (the first backend's legend unchanged, then every other name once) and a
  `LegendMap` per backend; `remap()` rewrites a backend's token types and modifier bitsets into
  the union's indices.

Everything here works on the raw `data` integer arrays (relative encoding, 5 integers a token:
deltaLine, deltaStart, length, tokenType, tokenModifiers).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Integers per token in the relative encoding.
TOKEN = 5


# -- deltas -------------------------------------------------------------------------------------


def diff(old: Sequence[int], new: Sequence[int]) -> list[dict[str, Any]]:
    """The `SemanticTokensEdit`s that turn `old` into `new`: none when equal, else one edit
    replacing what lies between their common prefix and common suffix. When both arrays hold
    whole tokens the edit starts and ends on token boundaries (clients that patch per token
    rely on it)."""
    if old == new:
        return []
    step = TOKEN if len(old) % TOKEN == 0 and len(new) % TOKEN == 0 else 1
    limit = min(len(old), len(new))
    prefix = _common(old, new, limit, from_end=False)
    prefix -= prefix % step
    suffix = _common(old, new, limit - prefix, from_end=True)
    suffix -= suffix % step
    return [
        {
            "start": prefix,
            "deleteCount": len(old) - prefix - suffix,
            "data": list(new[prefix : len(new) - suffix]),
        }
    ]


def _common(a: Sequence[int], b: Sequence[int], limit: int, *, from_end: bool) -> int:
    """How many items `a` and `b` share at their start (or end), at most `limit`; compared by
    slices of shrinking size, so a long common run costs a few C-level comparisons."""
    done, step = 0, 4096
    while step:
        while done + step <= limit and _slice(a, done, step, from_end) == _slice(
            b, done, step, from_end
        ):
            done += step
        step //= 2
    return done


def _slice(x: Sequence[int], done: int, step: int, from_end: bool) -> Sequence[int]:
    return x[len(x) - done - step : len(x) - done] if from_end else x[done : done + step]


def apply(old: Sequence[int], edits: Sequence[Mapping[str, Any]]) -> list[int]:
    """`old` with `edits` applied, as a client does (edits refer to `old`'s indices)."""
    out = list(old)
    for edit in sorted(edits, key=lambda e: e["start"], reverse=True):
        start = edit["start"]
        out[start : start + edit["deleteCount"]] = edit.get("data") or []
    return out


def remapped(result: Mapping[str, Any] | None, legend_map: LegendMap | None) -> Any:
    """A backend's semantic tokens `result` with its indices remapped into the announced
    legend (`legend_map` None: the backend's legend is the announced one)."""
    if result is None or legend_map is None:
        return result
    return {**result, "data": remap(result.get("data") or [], legend_map)}


class DeltaBridge:
    """Per document, the last full result lspmux handed out, to answer delta requests.

    `full()` records a backend's full result and gives the client the same tokens under a
    minted `resultId`; `delta()` answers a delta request from a fresh full result: edits against
    the recorded tokens when the client's `previousResultId` is the last one minted for that
    document, else the full result. `forget()` drops a closed document."""

    def __init__(self, prefix: str = "lspmux") -> None:
        self._prefix = prefix
        self._ids = itertools.count(1)
        self._last: dict[str, tuple[str, list[int]]] = {}

    def _mint(self, uri: str, data: list[int]) -> str:
        result_id = f"{self._prefix}-{next(self._ids)}"
        self._last[uri] = (result_id, data)
        return result_id

    def full(self, uri: str, result: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The answer to `semanticTokens/full` from a backend's full `result` (None stays None
        and forgets the document)."""
        if result is None:
            self.forget(uri)
            return None
        data = list(result.get("data") or [])
        return {"resultId": self._mint(uri, data), "data": data}

    def delta(
        self, uri: str, previous_result_id: str | None, result: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        """The answer to `semanticTokens/full/delta`, given the backend's full `result` for the
        document now: a `SemanticTokensDelta` when lspmux still holds what the client has,
        else a full `SemanticTokens`."""
        last = self._last.get(uri)
        if result is None or last is None or last[0] != previous_result_id:
            return self.full(uri, result)
        new = list(result.get("data") or [])
        edits = diff(last[1], new)
        return {"resultId": self._mint(uri, new), "edits": edits}

    def forget(self, uri: str) -> None:
        self._last.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._last


# -- legends ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LegendMap:
    """Where one backend's legend indices land in the union legend."""

    types: tuple[int, ...]  # backend token type index → union index
    modifiers: tuple[int, ...]  # backend modifier bit → union bit

    @property
    def identity(self) -> bool:
        return self.types == tuple(range(len(self.types))) and self.modifiers == tuple(
            range(len(self.modifiers))
        )


def union_legend(
    legends: Sequence[Mapping[str, Any] | None],
) -> tuple[dict[str, list[str]], list[LegendMap]]:
    """The legend lspmux announces, and for each backend legend (in order; None for a backend
    without semantic tokens) the map of its indices into it. The first legend is kept as it is
    (its map is the identity, duplicate names included: clangd lists `variable` three times);
    later legends add the names not yet present."""
    types: list[str] = []
    modifiers: list[str] = []
    maps: list[LegendMap] = []
    for legend in legends:
        legend = legend or {}
        first = not types and not modifiers
        maps.append(
            LegendMap(
                _place(types, legend.get("tokenTypes") or [], keep_all=first),
                _place(modifiers, legend.get("tokenModifiers") or [], keep_all=first),
            )
        )
    return {"tokenTypes": types, "tokenModifiers": modifiers}, maps


def _place(into: list[str], names: Sequence[str], *, keep_all: bool) -> tuple[int, ...]:
    out: list[int] = []
    for name in names:
        if keep_all or name not in into:
            into.append(name)
            out.append(len(into) - 1)
        else:
            out.append(into.index(name))
    return tuple(out)


def remap(data: Sequence[int], legend_map: LegendMap) -> list[int]:
    """A backend's token `data` with its type indices and modifier bitsets rewritten into the
    union legend. A token whose type is outside the backend's legend is dropped (its position
    carried over to the next token); modifier bits outside the legend are cleared."""
    if legend_map.identity and _within(data, len(legend_map.types), len(legend_map.modifiers)):
        return list(data)
    types, modifiers = legend_map.types, legend_map.modifiers
    bits: dict[int, int] = {}  # a backend's modifier set → the union's (sets repeat a lot)

    def moved(mods: int) -> int:
        if mods not in bits:
            bits[mods] = sum(1 << modifiers[b] for b in range(len(modifiers)) if mods >> b & 1)
        return bits[mods]

    whole = list(data[: len(data) - len(data) % TOKEN])
    kinds = whole[3::TOKEN]
    if not kinds or (min(kinds) >= 0 and max(kinds) < len(types)):  # no token to drop
        whole[3::TOKEN] = [types[k] for k in kinds]
        sets = whole[4::TOKEN]
        table = {m: moved(m) for m in set(sets)}
        whole[4::TOKEN] = [table[m] for m in sets]
        return whole
    out: list[int] = []
    carry_line = carry_start = 0
    for i in range(0, len(whole), TOKEN):
        line, start, length, kind, mods = whole[i : i + TOKEN]
        if line:
            carry_start = 0
        line, start = line + carry_line, start + carry_start
        if not 0 <= kind < len(types):  # dropped: the next token's position absorbs it
            carry_line, carry_start = line, start
            continue
        carry_line = carry_start = 0
        out += (line, start, length, types[kind], moved(mods))
    return out


def _within(data: Sequence[int], n_types: int, n_modifiers: int) -> bool:
    if len(data) % TOKEN:
        return False
    kinds, mods = data[3::TOKEN], data[4::TOKEN]
    return not kinds or (
        min(kinds) >= 0
        and max(kinds) < n_types
        and min(mods) >= 0
        and max(mods) >> n_modifiers == 0
    )
