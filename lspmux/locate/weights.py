"""How much each token of a fuzzy find weighs: what losing it costs.

A token weighs as much as it tells where the find is. Punctuation weighs `PUNCT`; a keyword
of Python or C (`return`, `int`, `self`, …) or a number weighs 1; any other word — an
identifier — weighs `1 + 1/count` rounded to eighths, where `count` is how often it occurs
as a whole word in the scope (counted up to `COUNT_CAP`): an identifier found once weighs 2, one found twice 1.5, a common one about 1; a long identifier
(8 characters or more) weighs 0.5 more. An
identifier that no longer occurs in the scope tells nothing about where the find is and
weighs 1. Weights are multiples of 1/8, so sums of them are exact.
"""

from __future__ import annotations

import keyword
import re
from functools import lru_cache
from itertools import islice

PUNCT = 0.5
ADDED_WORD, ADDED_PUNCT = 1.0, 0.5  # what a text token the find does not have costs
COUNT_CAP = 17
LONG, LONG_BONUS = (
    8,
    0.5,
)  # an identifier this long or longer says more: it weighs this more  # occurrences beyond which an identifier weighs 1

_C = (
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false NULL nullptr define include ifdef ifndef "
    "endif undef"
)
KEYWORDS = frozenset(
    {*keyword.kwlist, *keyword.softkwlist, "self", "cls", "print", "len", "str", *_C.split()}
)


@lru_cache(maxsize=256)
def word_rx(word: str) -> re.Pattern[str]:
    """A whole-word literal `word`."""
    # The boundary check after the literal keeps the regex's fast literal scan.
    return re.compile(rf"{re.escape(word)}(?<!\w[\s\S]{{{len(word)}}})(?!\w)")


def hits(word: str, text: str, lo: int, hi: int, cap: int = COUNT_CAP) -> list[int]:
    """The starts of `word` as a whole word in text[lo:hi]: all of them when fewer than
    `cap`, else the first `cap`. Found with `str.find` (one fast scan for the rare words
    most of a find is made of); a word that is often part of longer words is left to the
    regex."""
    out: list[int] = []
    size = len(word)
    seen = 0
    at = text.find(word, lo, hi)
    while at >= 0 and len(out) < cap:
        seen += 1
        if seen > 4 * cap:
            return [m.start() for m in islice(word_rx(word).finditer(text, lo, hi), cap)]
        end = at + size
        if (at == 0 or not _is_word_char(text[at - 1])) and (
            end >= hi or not _is_word_char(text[end])
        ):
            out.append(at)
        at = text.find(word, at + 1, hi)
    return out


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def counted(token: str) -> bool:
    """Whether a word's weight depends on how often it occurs (an identifier)."""
    return token not in KEYWORDS and not token[0].isdigit()


def weight(token: str, word: bool, count: int) -> float:
    """The weight of a find token: `word` says it is a word, `count` how often it occurs in
    the scope (words only)."""
    if not word:
        return PUNCT
    if not counted(token) or count <= 0:
        return 1.0
    return 1.0 + round(8 / count) / 8 + (LONG_BONUS if len(token) >= LONG else 0.0)


def added(token: str) -> float:
    """What a text token that the find does not have costs in a run."""
    return ADDED_WORD if re.match(r"\w", token) else ADDED_PUNCT
