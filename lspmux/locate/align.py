"""Token alignment for fuzzy Locate: what it costs to turn a find's tokens into a run of text
tokens, and the cheapest runs inside a token sequence.

Tokens are the exact matcher's: word tokens (`\\w+`) and single punctuation characters;
whitespace is not a token, so it never costs anything. Each find token is

- *matched* by the same text token (cost 0),
- *changed* into another token of the same kind (its weight; two words within a small edit
  distance of each other are a *typo*, half of it — unless the find's word still occurs in
  the scope),
- *missing* from the text (its weight),

and each text token the find does not have is *added* (`Costs.add`). Without weights every
token weighs 1 and an added token costs 1. `'` and `"` compare equal. A word never turns
into punctuation or back (that is a missing plus an added token).

`align` is Sellers' semi-global edit distance — the run may start and end anywhere among
the text tokens — with Ukkonen's cut-off: rows whose cost already exceeds the budget are not
computed, so a column costs about as many cells as the budget allows, not as the find has
tokens. `most_kept` keeps, per cell, every (kept weight, cost) pair that no other beats, so
that of all the runs within the budget the one keeping the most of the find can be picked.
`fused` tells when an alignment glues two words of one side into one word of the other
(`int a` against `inta`), which fuzzy matching never accepts. Pure functions only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

MATCH, TYPO, CHANGE, MISSING, ADDED = "match", "typo", "change", "missing", "added"
TYPO_COST = 0.5
_INF = float("inf")
_WORD_START = re.compile(r"\w")

Op = tuple[str, int, int]  # (kind, find token index or -1, text token index or -1)


def typo_limit(length: int) -> int:
    """The edit distance a word of `length` characters may differ by and still be a typo."""
    return 0 if length < 3 else 1 if length < 6 else 2 if length < 10 else 3


@lru_cache(maxsize=8192)
def is_typo(a: str, b: str) -> bool:
    """Whether words `a` (from the find) and `b` (from the text) differ by a typo: at most
    `typo_limit(len(a))` single-character insertions, deletions or substitutions."""
    limit = typo_limit(min(len(a), len(b)))
    if a == b or not limit or abs(len(a) - len(b)) > limit:
        return False
    if len(set(a) ^ set(b)) > 2 * limit:  # an edit removes at most one letter, adds one
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return False
        prev = cur
    return prev[-1] <= limit


def change_cost(find: str, find_word: bool, text: str, text_word: bool) -> float:
    """The cost of find token `find` standing where the text has `text`."""
    if find == text:
        return 0.0
    if find_word != text_word:
        return _INF
    return TYPO_COST if find_word and is_typo(find, text) else 1.0


@dataclass(frozen=True, slots=True)
class Alignment:
    """A run text[start:end] of text tokens and how the find's tokens map onto it."""

    cost: float
    start: int
    end: int
    ops: tuple[Op, ...]

    def exact(self) -> int:
        """How many find tokens are matched unchanged."""
        return sum(1 for kind, _, _ in self.ops if kind == MATCH)


def same_quote(token: str) -> str:
    """`"` and `'` are one quote for scoring: the token as the alignment compares it."""
    return "'" if token == '"' else token


class Costs:
    """What the alignment of one find costs: each find token's weight (what it costs to
    lose it: missing, or changed into another token; half of it for a typo), what an added
    text token costs, and the change costs against any text token, cached by its text.
    `present(word)` says whether a find word still occurs unchanged in the scope: such a
    word is never a typo of another (a word that is still there was not mistyped). Quotes
    compare equal (`same_quote`). Without weights every token weighs 1, as does an added
    token."""

    def __init__(
        self,
        find: Sequence[str],
        words: Sequence[bool],
        weights: Sequence[float] | None = None,
        present: Callable[[str], bool] | None = None,
        added: Callable[[str], float] | None = None,
    ) -> None:
        self.find = find
        self.words = words
        self.weights = list(weights) if weights is not None else [1.0] * len(find)
        self._same = [same_quote(f) for f in find]
        self._present = present
        self._added = added
        self._rows: dict[str, list[float]] = {}
        self._adds: dict[str, float] = {}

    def add(self, token: str) -> float:
        """The cost of text token `token` standing in the run with no find token for it."""
        cost = self._adds.get(token)
        if cost is None:
            cost = self._added(token) if self._added is not None else 1.0
            self._adds[token] = cost
        return cost

    def row(self, token: str) -> list[float]:
        row = self._rows.get(token)
        if row is None:
            word = is_word(token)
            same = same_quote(token)
            row = []
            for f, w, weight in zip(self._same, self.words, self.weights, strict=True):
                cost = change_cost(f, w, same, word)
                if cost == TYPO_COST and self._present is not None and self._present(f):
                    cost = 1.0
                row.append(cost * weight)
            self._rows[token] = row
        return row


def align(costs: Costs, text: Sequence[str], budget: float) -> list[Alignment]:
    """The runs of `text` that the find turns into for at most `budget`: one for each end
    token where the cost is a local minimum (neighbouring runs may still overlap; the
    caller picks among them)."""
    n = len(costs.find)
    weights = costs.weights
    first = [0.0]
    for w in weights:  # column 0: find tokens all missing
        if first[-1] + w > budget:
            break
        first.append(first[-1] + w)
    cols: list[list[float]] = [first]
    prev = first
    for token in text:
        row = costs.row(token)
        add = costs.add(token)
        cur = [0.0]
        limit = len(prev)  # rows past len(prev) in the previous column were over budget
        i = 1
        while i <= n:
            best = prev[i - 1] + row[i - 1] if i - 1 < limit else _INF
            if i < limit and prev[i] + add < best:
                best = prev[i] + add
            if cur[i - 1] + weights[i - 1] < best:
                best = cur[i - 1] + weights[i - 1]
            if best > budget:
                if i >= limit:
                    break
                best = _INF
            cur.append(best)
            i += 1
        while cur and cur[-1] == _INF:
            cur.pop()
        cols.append(cur)
        prev = cur
    ends = [_at(col, n) for col in cols]
    return [
        _trace(costs, cols, text, n, j)
        for j in range(1, len(cols))
        if ends[j] <= budget and ends[j] <= ends[j - 1] and ends[j] <= _at(ends, j + 1)
    ]


FRONTIER = 4  # (kept, cost) pairs kept per cell by `most_kept`


def most_kept(costs: Costs, text: Sequence[str], budget: float) -> list[Alignment]:
    """Every run of `text` the find turns into for at most `budget`, not only the cheapest
    per end token: for each end, the runs that are best in (weight of the find tokens kept
    unchanged, cost) — a costlier run that starts earlier and keeps the first token is one
    of them. Sorted best first: the most kept weight less half the cost (a token kept is
    worth what it weighs; each unit of cost spent to keep it counts against it by half),
    then the fewest find tokens lost (changed or missing: an argument added before a `)`
    shows as added rather than the `)` as missing), then the cheapest, then the earliest
    start and the latest end (a last token changed rather than left out). A cell keeps at most `FRONTIER` such pairs (the
    ones keeping the most)."""
    n = len(costs.find)
    weights = costs.weights
    # a cell: list of (kept, cost, op, index into the predecessor cell's list)
    start: list[tuple[float, float, str, int]] = [(0.0, 0.0, "", -1)]
    prev: list[list[tuple[float, float, str, int]]] = [start]
    for i in range(1, n + 1):
        kept, cost, _, _ = prev[-1][0] if prev[-1] else (0.0, _INF, "", -1)
        cost += weights[i - 1]
        prev.append([(kept, cost, MISSING, 0)] if cost <= budget else [])
    cols = [prev]
    for token in text:
        row = costs.row(token)
        add = costs.add(token)
        cur: list[list[tuple[float, float, str, int]]] = [start]
        for i in range(1, n + 1):
            options: list[tuple[float, float, str, int]] = []
            # among equal runs the find's tokens are matched as early as possible: walking
            # back from the end, missing and added tokens are taken first (but the first
            # find token is changed rather than left out of the run)
            change = row[i - 1]
            if i == 1:
                _diagonal(options, prev[0], change, weights[0], budget)
            for k, (kept, cost, _, _) in enumerate(cur[i - 1]):
                if cost + weights[i - 1] <= budget:
                    options.append((kept, cost + weights[i - 1], MISSING, k))
            for k, (kept, cost, _, _) in enumerate(prev[i]):
                if cost + add <= budget:
                    options.append((kept, cost + add, ADDED, k))
            if i > 1:
                _diagonal(options, prev[i - 1], change, weights[i - 1], budget)
            options.sort(key=lambda o: (-o[0], o[1]))
            front: list[tuple[float, float, str, int]] = []
            for o in options:
                if not front or o[1] < front[-1][1]:
                    front.append(o)
                    if len(front) == FRONTIER:
                        break
            cur.append(front)
        cols.append(cur)
        prev = cur
    found: list[Alignment] = []
    for j in range(1, len(cols)):
        for k, (_, cost, op, _) in enumerate(cols[j][n]):
            if op:
                found.append(_walk(cols, n, j, k, cost))
    gain = {id(a): sum(weights[i] for kind, i, _ in a.ops if kind == MATCH) for a in found}
    found.sort(key=lambda a: (a.cost / 2 - gain[id(a)], _losses(a), a.cost, a.start, -a.end))
    return found


def _losses(al: Alignment) -> int:
    return sum(1 for kind, _, _ in al.ops if kind not in (MATCH, ADDED))


def _diagonal(
    options: list[tuple[float, float, str, int]],
    cell: list[tuple[float, float, str, int]],
    change: float,
    weight: float,
    budget: float,
) -> None:
    """The options of a cell reached by matching or changing a find token."""
    if change == _INF:
        return
    kind = MATCH if change == 0 else TYPO if change < weight else CHANGE
    gain = weight if change == 0 else 0.0
    for k, (kept, cost, _, _) in enumerate(cell):
        if cost + change <= budget:
            options.append((kept + gain, cost + change, kind, k))


def _walk(
    cols: list[list[list[tuple[float, float, str, int]]]], n: int, end: int, k: int, cost: float
) -> Alignment:
    ops: list[Op] = []
    i, j = n, end
    while i > 0:
        _, _, op, back = cols[j][i][k]
        if op == MISSING:
            ops.append((MISSING, i - 1, -1))
            i -= 1
        elif op == ADDED:
            ops.append((ADDED, -1, j - 1))
            j -= 1
        else:
            ops.append((op, i - 1, j - 1))
            i, j = i - 1, j - 1
        k = back
    ops.reverse()
    return Alignment(cost, j, end, tuple(ops))


def _at(col: list[float], i: int) -> float:
    return col[i] if i < len(col) else _INF


def _trace(
    costs: Costs, cols: list[list[float]], text: Sequence[str], n: int, end: int
) -> Alignment:
    """The alignment ending at text token `end`. Among equally cheap ones it keeps the
    find's tokens matched as early as possible (missing and added tokens come last), except
    that the first find token is changed rather than left out of the run."""
    ops: list[Op] = []
    i, j = n, end
    total = cols[j][n]
    while i > 0:
        here = cols[j][i]
        change = costs.row(text[j - 1])[i - 1] if j > 0 else _INF
        diagonal = j > 0 and _at(cols[j - 1], i - 1) + change == here
        if i > 1 or not diagonal:
            if _at(cols[j], i - 1) + costs.weights[i - 1] == here:
                ops.append((MISSING, i - 1, -1))
                i -= 1
                continue
            if j > 0 and _at(cols[j - 1], i) + costs.add(text[j - 1]) == here:
                ops.append((ADDED, -1, j - 1))
                j -= 1
                continue
        kind = MATCH if change == 0 else TYPO if change < costs.weights[i - 1] else CHANGE
        ops.append((kind, i - 1, j - 1))
        i, j = i - 1, j - 1
    ops.reverse()
    return Alignment(total, j, end, tuple(ops))


def fused(find: Sequence[str], words: Sequence[bool], text: Sequence[str], al: Alignment) -> bool:
    """Whether `al` glues two words of one side into one word of the other: a text word that
    is two adjacent find words written together (`int a` → `inta`), or the reverse, where
    neither of the two is matched unchanged, or a word changed into one that is it glued to
    a neighbour (`inta` → the `a` of `int a`)."""
    kept_find = {i for kind, i, _ in al.ops if kind == MATCH}
    kept_text = {j for kind, _, j in al.ops if kind == MATCH}
    loose_text = {text[j] for j in range(al.start, al.end) if j not in kept_text}
    loose_find = {find[i] for i in range(len(find)) if i not in kept_find and words[i]}
    for i in range(len(find) - 1):
        pair = words[i] and words[i + 1] and not {i, i + 1} & kept_find
        if pair and find[i] + find[i + 1] in loose_text:
            return True
    for j in range(al.start, al.end - 1):
        a, b = text[j], text[j + 1]
        if is_word(a) and is_word(b) and not {j, j + 1} & kept_text and a + b in loose_find:
            return True
    return any(_glued(find, words, text, i, j) for kind, i, j in al.ops if kind in (TYPO, CHANGE))


def _glued(find: Sequence[str], words: Sequence[bool], text: Sequence[str], i: int, j: int) -> bool:
    """Whether find word i, changed into text word j, is it glued to a neighbour of it (on
    either side, inside the run or not) — or the reverse."""
    f, t = find[i], text[j]
    return (
        (j > 0 and is_word(text[j - 1]) and text[j - 1] + t == f)
        or (j + 1 < len(text) and is_word(text[j + 1]) and t + text[j + 1] == f)
        or (i > 0 and words[i - 1] and find[i - 1] + f == t)
        or (i + 1 < len(find) and words[i + 1] and f + find[i + 1] == t)
    )


def is_word(token: str) -> bool:
    """Whether a token is a word token (`\\w+`) rather than punctuation."""
    return _WORD_START.match(token) is not None
