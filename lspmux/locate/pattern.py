"""The token-aware matcher: a find pattern compiled to a regular expression, and the search.

A pattern is split into word tokens (`\\w+`, Unicode), single punctuation characters and
whitespace. Between two tokens written without whitespace nothing may stand when both are
words (identifiers are atomic), any whitespace otherwise; whitespace in the pattern needs at
least one whitespace character between two words and allows any amount elsewhere. A word at
either end of the pattern must sit at a word boundary (the *strict* regex); the *loose* regex
drops that rule and is only used when the strict one finds nothing (a partial match).
Markers become empty groups: a marker sticks to the start of the token right after it, or to
the end of the token before it when whitespace or the end of the pattern follows it.

Compiled patterns are cached by their source, so a repeated find costs one regex scan over
its scope. Matches are counted at every start position (overlapping), in document order.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from lspmux.locate.markers import Want, split_markers
from lspmux.text import line_end

_TOKEN = re.compile(r"(\w+)|(\s+)|(.)", re.DOTALL)
SOURCE_TOKEN = re.compile(r"\w+|[^\w\s]")
_SPACE = re.compile(r"\s+")

WORD, SPACE, PUNCT, MARK = "w", "s", "p", "m"


def tokenize(s: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: WORD, SPACE or PUNCT (one character each)."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(s):
        kind = WORD if m.group(1) else SPACE if m.group(2) else PUNCT
        out.append((kind, m.group()))
    return out


@dataclass(frozen=True, slots=True)
class CompiledFind:
    """A find pattern ready to search. `strict`/`loose` are None for a marker-only find."""

    source: str
    strict: re.Pattern[str] | None
    loose: re.Pattern[str] | None
    marks: int  # marker groups in the regexes: 0, 1 (a position) or 2 (a range)
    lookalikes: bool  # marker-looking text stayed literal
    words: tuple[str, ...]  # the word tokens, for "closest line" hints
    plain: str  # the tokens with single spaces, markers removed (for hints)


def find_items(parts: tuple[str, ...]) -> list[tuple[str, str]]:
    """The tokens of a find cut at its markers: (kind, text) with MARK items between the
    parts, whitespace at either end dropped."""
    items: list[tuple[str, str]] = []
    for i, part in enumerate(parts):
        if i:
            items.append((MARK, ""))
        items.extend(tokenize(part))
    while items and items[0][0] == SPACE:
        items.pop(0)
    while items and items[-1][0] == SPACE:
        items.pop()
    return items


def sticks_forward(items: list[tuple[str, str]], i: int, marks: int) -> bool:
    """Whether the marker at items[i] sticks to the start of the next token (else to the end
    of the previous one). A range's markers hug the tokens between them."""
    if marks == 2:
        a, b = (j for j, (k, _) in enumerate(items) if k == MARK)
        if any(k in (WORD, PUNCT) for k, _ in items[a:b]):
            return i == a
    nxt = next((k for k, _ in items[i + 1 :] if k != MARK), None)
    return nxt in (WORD, PUNCT)


def _regex(items: list[tuple[str, str]], strict: bool, marks: int) -> str:
    out: list[str] = []
    prev: str | None = None  # kind of the last token emitted
    space = False  # whitespace since the last token
    before: list[str] = []  # marker groups sticking to the end of the previous token
    after: list[str] = []  # marker groups sticking to the start of the next token
    for i, (kind, text) in enumerate(items):
        if kind == SPACE:
            space = True
            continue
        if kind == MARK:
            (after if sticks_forward(items, i, marks) else before).append("()")
            continue
        if prev is None:
            out.extend(before + after)
            out.append(re.escape(text))
            if strict and kind == WORD:
                # The boundary check after the literal keeps the regex's literal-prefix scan.
                out.append(rf"(?<!\w[\s\S]{{{len(text)}}})")
        else:
            out.extend(before)
            both_words = prev == WORD and kind == WORD
            out.append(
                (r"\s+" if both_words else r"\s*") if space else ("" if both_words else r"\s*")
            )
            out.extend(after)
            out.append(re.escape(text))
        before, after, space, prev = [], [], False, kind
    out.extend(before + after)
    if strict and prev == WORD:
        out.append(r"(?!\w)")
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_find(find: str, marker: str | None = None, want: Want = "position") -> CompiledFind:
    """Compile `find` (markers detected, or cut at the explicit `marker`)."""
    marked = split_markers(find, want, marker)
    items = find_items(marked.parts)
    tokens = [(k, t) for k, t in items if k in (WORD, PUNCT)]
    plain = _SPACE.sub(" ", "".join(marked.parts)).strip()
    words = tuple(t for k, t in tokens if k == WORD)
    marks = len(marked.parts) - 1
    if not tokens:
        return CompiledFind(find, None, None, marks, marked.lookalikes, words, plain)
    return CompiledFind(
        find,
        re.compile(_regex(items, strict=True, marks=marks)),
        re.compile(_regex(items, strict=False, marks=marks)),
        marks,
        marked.lookalikes,
        words,
        plain,
    )


@dataclass(frozen=True, slots=True)
class Hits:
    """The outcome of a search: the match picked by `index` (None when there are fewer),
    how many matches there are, and whether they lie inside identifiers."""

    match: re.Match[str] | None
    count: int
    partial: bool


def _scan(
    rx: re.Pattern[str], text: str, lo: int, hi: int, index: int
) -> tuple[re.Match[str] | None, int]:
    chosen: re.Match[str] | None = None
    count = 0
    search = rx.search
    m = search(text, lo, hi)
    while m is not None:
        if count == index:
            chosen = m
        count += 1
        m = search(text, m.start() + 1, hi)
    return chosen, count


def search(cf: CompiledFind, text: str, lo: int, hi: int, index: int = 0) -> Hits:
    """Matches of `cf` within text[lo:hi]; word-boundary matches first, else partial ones."""
    if cf.strict is None or cf.loose is None:
        raise ValueError("a marker-only find has no matches to search")
    chosen, count = _scan(cf.strict, text, lo, hi, index)
    if count:
        return Hits(chosen, count, False)
    chosen, count = _scan(cf.loose, text, lo, hi, index)
    return Hits(chosen, count, bool(count))


def closest_line(cf: CompiledFind, text: str, starts: list[int], lo: int, hi: int) -> int | None:
    """The line (0-based) in text[lo:hi] that looks most like the find, for error hints."""
    first = bisect_right(starts, lo) - 1
    last = bisect_right(starts, max(lo, hi - 1)) - 1
    span = cf.source.count("\n") + 1
    if last - first >= 2000 and cf.words:
        words = sorted(set(cf.words), key=len, reverse=True)[:8]
        rx = re.compile("|".join(map(re.escape, words)), re.IGNORECASE)
        hit: dict[int, None] = {}
        for m in rx.finditer(text, lo, hi):
            hit[bisect_right(starts, m.start()) - 1] = None
            if len(hit) >= 2000:
                break
        candidates = list(hit) or list(range(first, first + 2000))
    else:
        candidates = list(range(first, min(last, first + 1999) + 1))
    target = cf.plain
    best, best_line = -1.0, None
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    for line in candidates:
        a = max(starts[line], lo)
        b = min(line_end(text, starts, min(line + span - 1, len(starts) - 1)), hi)
        window = _SPACE.sub(" ", text[a:b]).strip()
        if not window:
            continue
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        ratio = matcher.ratio()
        if ratio > best:
            best, best_line = ratio, line
    return best_line
