"""Fuzzy Locate: when a find matches nothing exactly, the runs of the scope it nearly matches.

The engine calls `fuzzy_search` only after the exact matcher found nothing in the scope, so
an exact match always wins. The find and the text are cut into the exact matcher's tokens
(words and single punctuation characters; whitespace is free) and aligned with
`align.align`: a few find tokens missing, added or changed, a word changed by a typo.

Each find token weighs what it tells (`weights.py`: identifiers by rarity in the scope,
punctuation half a keyword); a word still present in the scope is never a typo; quotes
compare equal. A candidate must keep at least half of the find's words (rounded up)
unchanged, must not glue two words into one (`int a` never matches `inta`), and scores
`1 - cost / total weight` (0..1). Items moved inside a bracket are put back in the find's
order (`moves.py`) before the place is scored. Only candidates scoring at least the threshold
(`DEFAULT_THRESHOLD` unless the spec names one) are accepted, and the best is an answer only
when nothing else could be the place: no runner-up elsewhere within `MARGIN`, no identifier
it lost that still stands elsewhere in a near match, no marker displaced onto another
argument, no scattered edits under `SCATTERED` (`FuzzyOutcome.refused` says which). Of the
best place's passing runs, the one keeping the most of the find is reported
(`align.most_kept`).

Work stays proportional to where the find's words are, not to the scope: the words needed
to anchor every acceptable candidate (`anchors.find_anchors`) are found with literal scans,
the tokens within reach of those hits are read once (`anchors.spans`), and of those only
the windows holding enough of the find's tokens (`anchors.CountFilter`) are aligned. A find
whose anchors occur more than `MAX_HITS` times in the scope is refused (the caller asks for
a narrower scope). Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    most_kept,
    same_quote,
)
from lspmux.locate.anchors import Anchors, CountFilter, Token, find_anchors, spans
from lspmux.locate.markers import Want, split_markers
from lspmux.locate.moves import bracket_at, brackets, item_of, lands_on_neighbour, permute
from lspmux.locate.pattern import MARK, PUNCT, WORD, find_items, sticks_forward
from lspmux.locate.spec import DEFAULT_THRESHOLD
from lspmux.locate.weights import ADDED_PUNCT, COUNT_CAP, added, counted, hits, weight
from lspmux.text import Encoding, to_position, to_range

REPORT_BELOW = 0.2  # when nothing is accepted, candidates down to threshold - 0.2 are shown
MAX_HITS = 500  # anchor hits beyond which a fuzzy find is refused as too unspecific
NEAR_HITS = 100  # anchor hits up to which near matches below the threshold are listed
SHOWN = 5
MARGIN = 0.1  # a best near match needs a lead of at least this over the runner-up elsewhere
MOVE_COST = 1.0  # what an argument moved inside its bracket costs
SCATTERED = 0.85  # the least score of a near match whose edits are scattered (`_Search.scattered`)
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


@dataclass(frozen=True, slots=True)
class FuzzyOutcome:
    """What a fuzzy search found: the candidates that reach the threshold (the cheapest run
    of each place, best first), the run `reported` for the best place when it is an answer, the best ones below the threshold
    (when none reaches it), and what the search looked at. `refused` says why the best is
    not an answer: `tie` (the runner-up scores the same), `close` (the runner-up, at another
    place, scores within `margin` of it; `rivals` are the two), or `moved` (the marker's
    argument moved in a way the search cannot follow; `moved_item` is that argument), or
    `lost` (the best lost an identifier of the find, named in `moved_item`, that still
    occurs in the scope in a near match elsewhere scoring at least the threshold less
    `REPORT_BELOW`: `rivals` are the two), or `scattered` (the answer's edits lie in
    separate places and it scores under `SCATTERED`: more likely a neighbour of a statement
    that is gone than that statement edited)."""

    threshold: float
    accepted: tuple[Candidate, ...]
    near: tuple[Candidate, ...]
    anchors: tuple[str, ...]
    hits: int
    too_many: bool = False
    margin: float = 0.0
    refused: Literal["tie", "close", "moved", "lost", "scattered"] | None = None
    rivals: tuple[Candidate, ...] = ()
    moved_item: str = ""
    reported: Candidate | None = None  # the answer: set when the best place is not refused

    @property
    def tie(self) -> bool:
        """Whether the two best candidates score the same."""
        return self.refused == "tie"


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


@dataclass(frozen=True, slots=True)
class _Run:
    """An alignment `al` over `toks` (a span's tokens, or some of them reordered when
    `moved` items of a bracket were put back in the find's order)."""

    toks: list[Token]
    al: Alignment
    moved: tuple[tuple[str, int, int], ...] = ()  # each moved item: its text, start, end

    @property
    def cost(self) -> float:
        return self.al.cost + MOVE_COST * len(self.moved)

    @property
    def bounds(self) -> tuple[int, int]:
        used = [self.toks[j] for j in range(self.al.start, self.al.end)]
        return min(t[0] for t in used), max(t[1] for t in used)


class _Search:
    """One fuzzy search: the find with its weights in this scope, and the rules a run must
    follow (half the words kept, no glued words)."""

    def __init__(self, ft: FindTokens, weights: list[float], scope: _Scope) -> None:
        self.ft = ft
        self.total = sum(weights)
        self.keep = (sum(ft.words) + 1) // 2
        self.same = tuple(same_quote(t) for t in ft.texts)
        self.scope = scope
        self.costs = Costs(ft.texts, ft.words, weights, scope.present, added)
        self.check = CountFilter.of(self.same, ft.words, self.keep)
        self.brackets = brackets(self.same)

    def score(self, run: _Run) -> float:
        return max(0.0, 1.0 - run.cost / self.total)

    def ok(self, texts: list[str], al: Alignment) -> bool:
        ft = self.ft
        kept = sum(1 for kind, i, _ in al.ops if kind == MATCH and ft.words[i])
        return kept >= self.keep and not fused(ft.texts, ft.words, texts, al)

    def places(self, spans: list[list[Token]], budget: float, filtered: bool = True) -> list[_Run]:
        """The best run of each place (overlapping runs are one place) costing at most
        `budget`, moves put back where that is cheaper, best first."""
        width = len(self.ft.texts) + int(budget / ADDED_PUNCT)  # the longest acceptable run
        out: list[_Run] = []
        for span in spans:
            texts = [t for _, _, t in span]
            same = [same_quote(t) for t in texts]
            found: list[_Run] = []
            short: list[_Run] = []  # runs keeping too few words: unless their items moved
            windows = self.check.ranges(same, width, budget) if filtered else [(0, len(same))]
            for a, b in windows:
                lo = max(0, a - 1)  # a neighbour each side, for `fused`
                for al in align(self.costs, texts[lo : b + 1], budget):
                    al = _shift(al, lo)
                    if self.ok(texts, al):
                        found.append(_Run(span, al))
                    elif self.brackets:
                        short.append(_Run(span, al))
            seeds = _seeds(found)
            for seed in seeds:
                moved = self._moved(seed, width, budget) if self.brackets else None
                out.append(moved if moved is not None and moved.cost < seed.cost else seed)
            for seed in _seeds(short):
                if not any(_overlap(seed, s) for s in seeds):
                    moved = self._moved(seed, width, budget)
                    if moved is not None:
                        out.append(moved)
        return sorted(out, key=lambda r: (r.cost, r.bounds[0]))

    def _moved(self, seed: _Run, width: int, budget: float) -> _Run | None:
        """The seed's place aligned again with the items of its brackets in the find's
        order, when some moved (None when none did, or it costs more than `budget`)."""
        span = seed.toks
        same = [same_quote(t) for _, _, t in span]
        at = {i: j for kind, i, j in seed.al.ops if kind == MATCH}
        order = list(range(len(span)))
        moved: list[tuple[str, int, int]] = []
        for fb in self.brackets:
            j = at.get(fb.open)
            if j is None:
                continue
            texts = [same[k] for k in order]
            tb = bracket_at(texts, j)
            if tb is None:
                continue
            perm = permute(self.same, fb, texts, tb)
            if perm is None:
                continue
            for a, e in perm[1]:
                moved.append(
                    (
                        " ".join(t for _, _, t in span[order[a] : order[e - 1] + 1]),
                        *_extent(span, order[a:e]),
                    )
                )
            order = [order[k] for k in perm[0]]
        left = budget - MOVE_COST * len(moved)
        if not moved or left < 0:
            return None
        lo, hi = max(0, seed.al.start - width), min(len(span), seed.al.end + width)
        toks = [span[k] for k in order[lo:hi]]
        texts = [t for _, _, t in toks]
        runs = [al for al in align(self.costs, texts, left) if self.ok(texts, al)]
        if not runs:
            return None
        best = min(runs, key=lambda al: (al.cost, -al.exact(), al.start))
        return _Run(toks, best, tuple(moved))

    def report(self, place: _Run, budget: float) -> _Run:
        """The run reported for a place: of every run there that passes (not only the
        cheapest per end token), the one keeping the most of the find (by weight), then the
        cheapest, then the earliest."""
        ops = place.al.ops
        if place.moved or (ops[0][0] == MATCH and ops[-1][0] == MATCH):
            return place  # only a run that lost an end can be outdone by one keeping it
        span, al = place.toks, place.al
        reach = len(self.ft.texts) // 2 + 3  # how far a run keeping more may reach out
        lo, hi = max(0, al.start - reach), min(len(span), al.end + reach)
        texts = [t for _, _, t in span]
        a, b = place.bounds
        for found in most_kept(self.costs, texts[lo:hi], budget):
            found = _shift(found, lo)
            run = _Run(span, found)
            c, d = run.bounds
            if c < b and a < d and self.ok(texts, found):
                return run
        return place

    def candidate(self, run: _Run) -> Candidate:
        ft, toks, al = self.ft, run.toks, run.al
        start, end = run.bounds
        edits = _edits(ft, toks, al) + tuple(
            Edit("moved", item, item, a, b) for item, a, b in run.moved
        )
        return Candidate(
            start,
            end,
            run.cost,
            self.score(run),
            al.exact(),
            edits,
            _land(ft, toks, al, start, end),
        )

    def lost(self, run: _Run) -> set[str]:
        """The identifiers of the find that `run` changed or left out although they still
        occur in the scope, and that weigh more than any word the run kept (the run lost
        what identified the find best)."""
        ft, weights = self.ft, self.costs.weights
        kept = max(
            (weights[i] for kind, i, _ in run.al.ops if kind == MATCH and ft.words[i]),
            default=0.0,
        )
        return {
            ft.texts[i]
            for kind, i, _ in run.al.ops
            if kind in (CHANGE, TYPO, MISSING)
            and ft.words[i]
            and counted(ft.texts[i])
            and weights[i] > kept
            and self.scope.present(ft.texts[i])
        }

    def scattered(self, run: _Run, text: str) -> bool:
        """Whether the run differs from the find in separate places (two groups of edits
        with kept tokens between them; one substitution repeated counts once, items moved
        inside brackets count once; an edge cut
        short while the line goes on (`truncated`) counts as one more), or changed a find
        token into another token of the find (a slot shifted): the signs of a neighbouring
        statement rather than an edited one."""
        ft, toks = self.ft, run.toks
        groups: set[tuple[tuple[str, str], ...]] = set()
        current: list[tuple[str, str]] = []
        words = set(self.same)
        shifted = False
        for kind, i, j in (*run.al.ops, (MATCH, -1, -1)):
            if kind == MATCH:
                if current:
                    groups.add(tuple(current))
                current = []
                continue
            find = ft.texts[i] if i >= 0 else ""
            text = toks[j][2] if j >= 0 else ""
            current.append((find, text))
            if kind == CHANGE and same_quote(text) in words:
                shifted = True
        cut = self.truncated(run, text)  # a cut edge is a sign of its own
        return shifted or len(groups) + bool(run.moved) + cut > 1  # a reordering: one edit

    def truncated(self, run: _Run, text: str) -> bool:
        """Whether the run leaves out find tokens at an edge while its line goes on with
        other tokens right there (the find stops being this statement rather than this
        statement losing its end)."""
        if run.moved or not run.al.ops:
            return False
        toks, al = run.toks, run.al
        end = al.ops[-1][0] == MISSING and al.end < len(toks)
        if end and "\n" not in text[toks[al.end - 1][1] : toks[al.end][0]]:
            return True
        start = al.ops[0][0] == MISSING and al.start > 0
        return start and "\n" not in text[toks[al.start - 1][1] : toks[al.start][0]]

    def neighbour(self, run: _Run) -> str | None:
        """The find's item holding a marker when that marker landed in another item of the
        find in the same bracket (a move the search could not follow), else None."""
        ft, toks, al = self.ft, run.toks, run.al
        texts = [same_quote(t) for _, _, t in toks]
        where = {i: k for k, (_, i, _) in enumerate(al.ops) if i >= 0}
        matched = {i: j for kind, i, j in al.ops if kind == MATCH}
        for index, at_start, _ in ft.marks:
            if index < 0:
                continue
            k = where[index]
            j = al.ops[k][2]
            if j < 0:  # missing: the text token that took its place
                rest = al.ops[k + 1 :] if at_start else reversed(al.ops[:k])
                j = next((jj for _, _, jj in rest if jj >= 0), -1)
            if j < 0:
                continue
            for fb in self.brackets:
                if not fb.open < index < fb.close or item_of(fb, index) is None:
                    continue
                tj = matched.get(fb.open)
                tb = bracket_at(texts, tj) if tj is not None else None
                if tb is not None and lands_on_neighbour(self.same, fb, index, texts, tb, j):
                    item = item_of(fb, index)
                    assert item is not None
                    a, b = fb.items[item]
                    return " ".join(ft.texts[a:b])
                break  # the innermost bracket holding the marker decides
        return None


def _overlap(x: _Run, y: _Run) -> bool:
    a, b = x.bounds
    c, d = y.bounds
    return a < d and c < b


def _inside(run: _Run, a: int, b: int) -> bool:
    c, d = run.bounds
    return a <= c and d <= b


def _extent(span: list[Token], indices: list[int]) -> tuple[int, int]:
    return min(span[k][0] for k in indices), max(span[k][1] for k in indices)


def _shift(al: Alignment, by: int) -> Alignment:
    if not by:
        return al
    ops = tuple((kind, i, j + by if j >= 0 else j) for kind, i, j in al.ops)
    return Alignment(al.cost, al.start + by, al.end + by, ops)


def _seeds(found: list[_Run]) -> list[_Run]:
    """The cheapest run of each place (overlapping runs are one place)."""
    seeds: list[_Run] = []
    for run in sorted(found, key=lambda r: (r.cost, -r.al.exact(), r.al.start, -r.al.end)):
        a, b = run.bounds
        if not any(a < d and c < b for c, d in (s.bounds for s in seeds)):
            seeds.append(run)
    return seeds


@dataclass(slots=True)
class _Scope:
    """What a fuzzy search knows of the scope's words: the complete hits of the rare ones
    (fewer than `COUNT_CAP`), and which words occur at all (scanned on demand)."""

    text: str
    lo: int
    hi: int
    rare: dict[str, list[int]]
    seen: dict[str, bool]

    def present(self, word: str) -> bool:
        if word in self.rare:
            return bool(self.rare[word])
        if word not in self.seen:
            self.seen[word] = bool(hits(word, self.text, self.lo, self.hi, 1))
        return self.seen[word]


def _weights(ft: FindTokens, text: str, lo: int, hi: int) -> tuple[list[float], _Scope]:
    """The weight of each find token in this scope, and what was learnt of its words."""
    scope = _Scope(text, lo, hi, {}, {})
    counts: dict[str, int] = {}
    for t, w in zip(ft.texts, ft.words, strict=True):
        if w and counted(t) and t not in counts:
            found = hits(t, text, lo, hi)
            counts[t] = len(found)
            if len(found) < COUNT_CAP:
                scope.rare[t] = found
    weights = [weight(t, w, counts.get(t, 0)) for t, w in zip(ft.texts, ft.words, strict=True)]
    return weights, scope


def fuzzy_search(
    ft: FindTokens,
    text: str,
    lo: int,
    hi: int,
    threshold: float = DEFAULT_THRESHOLD,
    margin: float = MARGIN,
) -> FuzzyOutcome:
    """The runs of text[lo:hi] that `ft` nearly matches (see the module docstring), and
    whether the best of them is an answer: the runner-up at another place must score more
    than `margin` below it. Near matches below the threshold are looked for only when none
    reaches it (and the find's anchors have at most `NEAR_HITS` hits)."""
    word_count = sum(ft.words)
    if not word_count:  # a find of punctuation only is never matched approximately
        return FuzzyOutcome(threshold, (), (), (), 0, margin=margin)
    weights, scope = _weights(ft, text, lo, hi)
    search = _Search(ft, weights, scope)
    total = search.total
    words = [t for t, w in zip(ft.texts, ft.words, strict=True) if w]
    n = len(ft.texts)

    def places(budget: float) -> tuple[Anchors, list[_Run] | None]:
        """The places costing at most `budget`, found through anchors complete for that
        budget (None when the anchors are too common)."""
        anchors = find_anchors(words, search.keep, budget, text, lo, hi, MAX_HITS, scope.rare)
        if len(anchors.hits) > MAX_HITS:
            return anchors, None
        runs = spans(list(anchors.hits), text, lo, hi, n + int(budget / ADDED_PUNCT))
        return anchors, search.places(runs, budget)

    accept = (1.0 - threshold) * total + _EPS
    anchors, found = places(accept)
    base = FuzzyOutcome(threshold, (), (), anchors.words, len(anchors.hits), margin=margin)
    if found is None:
        return replace(base, too_many=True)
    passing = [p for p in found if search.score(p) >= threshold - _EPS]
    if not passing and (len(anchors.hits) <= NEAR_HITS or search.brackets):
        # a run whose items moved costs too much to be seen within the threshold's budget
        # until its items are put back in order: look further, and keep what then passes
        report = (1.0 - max(0.0, threshold - REPORT_BELOW)) * total + _EPS
        found = places(report)[1] or []
        passing = [p for p in found if search.score(p) >= threshold - _EPS]
        if not passing:
            near = [search.candidate(p) for p in found[:SHOWN]]
            return replace(base, near=tuple(near) if len(anchors.hits) <= NEAR_HITS else ())
    if not passing:
        return base
    # a runner-up within the margin may score below the threshold: look that far too
    rivals = (1.0 - max(0.0, search.score(passing[0]) - margin)) * total + _EPS
    if rivals > accept:
        wider, more = places(rivals)
        if more is None:
            return replace(base, anchors=wider.words, hits=len(wider.hits), too_many=True)
        found = more
        passing = [p for p in found if search.score(p) >= threshold - _EPS]
    best = search.candidate(passing[0])
    reported = search.report(passing[0], accept)
    a, b = reported.bounds
    # runs inside the reported one are the same place (two halves of an edited statement)
    others = tuple(search.candidate(p) for p in found[1:] if not _inside(p, a, b))
    accepted = (best, *(c for c in others if c.score >= threshold - _EPS))
    close = tuple(c for c in others if best.score - c.score < margin - _EPS)
    lost, keeper = search.lost(reported), None
    if lost:  # an identifier the answer lost still occurs: is the find's place there?
        floor = max(0.0, threshold - REPORT_BELOW)
        for p in places((1.0 - floor) * total + _EPS)[1] or []:
            c, d = p.bounds
            keeps = {ft.texts[i] for kind, i, _ in p.al.ops if kind == MATCH} & lost
            if keeps and (d <= a or c >= b) and search.score(p) >= floor - _EPS:
                keeper = (search.candidate(p), ", ".join(sorted(keeps)))
                break
    if close:
        tie = abs(close[0].score - best.score) < _EPS
        extra = (keeper[0],) if keeper and keeper[0] not in close else ()
        return replace(
            base,
            accepted=accepted,
            refused="tie" if tie else "close",
            rivals=(best, *close, *extra),
        )
    if keeper is not None:
        return replace(
            base, accepted=accepted, refused="lost", rivals=(best, keeper[0]), moved_item=keeper[1]
        )
    item = search.neighbour(reported)
    if item is not None:
        return replace(base, accepted=accepted, refused="moved", rivals=(best,), moved_item=item)
    answer = search.candidate(reported)
    if search.scattered(reported, text) and answer.score < SCATTERED - _EPS:
        return replace(base, accepted=accepted, refused="scattered", rivals=(answer,))
    return replace(base, accepted=accepted, reported=answer)
