"""Moves inside brackets for fuzzy Locate: an argument or list item that changed places.

A token alignment cannot express a swap: `f(a=1, b=2)` against `f(b=2, a=1)` aligns slot by
slot, so a marker on `a`'s value would land on `b`'s. Here the items of a bracket (split at
its top-level commas) get an *identity* — `key` for a keyword argument or a dict entry
(`a=1`, `'a': 1`), else the item's tokens — and

- `permute` puts the text's items of one bracket back in the find's order (the items whose
  identity the find has, into the slots those items occupy), so the alignment can be
  recomputed over the reordered tokens: each token keeps its offsets, so the marker lands on
  the moved item itself;
- `lands_on_neighbour` tells when a marker that sits in one item of the find landed in a
  text item that is *another* item of the find (the move could not be modelled: the place
  is refused rather than the neighbour reported).

Pure functions over token texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lspmux.locate.align import is_word, same_quote

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {v: k for k, v in OPEN.items()}

Identity = tuple[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Bracket:
    """A bracket's open and close token indices and its items as [start, end) token ranges
    (the commas between them excluded)."""

    open: int
    close: int
    items: tuple[tuple[int, int], ...]


def bracket_at(texts: Sequence[str], open_index: int) -> Bracket | None:
    """The bracket opened by texts[open_index] and its top-level items, or None when it is
    not an opening bracket or never closes within `texts`."""
    first = texts[open_index]
    if first not in OPEN:
        return None
    depth = 0
    items: list[tuple[int, int]] = []
    start = open_index + 1
    for j in range(open_index + 1, len(texts)):
        t = texts[j]
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            if depth == 0:
                if t != OPEN[first]:
                    return None
                if j > start:
                    items.append((start, j))
                return Bracket(open_index, j, tuple(items))
            depth -= 1
        elif t == "," and depth == 0:
            items.append((start, j))
            start = j + 1
    return None


def brackets(texts: Sequence[str]) -> list[Bracket]:
    """Every bracket of `texts` with two items or more, innermost first."""
    out = [b for i in range(len(texts)) if (b := bracket_at(texts, i)) and len(b.items) > 1]
    return sorted(out, key=lambda b: b.close - b.open)


def identity(texts: Sequence[str]) -> Identity:
    """What names an item: its key for `key=value` / `key: value`, else its tokens."""
    if len(texts) >= 3 and is_word(texts[0]) and texts[1] in ("=", ":") and texts[2] != "=":
        return ("key", (texts[0],))
    if len(texts) >= 4 and texts[0] == "." and is_word(texts[1]) and texts[2] == "=":
        return ("key", (texts[1],))  # a C designated initializer
    if len(texts) >= 5 and texts[0] in ("'", '"') and texts[2] == texts[0] and texts[3] == ":":
        return ("key", (texts[1],))
    return ("seq", tuple(same_quote(t) for t in texts))


def item_of(b: Bracket, index: int) -> int | None:
    """Which item of `b` holds token `index` (None outside the items)."""
    return next((k for k, (a, e) in enumerate(b.items) if a <= index < e), None)


def _stay(seq: list[int]) -> set[int]:
    """Positions in `seq` of a longest increasing subsequence (the items that stay)."""
    tails: list[int] = []  # positions in seq
    back: list[int] = []
    for k, x in enumerate(seq):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if seq[tails[mid]] < x:
                lo = mid + 1
            else:
                hi = mid
        back.append(tails[lo - 1] if lo else -1)
        if lo == len(tails):
            tails.append(k)
        else:
            tails[lo] = k
    out: set[int] = set()
    k = tails[-1] if tails else -1
    while k >= 0:
        out.add(k)
        k = back[k]
    return out


def permute(
    find: Sequence[str], fb: Bracket, texts: Sequence[str], tb: Bracket
) -> tuple[list[int], list[tuple[int, int]]] | None:
    """A reordering of the token indices of `texts` that puts the items of text bracket `tb`
    in the order of the find's bracket `fb` (items the find does not have stay in their
    slots), and the items that moved (their token ranges in `texts`: the fewest items that
    leave the others in order); None when nothing moved."""
    wanted = [identity(find[a:e]) for a, e in fb.items]
    used: set[int] = set()
    partner: list[int | None] = []
    for a, e in tb.items:
        ident = identity(texts[a:e])
        k = next((k for k, w in enumerate(wanted) if w == ident and k not in used), None)
        if k is not None:
            used.add(k)
        partner.append(k)
    slots = [s for s, k in enumerate(partner) if k is not None]
    stay = _stay([partner[s] or 0 for s in slots])
    moved = [tb.items[s] for n, s in enumerate(slots) if n not in stay]
    if not moved:
        return None
    by_find = sorted(slots, key=lambda s: partner[s] or 0)
    order = list(range(len(tb.items)))
    for slot, item in zip(slots, by_find, strict=True):
        order[slot] = item
    out = list(range(tb.open + 1))
    for slot, item in enumerate(order):
        a, e = tb.items[item]
        out += range(a, e)
        sep_end = tb.items[slot + 1][0] if slot + 1 < len(tb.items) else tb.close
        out += range(tb.items[slot][1], sep_end)  # the comma (and nothing else) after the slot
    out += range(tb.close, len(texts))
    return out, moved


def lands_on_neighbour(
    find: Sequence[str], fb: Bracket, find_index: int, texts: Sequence[str], tb: Bracket, j: int
) -> bool:
    """Whether find token `find_index`, in an item of the find's bracket `fb`, landed on
    text token `j` in an item of text bracket `tb` that is another item of the find."""
    fk = item_of(fb, find_index)
    tk = item_of(tb, j)
    if fk is None or tk is None:
        return False
    mine = identity(find[slice(*fb.items[fk])])
    there = identity(texts[slice(*tb.items[tk])])
    if there == mine:
        return False
    others = {identity(find[slice(*r)]) for k, r in enumerate(fb.items) if k != fk}
    return there in others
