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
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    prefix -= prefix % step
    suffix = 0
    limit -= prefix
    while suffix < limit and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    suffix -= suffix % step
    return [
        {
            "start": prefix,
            "deleteCount": len(old) - prefix - suffix,
            "data": list(new[prefix : len(new) - suffix]),
        }
    ]


def apply(old: Sequence[int], edits: Sequence[Mapping[str, Any]]) -> list[int]:
    """`old` with `edits` applied, as a client does (edits refer to `old`'s indices)."""
    out = list(old)
    for edit in sorted(edits, key=lambda e: e["start"], reverse=True):
        start = edit["start"]
        out[start : start + edit["deleteCount"]] = edit.get("data") or []
    return out


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
    out: list[int] = []
    carry_line = carry_start = 0
    for i in range(0, len(data) - len(data) % TOKEN, TOKEN):
        line, start, length, kind, mods = data[i : i + TOKEN]
        if line:
            carry_start = 0
        line, start = line + carry_line, start + carry_start
        if not 0 <= kind < len(types):
            carry_line, carry_start = line, start
            continue
        carry_line = carry_start = 0
        bits = 0
        bit = 0
        while mods >> bit and bit < len(modifiers):
            if mods >> bit & 1:
                bits |= 1 << modifiers[bit]
            bit += 1
        out += (line, start, length, types[kind], bits)
    return out


def _within(data: Sequence[int], n_types: int, n_modifiers: int) -> bool:
    top = (1 << n_modifiers) - 1
    return len(data) % TOKEN == 0 and all(
        0 <= data[i + 3] < n_types and not data[i + 4] & ~top for i in range(0, len(data), TOKEN)
    )
