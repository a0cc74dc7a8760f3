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
from typing import Literal

from lspmux.locate.align import MATCH
from lspmux.locate.anchors import Anchors, find_anchors, spans
from lspmux.locate.candidates import Candidate, Edit, FindTokens, Landing, find_tokens
from lspmux.locate.places import MOVE_COST, Run, Search, inside, weigh
from lspmux.locate.spec import DEFAULT_THRESHOLD
from lspmux.locate.weights import ADDED_PUNCT

__all__ = [
    "MOVE_COST",
    "Candidate",
    "Edit",
    "FindTokens",
    "FuzzyOutcome",
    "Landing",
    "find_tokens",
    "fuzzy_search",
]

REPORT_BELOW = 0.2  # when nothing is accepted, candidates down to threshold - 0.2 are shown
MAX_HITS = 500  # anchor hits beyond which a fuzzy find is refused as too unspecific
NEAR_HITS = 100  # anchor hits up to which near matches below the threshold are listed
SHOWN = 5
MARGIN = 0.1  # a best near match needs a lead of at least this over the runner-up elsewhere
SCATTERED = 0.85  # the least score of a near match whose edits are scattered (`Search.scattered`)
_EPS = 1e-9


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
    weights, scope = weigh(ft, text, lo, hi)
    search = Search(ft, weights, scope)
    total = search.total
    words = [t for t, w in zip(ft.texts, ft.words, strict=True) if w]
    n = len(ft.texts)

    def places(budget: float) -> tuple[Anchors, list[Run] | None]:
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
    reported = search.report(passing[0], accept, text)
    a, b = reported.bounds
    # runs inside the reported one are the same place (two halves of an edited statement)
    others = tuple(search.candidate(p) for p in found[1:] if not inside(p, a, b))
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
