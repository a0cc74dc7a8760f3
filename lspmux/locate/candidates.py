"""Fuzzy Locate's results: a find cut into tokens (with where its markers stick), and a near
match of it — its place, score, edits and where each marker landed — built from a token
alignment, with their LSP-native JSON. Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from lspmux.locate.align import ADDED, CHANGE, MATCH, MISSING, TYPO, Alignment
from lspmux.locate.anchors import Token
from lspmux.locate.markers import Want, split_markers
from lspmux.locate.pattern import MARK, PUNCT, WORD, find_items, sticks_forward
from lspmux.text import Encoding, to_position, to_range

Status = Literal["matched", "changed", "missing"]


@dataclass(frozen=True, slots=True)
class FindTokens:
    """A find as tokens: their texts, which are words, and where each marker sticks:
    (find token index, True for its start / False for its end, characters into the token
    for a marker inside a word such as `hel<|>lo`, else 0); index -1 is the start."""

    texts: tuple[str, ...]
    words: tuple[bool, ...]
    marks: tuple[tuple[int, bool, int], ...]


@lru_cache(maxsize=256)
def find_tokens(find: str, marker: str | None = None, want: Want = "position") -> FindTokens:
    """The tokens of `find`, its markers cut as the exact matcher cuts them (a marker
    between two word characters stays inside the one word)."""
    marked = split_markers(find, want, marker)
    items = find_items(marked.parts)
    count = len(marked.parts) - 1
    texts: list[str] = []
    words: list[bool] = []
    marks: list[tuple[int, bool, int]] = []
    glue = False  # the next word continues the last one (a marker inside a word)
    for i, (kind, text) in enumerate(items):
        if kind == MARK:
            inside = bool(texts) and words[-1] and items[i - 1][0] in (WORD, MARK)
            after = next((k for k, _ in items[i + 1 :] if k != MARK), None)
            if inside and after == WORD:
                marks.append((len(texts) - 1, True, len(texts[-1])))
                glue = True
            elif sticks_forward(items, i, count):
                marks.append((len(texts), True, 0))
            else:
                marks.append((len(texts) - 1, False, 0))
        elif kind == WORD and glue:
            texts[-1] += text
            glue = False
        elif kind in (WORD, PUNCT):
            texts.append(text)
            words.append(kind == WORD)
    return FindTokens(tuple(texts), tuple(words), tuple(marks))


@dataclass(frozen=True, slots=True)
class Edit:
    """One difference between the find and the matched text. Offsets are into the text; a
    missing token has start == end where it would have been."""

    op: Literal["missing", "added", "changed", "moved"]
    find: str | None
    text: str | None
    start: int
    end: int
    typo: bool = False

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        if self.find is not None:
            out["find"] = self.find
        if self.text is not None:
            out["text"] = self.text
        if self.op == "missing":
            out["position"] = to_position(text, starts, self.start, encoding)
        else:
            out["range"] = to_range(text, starts, self.start, self.end, encoding)
        if self.op == "changed":
            out["typo"] = self.typo
        return out


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a marker landed: on the find token it sticks to (`matched`), on the token that
    replaced it (`changed`), or — the token being `missing` — on the token that took its
    place (`text`, None at the very end or start of the match)."""

    token: str | None
    side: Literal["start", "end"]
    status: Status
    text: str | None
    offset: int

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        return {
            "token": self.token,
            "side": self.side,
            "status": self.status,
            "landed_on": self.text,
            "position": to_position(text, starts, self.offset, encoding),
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A run of the text the find nearly matches: text[start:end], its score (0..1), how
    many find tokens it keeps unchanged, the edits, and the markers' landings."""

    start: int
    end: int
    cost: float
    score: float
    exact: int
    edits: tuple[Edit, ...]
    markers: tuple[Landing, ...]

    def summary(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        """Where it is, how well it scores and why, for error data listing candidates."""
        rng = to_range(text, starts, self.start, self.end, encoding)
        return {
            "line": rng["start"]["line"] + 1,
            "range": rng,
            "text": text[self.start : self.end],
            "score": round(self.score, 3),
            "edits": [e.to_lsp(text, starts, encoding) for e in self.edits],
        }

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        """The fuzzy members of a result's `match`."""
        return {
            "fuzzy": True,
            "score": round(self.score, 3),
            "edits": [e.to_lsp(text, starts, encoding) for e in self.edits],
            "markers": [m.to_lsp(text, starts, encoding) for m in self.markers],
        }


def land(
    ft: FindTokens, toks: list[Token], al: Alignment, start: int, end: int
) -> tuple[Landing, ...]:
    where = {i: k for k, (_, i, _) in enumerate(al.ops) if i >= 0}
    out: list[Landing] = []
    for index, at_start, inner in ft.marks:
        side: Literal["start", "end"] = "start" if at_start else "end"
        if index < 0:
            out.append(Landing(None, side, "matched", None, start))
            continue
        k = where[index]
        kind, _, j = al.ops[k]
        status: Status = "matched" if kind == MATCH else "missing" if kind == MISSING else "changed"
        if j >= 0 and inner:  # inside the word: as many characters in, at most its end
            a, b, t = toks[j]
            out.append(Landing(ft.texts[index], side, status, t, min(a + inner, b)))
            continue
        if j < 0:  # the token is missing: the text token that took its place
            rest = al.ops[k + 1 :] if at_start else reversed(al.ops[:k])
            j = next((jj for _, _, jj in rest if jj >= 0), -1)
        if j < 0:
            offset, landed = (end if at_start else start), None
        else:
            offset, landed = (toks[j][0] if at_start else toks[j][1]), toks[j][2]
        out.append(Landing(ft.texts[index], side, status, landed, offset))
    return tuple(out)


def edits(ft: FindTokens, toks: list[Token], al: Alignment) -> tuple[Edit, ...]:
    out: list[Edit] = []
    at = toks[al.start][0]
    for kind, i, j in al.ops:
        if kind == MISSING:
            out.append(Edit("missing", ft.texts[i], None, at, at))
            continue
        a, b, t = toks[j]
        at = b
        if kind == ADDED:
            out.append(Edit("added", None, t, a, b))
        elif kind in (TYPO, CHANGE):
            out.append(Edit("changed", ft.texts[i], t, a, b, typo=kind == TYPO))
    return tuple(out)
