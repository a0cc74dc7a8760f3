"""Where fuzzy Locate looks: the find's anchor words, their hits in the scope, the tokens
around those hits, and the windows of them that are worth aligning.

Every acceptable near match keeps some of the find's words, so it contains at least one of
a well-chosen few (pigeonhole). Two choices are complete, and the cheaper is taken:

- *exact anchors*: a near match keeps `keep` of the find's `W` words unchanged, so it
  contains one of any `W - keep + 1` word positions exactly;
- *typo anchors*: a near match loses (misses or renames) at most `floor(budget)` words, so
  it contains one of any `floor(budget) + 1` word positions exactly or with a typo. A word
  of `L` characters that may differ by `d` edits keeps one of `d + 1` pieces intact, so its
  typo hits are found by scanning for the pieces and checking the words around them.

Exact hits come from literal regex scans that stop after `cap + 1` hits, so one scan both
counts a word and finds it (a common word costs little: its scan stops early). Typo anchors
are tried only when the exact ones are not rare; their scan of the pieces counts and finds
at once too, and stops as soon as it is no cheaper than the exact anchors. Long words are
looked at first and the scanning stops once enough rare ones are known. Around the hits, a counting filter (`CountFilter`) keeps only the
windows that hold enough of the find's tokens for the alignment to accept a run in them.
Pure functions only.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from lspmux.locate.align import is_typo, typo_limit
from lspmux.locate.pattern import SOURCE_TOKEN
from lspmux.locate.weights import word_rx as _word_rx

MIN_PIECE = 3  # typo anchors need pieces at least this long to be worth a scan
CHEAP = 64  # hits few enough that looking for rarer anchors is not worth a scan
Token = tuple[int, int, str]  # (start, end, text)
_TWO_WORD = re.compile(r"\w\w")
_WORD = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class Anchors:
    """The words looked for, whether a typo of them counted, and their hits in the scope
    (sorted starts; more than the cap means the find is too unspecific for the scope)."""

    words: tuple[str, ...]
    typos: bool
    hits: tuple[int, ...]


def pieces(word: str) -> tuple[str, ...]:
    """`word` cut into `typo_limit + 1` pieces: any typo of it keeps one of them intact."""
    parts = typo_limit(len(word)) + 1
    size, extra = divmod(len(word), parts)
    out: list[str] = []
    at = 0
    for k in range(parts):
        step = size + (k < extra)
        out.append(word[at : at + step])
        at += step
    return tuple(out)


def _pick(
    positions: Counter[str], needed: int, estimate: Callable[[str], int]
) -> tuple[tuple[str, ...], int]:
    """Words covering `needed` positions, rare ones first, and their estimated hits. Long
    words are estimated first (they tend to be rare); once enough cheap ones cover the
    positions, the rest of the words are not scanned at all."""
    known: dict[str, int] = {}
    for word in sorted(positions, key=len, reverse=True):
        known[word] = estimate(word)
        cheap = [w for w in known if known[w] <= CHEAP]
        if sum(positions[w] for w in cheap) >= needed:
            break
    chosen: list[str] = []
    covered = total = 0
    for word in sorted(known, key=lambda w: (known[w], -len(w))):
        if covered >= needed:
            break
        chosen.append(word)
        covered += positions[word]
        total += known[word]
    return tuple(chosen), total


def find_anchors(
    words: list[str],
    keep: int,
    budget: float,
    text: str,
    lo: int,
    hi: int,
    cap: int,
    known: dict[str, list[int]] | None = None,
) -> Anchors:
    """The cheaper complete anchor set for a find with these `words`, of which a near match
    keeps at least `keep` unchanged and loses at most `floor(budget)`, with its hits (at
    most `cap + 1` of them). `known` holds the complete hits of words already scanned."""
    positions = Counter(words)
    scans: dict[str, list[int]] = dict(known or {})
    typo_scans: dict[str, tuple[int, set[int]]] = {}

    def exact(w: str) -> list[int]:
        if w not in scans:  # one scan gives both the estimate and the hits
            scans[w] = [m.start() for m in islice(_word_rx(w).finditer(text, lo, hi), cap + 1)]
        return scans[w]

    chosen, estimate = _pick(positions, len(words) - keep + 1, lambda w: len(exact(w)))
    lost = int(budget)
    if estimate <= CHEAP or lost + 1 >= len(words) - keep + 1:
        merged = sorted({h for w in chosen for h in exact(w)})
        return Anchors(chosen, False, tuple(merged[: cap + 1]))

    def typo(w: str) -> int:
        if not typo_limit(len(w)):
            return len(exact(w))
        if min(map(len, pieces(w))) < MIN_PIECE:  # pieces that short are everywhere
            return hi - lo
        limit = min(estimate, cap + 1)
        if w not in typo_scans:  # stops once it is no cheaper than the exact anchors
            typo_scans[w] = _typo_hits(w, text, lo, hi, limit)
        seen = typo_scans[w][0]
        return estimate if seen > limit else seen  # a cut-short scan never gets chosen

    by_typo, typo_estimate = _pick(positions, lost + 1, typo)
    if typo_estimate >= estimate:
        merged = sorted({h for w in chosen for h in exact(w)})
        return Anchors(chosen, False, tuple(merged[: cap + 1]))
    found: set[int] = set()
    for w in by_typo:
        found |= typo_scans[w][1] if w in typo_scans else {*exact(w)}
    return Anchors(by_typo, True, tuple(sorted(found)[: cap + 1]))


def _typo_hits(word: str, text: str, lo: int, hi: int, limit: int) -> tuple[int, set[int]]:
    """How often the pieces of `word` occur in text[lo:hi] (counting stops past `limit`), and
    the starts of the words there that are `word` or a typo of it."""
    found: set[int] = set()
    seen = 0
    for piece in pieces(word):
        at = text.find(piece, lo, hi)
        while at >= 0:
            seen += 1
            if seen > limit:
                return seen, found
            start = at
            while start > lo and _WORD_CHAR.match(text, start - 1):
                start -= 1
            m = _WORD.match(text, start, hi)
            end = m.end() if m is not None else at + 1
            if m is not None and (m.group() == word or is_typo(word, m.group())):
                found.add(start)
            at = text.find(piece, end, hi)
    return seen, found


def _back(text: str, pos: int, count: int, lo: int) -> int:
    """The start of the `count`-th token before offset `pos` (or `lo`)."""
    span = 8 * count + 16
    while True:
        a = max(lo, pos - span)
        starts = [m.start() for m in SOURCE_TOKEN.finditer(text, a, pos)]
        if a > lo and starts and starts[0] == a and _TWO_WORD.match(text, a - 1):
            starts.pop(0)  # a word cut in two by the window
        if len(starts) >= count:
            return starts[-count]
        if a == lo:
            return starts[0] if starts else pos
        span *= 4


def spans(found: list[int], text: str, lo: int, hi: int, reach: int) -> list[list[Token]]:
    """The tokens within `reach` tokens of every hit (sorted starts of tokens), as disjoint
    runs of consecutive tokens: (start, end, text). Each token is read once."""
    out: list[list[Token]] = []
    cur: list[Token] = []
    starts: list[int] = []
    for h in found:
        if cur and h < cur[-1][1]:
            k = bisect_left(starts, h)
        else:
            a = _back(text, h, reach, lo)
            if cur and a <= cur[-1][1]:
                a = cur[-1][1]  # the window reaches back into the current run: extend it
            elif cur:
                out.append(cur)
                cur, starts = [], []
            for m in SOURCE_TOKEN.finditer(text, a, h):
                cur.append((m.start(), m.end(), m.group()))
                starts.append(m.start())
            k = len(cur)
        more = k + reach + 1 - len(cur)
        if more > 0:
            at = cur[-1][1] if len(cur) > k else h
            for m in islice(SOURCE_TOKEN.finditer(text, at, hi), more):
                cur.append((m.start(), m.end(), m.group()))
                starts.append(m.start())
    if cur:
        out.append(cur)
    return out


@dataclass(frozen=True, slots=True)
class CountFilter:
    """What a run of text tokens must contain to be worth aligning (a counting filter): the
    find's tokens by text, which of them are words, and how many of each kind it has."""

    counts: dict[str, int]
    words: frozenset[str]
    word_total: int
    punct_total: int
    keep: int

    @staticmethod
    def of(find: tuple[str, ...], is_word: tuple[bool, ...], keep: int) -> CountFilter:
        words = frozenset(t for t, w in zip(find, is_word, strict=True) if w)
        return CountFilter(dict(Counter(find)), words, sum(is_word), len(find) - sum(is_word), keep)

    def ranges(self, texts: list[str], width: int, budget: float) -> list[tuple[int, int]]:
        """Token ranges [a, b) of `texts` covering every window of `width` tokens that holds
        at least `keep` of the find's words and enough of its tokens to cost at most
        `budget` (each token of the find not in the window costs at least 0.5: punctuation
        weighs 0.5, a word at least 1, of which a typo costs half). A run the alignment could accept lies inside one of them."""
        m = len(texts)
        width = min(width, m)
        counts, words = self.counts, self.words
        have: dict[str, int] = {}
        iw = ip = 0
        out: list[tuple[int, int]] = []
        for j, t in enumerate(texts):
            need = counts.get(t)
            if need:
                h = have.get(t, 0)
                if h < need:
                    if t in words:
                        iw += 1
                    else:
                        ip += 1
                have[t] = h + 1
            s = j - width + 1
            if s > 0:
                u = texts[s - 1]
                need = counts.get(u)
                if need:
                    h = have[u] - 1
                    have[u] = h
                    if h < need:
                        if u in words:
                            iw -= 1
                        else:
                            ip -= 1
            if s < 0 and j < m - 1:
                continue
            lower = 0.5 * (self.punct_total - ip) + 0.5 * (self.word_total - iw)
            if iw >= self.keep and lower <= budget:
                a = max(s, 0)
                if out and a <= out[-1][1]:
                    out[-1] = (out[-1][0], j + 1)
                else:
                    out.append((a, j + 1))
        return out
