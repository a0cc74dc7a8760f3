"""Token alignment for fuzzy Locate: what it costs to turn a find's tokens into a run of text
tokens, and the cheapest runs inside a token sequence.

Tokens are the exact matcher's: word tokens (`\\w+`) and single punctuation characters;
whitespace is not a token, so it never costs anything. Each find token is

- *matched* by the same text token (cost 0),
- *changed* into another token of the same kind (cost 1; two words within a small edit
  distance of each other are a *typo*, cost 0.5),
- *missing* from the text (cost 1),

and each text token the find does not have is *added* (cost 1). A word never turns into
punctuation or back (that is a missing plus an added token).

`align` is Sellers' semi-global edit distance — the run may start and end anywhere among
the text tokens — with Ukkonen's cut-off: rows whose cost already exceeds the budget are not
computed, so a column costs about as many cells as the budget allows, not as the find has
tokens. `fused` tells when an alignment glues two words of one side into one word of the
other (`int a` against `inta`), which fuzzy matching never accepts. Pure functions only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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


class Costs:
    """Change costs of one find against any text token, cached by the token's text."""

    def __init__(self, find: Sequence[str], words: Sequence[bool]) -> None:
        self.find = find
        self.words = words
        self._rows: dict[str, list[float]] = {}

    def row(self, token: str) -> list[float]:
        row = self._rows.get(token)
        if row is None:
            word = is_word(token)
            row = [
                change_cost(f, w, token, word) for f, w in zip(self.find, self.words, strict=True)
            ]
            self._rows[token] = row
        return row


def align(costs: Costs, text: Sequence[str], budget: float) -> list[Alignment]:
    """The runs of `text` that the find turns into for at most `budget`: one for each end
    token where the cost is a local minimum (neighbouring runs may still overlap; the
    caller picks among them)."""
    n = len(costs.find)
    cap = int(budget)
    first = [float(i) for i in range(min(n, cap) + 1)]  # column 0: find tokens all missing
    cols: list[list[float]] = [first]
    prev = first
    for token in text:
        row = costs.row(token)
        cur = [0.0]
        limit = len(prev)  # rows past len(prev) in the previous column were over budget
        i = 1
        while i <= n:
            best = prev[i - 1] + row[i - 1] if i - 1 < limit else _INF
            if i < limit and prev[i] + 1 < best:
                best = prev[i] + 1
            if cur[i - 1] + 1 < best:
                best = cur[i - 1] + 1
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
            if _at(cols[j], i - 1) + 1 == here:
                ops.append((MISSING, i - 1, -1))
                i -= 1
                continue
            if j > 0 and _at(cols[j - 1], i) + 1 == here:
                ops.append((ADDED, -1, j - 1))
                j -= 1
                continue
        kind = MATCH if change == 0 else TYPO if change == TYPO_COST else CHANGE
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
