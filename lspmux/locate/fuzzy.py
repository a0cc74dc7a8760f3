"""Fuzzy Locate: when a find matches nothing exactly, the runs of the scope it nearly matches.

The engine calls `fuzzy_search` only after the exact matcher found nothing in the scope, so
an exact match always wins. The find and the text are cut into the exact matcher's tokens
(words and single punctuation characters; whitespace is free) and aligned with
`align.align`: a few find tokens missing, added or changed, a word changed by a typo.

A candidate must keep at least half of the find's words (rounded up) unchanged, must not
glue two words into one (`int a` never matches `inta`), and scores
`1 - cost / tokens of the find` (0..1). Only candidates scoring at least the threshold
(`DEFAULT_THRESHOLD` unless the spec names one) are accepted.

Work stays proportional to where the find's words are, not to the scope: the words needed
to anchor every acceptable candidate (`anchors.find_anchors`) are found with literal scans,
the tokens within reach of those hits are read once (`anchors.spans`), and of those only
the windows holding enough of the find's tokens (`anchors.CountFilter`) are aligned. A find
whose anchors occur more than `MAX_HITS` times in the scope is refused (the caller asks for
a narrower scope). Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from lspmux.locate.align import (
    ADDED,
    CHANGE,
    MATCH,
    MISSING,
    TYPO,
    Alignment,
    Costs,
    align,
    fused,
)
from lspmux.locate.anchors import CountFilter, Token, find_anchors, spans
from lspmux.locate.markers import Want, split_markers
from lspmux.locate.pattern import MARK, PUNCT, WORD, find_items, sticks_forward
from lspmux.locate.spec import DEFAULT_THRESHOLD
from lspmux.text import Encoding, to_position, to_range

REPORT_BELOW = 0.2  # when nothing is accepted, candidates down to threshold - 0.2 are shown
MAX_HITS = 500  # anchor hits beyond which a fuzzy find is refused as too unspecific
NEAR_HITS = 100  # anchor hits up to which near matches below the threshold are listed
SHOWN = 5
_EPS = 1e-9

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

    op: Literal["missing", "added", "changed"]
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
        """Where it is and how well it scores, for error data listing candidates."""
        rng = to_range(text, starts, self.start, self.end, encoding)
        return {
            "line": rng["start"]["line"] + 1,
            "range": rng,
            "text": text[self.start : self.end],
            "score": round(self.score, 3),
        }

    def to_lsp(self, text: str, starts: list[int], encoding: Encoding) -> dict[str, Any]:
        """The fuzzy members of a result's `match`."""
        return {
            "fuzzy": True,
            "score": round(self.score, 3),
            "edits": [e.to_lsp(text, starts, encoding) for e in self.edits],
            "markers": [m.to_lsp(text, starts, encoding) for m in self.markers],
        }


@dataclass(frozen=True, slots=True)
class FuzzyOutcome:
    """What a fuzzy search found: the accepted candidates (best first, distinct places), the
    best ones below the threshold, and what the search looked at."""

    threshold: float
    accepted: tuple[Candidate, ...]
    near: tuple[Candidate, ...]
    anchors: tuple[str, ...]
    hits: int
    too_many: bool = False

    @property
    def tie(self) -> bool:
        """Whether the two best accepted candidates score the same."""
        a = self.accepted
        return len(a) > 1 and abs(a[0].score - a[1].score) < _EPS


def _land(
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


def _edits(ft: FindTokens, toks: list[Token], al: Alignment) -> tuple[Edit, ...]:
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


def _candidate(ft: FindTokens, toks: list[Token], al: Alignment) -> Candidate:
    start, end = toks[al.start][0], toks[al.end - 1][1]
    score = max(0.0, 1.0 - al.cost / len(ft.texts))
    return Candidate(
        start,
        end,
        al.cost,
        score,
        al.exact(),
        _edits(ft, toks, al),
        _land(ft, toks, al, start, end),
    )


def _overlap(a: Candidate, b: Candidate) -> bool:
    return a.start < b.end and b.start < a.end


def _places(found: list[Candidate], threshold: float) -> list[Candidate]:
    """One candidate per place (overlapping candidates are one place). In a place, the
    cheapest run seeds it; of the runs there that reach the threshold, the one keeping the
    most find tokens unchanged is taken (an argument added before the closing `)` is then
    reported as added, rather than the `)` as missing)."""
    places: list[list[Candidate]] = []
    for c in sorted(found, key=lambda c: (c.cost, -c.exact, c.start, c.start - c.end)):
        place = next((p for p in places if _overlap(c, p[0])), None)
        if place is None:
            places.append([c])
        else:
            place.append(c)
    picked: list[Candidate] = []
    for place in places:
        passing = [c for c in place if c.score >= threshold - _EPS]
        picked.append(max(passing, key=lambda c: (c.exact, -c.cost)) if passing else place[0])
    return picked


def _search(
    ft: FindTokens,
    spans: list[list[Token]],
    budget: float,
    threshold: float,
) -> list[Candidate]:
    """The candidates costing at most `budget` in each span of tokens, best first."""
    keep = (sum(ft.words) + 1) // 2
    costs = Costs(ft.texts, ft.words)
    check = CountFilter.of(ft.texts, ft.words, keep)
    width = len(ft.texts) + int(budget)  # the longest run the alignment can accept
    out: list[Candidate] = []
    for span in spans:
        found: list[Candidate] = []
        for a, b in check.ranges([t for _, _, t in span], width, budget):
            toks = span[max(0, a - 1) : b + 1]  # a neighbour each side, for `fused`
            texts = [t for _, _, t in toks]
            for al in align(costs, texts, budget):
                kept_words = sum(1 for kind, i, _ in al.ops if kind == MATCH and ft.words[i])
                if kept_words >= keep and not fused(ft.texts, ft.words, texts, al):
                    found.append(_candidate(ft, toks, al))
        out += _places(found, threshold)  # spans are disjoint: places never cross them
    return sorted(out, key=lambda c: (-c.score, c.start))


def fuzzy_search(
    ft: FindTokens, text: str, lo: int, hi: int, threshold: float = DEFAULT_THRESHOLD
) -> FuzzyOutcome:
    """The runs of text[lo:hi] that `ft` nearly matches (see the module docstring). Near
    matches below the threshold are looked for only when none reaches it (and the find's
    anchors have at most `NEAR_HITS` hits)."""
    word_count = sum(ft.words)
    if not word_count:  # a find of punctuation only is never matched approximately
        return FuzzyOutcome(threshold, (), (), (), 0)
    n = len(ft.texts)
    accept = (1.0 - threshold) * n + _EPS
    report = (1.0 - max(0.0, threshold - REPORT_BELOW)) * n + _EPS
    words = [t for t, w in zip(ft.texts, ft.words, strict=True) if w]
    anchors = find_anchors(words, (word_count + 1) // 2, accept, text, lo, hi, MAX_HITS)
    found_at = list(anchors.hits)
    if len(found_at) > MAX_HITS:
        return FuzzyOutcome(threshold, (), (), anchors.words, len(found_at), too_many=True)
    runs = spans(found_at, text, lo, hi, n + int(report))
    accepted = _search(ft, runs, accept, threshold)
    near: list[Candidate] = []
    if not accepted and len(found_at) <= NEAR_HITS:
        near = _search(ft, runs, report, threshold)[:SHOWN]
    return FuzzyOutcome(threshold, tuple(accepted), tuple(near), anchors.words, len(found_at))
