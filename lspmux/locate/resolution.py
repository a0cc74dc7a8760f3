"""What resolving a Locate spec yields: the scope's span, the match, and the position or range
where the spec lands — each with its LSP-native JSON form — plus the cached line starts the
engine works with."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lspmux.locate.fuzzy import Candidate
from lspmux.locate.markers import Want
from lspmux.locate.spec import ScopeKind
from lspmux.text import Encoding, line_starts, to_position, to_range


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
