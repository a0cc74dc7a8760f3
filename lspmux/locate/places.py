"""Where a fuzzy find nearly matches: the places in spans of tokens and the run reported for
one, for one find whose tokens are weighed in one scope (`weigh`), under the rules a run must
follow (half the words kept, no glued words), with items moved inside brackets put back in
the find's order (`Search.places`), and the signs that a place is a neighbour of the find's
statement rather than that statement edited (`Search.lost`, `Search.neighbour`,
`Search.scattered`). Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from lspmux.locate.anchors import CountFilter, Token
from lspmux.locate.candidates import Candidate, Edit, FindTokens, edits, land
from lspmux.locate.moves import bracket_at, brackets, item_of, lands_on_neighbour, permute
from lspmux.locate.weights import ADDED_PUNCT, COUNT_CAP, added, counted, hits, weight

MOVE_COST = 1.0  # what an argument moved inside its bracket costs


@dataclass(frozen=True, slots=True)
class Run:
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


class Search:
    """One fuzzy search: the find with its weights in this scope, and the rules a run must
    follow (half the words kept, no glued words)."""

    def __init__(self, ft: FindTokens, weights: list[float], scope: ScopeWords) -> None:
        self.ft = ft
        self.total = sum(weights)
        self.keep = (sum(ft.words) + 1) // 2
        self.same = tuple(same_quote(t) for t in ft.texts)
        self.scope = scope
        self.costs = Costs(ft.texts, ft.words, weights, scope.present, added)
        self.check = CountFilter.of(self.same, ft.words, self.keep)
        self.brackets = brackets(self.same)

    def score(self, run: Run) -> float:
        return max(0.0, 1.0 - run.cost / self.total)

    def ok(self, texts: list[str], al: Alignment) -> bool:
        ft = self.ft
        kept = sum(1 for kind, i, _ in al.ops if kind == MATCH and ft.words[i])
        return kept >= self.keep and not fused(ft.texts, ft.words, texts, al)

    def places(self, spans: list[list[Token]], budget: float, filtered: bool = True) -> list[Run]:
        """The best run of each place (overlapping runs are one place) costing at most
        `budget`, moves put back where that is cheaper, best first."""
        width = len(self.ft.texts) + int(budget / ADDED_PUNCT)  # the longest acceptable run
        out: list[Run] = []
        for span in spans:
            texts = [t for _, _, t in span]
            same = [same_quote(t) for t in texts]
            found: list[Run] = []
            short: list[Run] = []  # runs keeping too few words: unless their items moved
            windows = self.check.ranges(same, width, budget) if filtered else [(0, len(same))]
            for a, b in windows:
                lo = max(0, a - 1)  # a neighbour each side, for `fused`
                for al in align(self.costs, texts[lo : b + 1], budget):
                    al = self.trim(span, _shift(al, lo))
                    if al.cost > budget:
                        continue
                    if self.ok(texts, al):
                        found.append(Run(span, al))
                    elif self.brackets:
                        short.append(Run(span, al))
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

    def _moved(self, seed: Run, width: int, budget: float) -> Run | None:
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
        return Run(toks, best, tuple(moved))

    def trim(self, toks: list[Token], al: Alignment) -> Alignment:
        """`al` without an edge token taken from another line: one changed, or one kept
        across added tokens (a word of the neighbouring statement, with the line break and
        whatever stands between): that find token is missing instead. A run must not start
        or end in another statement for the price of a few added tokens."""
        ops = list(al.ops)
        text = self.scope.text
        weights = self.costs.weights
        cost = al.cost
        for edge in (0, 1):
            seq = ops if edge == 0 else ops[::-1]
            kind, i, j = seq[0]
            if kind not in (MATCH, CHANGE, TYPO) or len(seq) < 2:
                continue
            k = 1
            while k < len(seq) and seq[k][0] == ADDED:
                k += 1
            if k == len(seq) or (k == 1 and kind == MATCH):
                continue  # a kept token next to the rest is a statement over lines
            inner = seq[k][2]
            a, b = sorted((j, inner))
            if "\n" not in text[toks[a][1] : toks[b][0]]:
                continue
            change = self.costs.row(toks[j][2])[i]
            cost += weights[i] - change - sum(self.costs.add(toks[jj][2]) for _, _, jj in seq[1:k])
            seq = [(MISSING, i, -1), *seq[k:]]
            ops = seq if edge == 0 else seq[::-1]
        if ops == list(al.ops):
            return al
        used = [j for _, _, j in ops if j >= 0]
        return Alignment(cost, min(used), max(used) + 1, tuple(ops))

    def report(self, place: Run, budget: float, text: str) -> Run:
        """The run reported for a place: of every run there that passes (not only the
        cheapest per end token), the one keeping the most of the find (`align.most_kept`).
        It stays on the lines of the place's cheapest run: a token kept from another
        statement would take the position there."""
        ops = place.al.ops
        if place.moved or (ops[0][0] == MATCH and ops[-1][0] == MATCH):
            return place  # only a run that lost an end can be outdone by one keeping it
        span, al = place.toks, place.al
        reach = len(self.ft.texts) // 2 + 3  # how far a run keeping more may reach out
        lo, hi = max(0, al.start - reach), min(len(span), al.end + reach)
        texts = [t for _, _, t in span]
        a, b = place.bounds
        for found in most_kept(self.costs, texts[lo:hi], budget):
            found = self.trim(span, _shift(found, lo))
            if found.cost > budget:
                continue
            run = Run(span, found)
            c, d = run.bounds
            same_lines = "\n" not in text[c:a] and "\n" not in text[b:d]
            if c < b and a < d and same_lines and self.ok(texts, found):
                return run
        return place

    def candidate(self, run: Run) -> Candidate:
        ft, toks, al = self.ft, run.toks, run.al
        start, end = run.bounds
        found = edits(ft, toks, al) + tuple(
            Edit("moved", item, item, a, b) for item, a, b in run.moved
        )
        return Candidate(
            start,
            end,
            run.cost,
            self.score(run),
            al.exact(),
            found,
            land(ft, toks, al, start, end),
        )

    def lost(self, run: Run) -> set[str]:
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

    def scattered(self, run: Run, text: str) -> bool:
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

    def truncated(self, run: Run, text: str) -> bool:
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

    def neighbour(self, run: Run) -> str | None:
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


def _overlap(x: Run, y: Run) -> bool:
    a, b = x.bounds
    c, d = y.bounds
    return a < d and c < b


def inside(run: Run, a: int, b: int) -> bool:
    c, d = run.bounds
    return a <= c and d <= b


def _extent(span: list[Token], indices: list[int]) -> tuple[int, int]:
    return min(span[k][0] for k in indices), max(span[k][1] for k in indices)


def _shift(al: Alignment, by: int) -> Alignment:
    if not by:
        return al
    ops = tuple((kind, i, j + by if j >= 0 else j) for kind, i, j in al.ops)
    return Alignment(al.cost, al.start + by, al.end + by, ops)


def _seeds(found: list[Run]) -> list[Run]:
    """The cheapest run of each place (overlapping runs are one place)."""
    seeds: list[Run] = []
    for run in sorted(found, key=lambda r: (r.cost, -r.al.exact(), r.al.start, -r.al.end)):
        a, b = run.bounds
        if not any(a < d and c < b for c, d in (s.bounds for s in seeds)):
            seeds.append(run)
    return seeds


@dataclass(slots=True)
class ScopeWords:
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


def weigh(ft: FindTokens, text: str, lo: int, hi: int) -> tuple[list[float], ScopeWords]:
    """The weight of each find token in this scope, and what was learnt of its words."""
    scope = ScopeWords(text, lo, hi, {}, {})
    counts: dict[str, int] = {}
    for t, w in zip(ft.texts, ft.words, strict=True):
        if w and counted(t) and t not in counts:
            found = hits(t, text, lo, hi)
            counts[t] = len(found)
            if len(found) < COUNT_CAP:
                scope.rare[t] = found
    weights = [weight(t, w, counts.get(t, 0)) for t, w in zip(ft.texts, ft.words, strict=True)]
    return weights, scope
