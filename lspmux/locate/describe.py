"""Locate in reverse: the shortest spec that resolves back to a given offset.

The scope is the innermost enclosing symbol whose path finds that very symbol (or the whole
file when there are no symbols); at the symbol's name the scope alone is enough. Otherwise
the find is a window of source tokens around the offset with a marker at the offset, grown
one token at a time until it matches exactly once in the scope; among the windows of that
size the shortest text wins. When no window up to `MAX_TOKENS` is unique (or, without
symbols, when a line scope gives a shorter description) the scope becomes the offset's line.
Every candidate is checked by resolving it, so a description always resolves back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lspmux.errors import InvalidParams, RequestFailed
from lspmux.locate.engine import resolve_scope, resolve_spec, starts_of
from lspmux.locate.markers import MAX_LEVEL, deepest_level, marker
from lspmux.locate.pattern import SOURCE_TOKEN
from lspmux.locate.spec import Scope, Spec
from lspmux.locate.symbols import enclosing, find_path, tree
from lspmux.locate.syntax import format_locate, symbol_path_text
from lspmux.text import Encoding, offset_to_position

MAX_TOKENS = 8
_REACH = 2000  # characters of context either side of the offset that windows may use
_PLACE = "\x00"  # where the marker goes while a find is assembled
_NON_BLANK = re.compile(r"\S")
_TWO_WORD_CHARS = re.compile(r"\w\w")


@dataclass(frozen=True, slots=True)
class Description:
    """A spec that resolves to `offset`. `exact` is False when the asked offset lies in
    whitespace that no spec can name; `offset` is then the nearest place that can be named."""

    spec: Spec
    offset: int
    exact: bool = True


@dataclass(frozen=True, slots=True)
class _Tok:
    start: int
    end: int


def _anchor(text: str, offset: int) -> tuple[int, bool]:
    """The offset a spec can name (the asked one, or the nearest non-blank character)."""
    offset = max(0, min(offset, len(text)))
    if offset < len(text) and not text[offset].isspace():
        return offset, True
    if offset > 0 and not text[offset - 1].isspace():
        return offset, True  # the end of the token before
    m = _NON_BLANK.search(text, offset)
    if m is not None:
        return m.start(), False
    back = len(text.rstrip())
    return back, False


def _tokens(text: str, lo: int, hi: int, offset: int) -> list[_Tok]:
    a, b = max(lo, offset - _REACH), min(hi, offset + _REACH)
    toks = [_Tok(m.start(), m.end()) for m in SOURCE_TOKEN.finditer(text, a, b)]
    if toks and a > lo and toks[0].start == a and _TWO_WORD_CHARS.fullmatch(text, a - 1, a + 1):
        toks.pop(0)  # cut in the middle of a word
    if toks and b < hi and toks[-1].end == b and _TWO_WORD_CHARS.fullmatch(text, b - 1, b + 1):
        toks.pop()
    return toks


def _find_text(text: str, toks: list[_Tok], i: int, j: int, offset: int) -> list[tuple[bool, str]]:
    """The finds for tokens i..j with a marker at `offset` (and without one when the window
    starts at the offset), whitespace runs written as one space."""
    pieces: list[str] = []
    for k in range(i, j + 1):
        tok = toks[k]
        if k > i:
            pieces.append(" " if tok.start > toks[k - 1].end else "")
        s = text[tok.start : tok.end]
        if tok.start <= offset <= tok.end and _PLACE not in pieces:
            if offset == tok.end and k < j and toks[k + 1].start == offset:
                pieces.append(s)  # the marker goes before the next token instead
                continue
            cut = offset - tok.start
            pieces.extend([s[:cut], _PLACE, s[cut:]])
        else:
            pieces.append(s)
    raw = "".join(pieces)
    if _PLACE not in raw:
        return []
    out: list[tuple[bool, str]] = []
    before, _, after = raw.partition(_PLACE)
    literal = before + after
    level = deepest_level(literal) + 1
    if level <= MAX_LEVEL:
        mark = marker(level)
        if after.startswith(">"):
            # `<|>>` is no marker; stick it to the end of the token before instead
            if before and not before[-1].isspace() and toks[i].start < offset:
                out.append(
                    (True, before + (" " if before.endswith("<") else "") + mark + " " + after)
                )
        else:
            out.append((True, before + (" " if before.endswith("<") else "") + mark + after))
    if not before and toks[i].start == offset:
        out.append((False, after))  # no marker: a match starts at the offset
    return out


def _verify(
    text: str,
    starts: list[int],
    symbols: list[dict[str, Any]] | None,
    spec: Spec,
    offset: int,
    encoding: Encoding,
    unique: bool,
) -> bool:
    try:
        res = resolve_spec(text, starts, symbols, spec, encoding)
    except (InvalidParams, RequestFailed):
        return False
    if res.start != offset or format_locate("f", spec) is None:
        return False
    m = res.match
    return m is None or (not m.partial and (m.count == 1 or not unique))


def _best_find(
    text: str,
    starts: list[int],
    symbols: list[dict[str, Any]] | None,
    scope: Scope,
    offset: int,
    encoding: Encoding,
    *,
    unique: bool,
    from_start: bool = False,
) -> Spec | None:
    """The shortest verified find in `scope` (windows of tokens around `offset`, or windows
    from the scope's first token when `from_start`)."""
    span = resolve_scope(text, starts, symbols, scope, encoding)
    toks = _tokens(text, span.start, span.end, offset)
    t = next((k for k, tok in enumerate(toks) if tok.start <= offset < tok.end), None)
    if t is None:
        t = next((k for k, tok in enumerate(toks) if tok.end == offset), None)
    if t is None:
        return None
    limit = len(toks) if from_start else MAX_TOKENS
    for n in range(1, limit + 1):
        found: list[tuple[bool, int, str]] = []
        for i in [0] if from_start else range(max(0, t - n + 1), t + 1):
            j = i + n - 1
            if j >= len(toks) or j < t:
                continue
            for marked, find in _find_text(text, toks, i, j, offset):
                spec = Spec(scope, find)
                if _verify(text, starts, symbols, spec, offset, encoding, unique):
                    found.append((not marked, len(find), find))
        if found:
            return Spec(scope, min(found)[2])
    return None


def describe_offset(
    text: str,
    starts: list[int] | None,
    symbols: list[dict[str, Any]] | None,
    offset: int,
    encoding: Encoding = "utf-16",
) -> Description:
    """The shortest spec that `resolve_spec` turns back into `offset`."""
    if starts is None:
        starts = starts_of(text)
    target, exact = _anchor(text, offset)
    scope = Scope()
    if symbols:
        roots = tree(symbols, text, starts, encoding)
        chain = enclosing(roots, offset_to_position(text, starts, target, encoding))
        for k in range(len(chain), 0, -1):
            path = tuple(s.name for s in chain[:k])
            found, _ = find_path(roots, path)
            if (
                symbol_path_text(path) is not None
                and found is not None
                and found[-1] is chain[k - 1]
            ):
                scope = Scope("symbol", symbol_path=path)
                break
    specs: list[Spec] = []
    if (
        scope.kind == "symbol"
        and resolve_scope(text, starts, symbols, scope, encoding).natural == target
    ):
        return Description(Spec(scope), target, exact)
    best = _best_find(text, starts, symbols, scope, target, encoding, unique=True)
    if best is not None:
        if scope.kind == "symbol":
            return Description(best, target, exact)
        specs.append(best)
    line, _ = offset_to_position(text, starts, target, encoding)
    lines = Scope("lines", lines=(line + 1, line + 1))
    if resolve_scope(text, starts, symbols, lines, encoding).natural == target:
        specs.append(Spec(lines))
    else:
        for unique in (True, False):
            spec = _best_find(
                text, starts, symbols, lines, target, encoding, unique=unique, from_start=not unique
            )
            if spec is not None:
                specs.append(spec)
                break
    if specs:
        return Description(
            min(specs, key=lambda s: len(format_locate("f", s) or "")), target, exact
        )
    span = resolve_scope(text, starts, symbols, lines, encoding)
    return Description(Spec(lines), span.natural, False)
