"""Lines of text for position conversion, and the converter of single positions.

Converting a position between encodings needs only the text of its line. A *text source*
`text_of(uri)` gives, per document, either a `str` or any object with `line(n) -> str | None`
(the line without its break; None past the end) — so a document kept as a rope or a list of
lines serves as it is —, or an object with `text` (and `starts`, its cached line starts, as
`session.documents.Document` has). A `str` is wrapped in `TextLines`, which computes its line
starts once.
`Converter` memoises the source per URI for one message, converts positions and ranges, and
leaves (and logs, once per URI) a position whose document cannot be read.
`with_disk(text_of)` adds the fallback to the file on disk, read lazily.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lspmux.text import Encoding, line_end, line_starts

log = logging.getLogger(__name__)


@runtime_checkable
class Lines(Protocol):
    def line(self, n: int) -> str | None: ...


class Texted(Protocol):
    """A document with its whole text (`session.documents.Document`)."""

    text: str


Source = Lines | Texted | str | None
TextOf = Callable[[str], Source]


class TextLines:
    """`Lines` over a str; line starts computed on first use."""

    __slots__ = ("_starts", "text")

    def __init__(self, text: str, starts: list[int] | None = None) -> None:
        self.text = text
        self._starts = starts

    def line(self, n: int) -> str | None:
        if self._starts is None:
            self._starts = line_starts(self.text)
        if n < 0 or n >= len(self._starts):
            return None
        return self.text[self._starts[n] : line_end(self.text, self._starts, n)]


def as_lines(value: Source) -> Lines | None:
    if value is None or isinstance(value, Lines):
        return value
    if isinstance(value, str):
        return TextLines(value)
    text = getattr(value, "text", None)  # e.g. a session Document: its cached line starts serve
    if not isinstance(text, str):
        return None
    starts = getattr(value, "starts", None)
    return TextLines(text, starts if isinstance(starts, list) else None)


def full_text(lines: Lines) -> str:
    """The whole text of `lines` (line breaks as "\\n": positions do not depend on them)."""
    text = getattr(lines, "text", None)
    if isinstance(text, str):
        return text
    out: list[str] = []
    n = 0
    while (line := lines.line(n)) is not None:
        out.append(line)
        n += 1
    return "\n".join(out)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _width(ch: str, encoding: Encoding) -> int:
    if encoding == "utf-32":
        return 1
    o = ord(ch)
    if encoding == "utf-16":
        return 2 if o > 0xFFFF else 1
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


class LineMap:
    """Columns of one line from `src` to `dst` units. Only the non-ASCII characters matter:
    between two of them columns move by a constant, so the map keeps, per non-ASCII character,
    where it starts in both encodings and its widths, and a column is found by bisection. This
    runs for every position of large results (semantic tokens of a whole file)."""

    __slots__ = ("_done", "_dst_starts", "_dst_total", "_src_starts", "_src_total", "_widths")

    def __init__(self, text: str, src: Encoding, dst: Encoding) -> None:
        src_at = dst_at = last = 0
        self._src_starts: list[int] = []
        self._dst_starts: list[int] = []
        self._widths: list[tuple[int, int]] = []
        for m in _NON_ASCII.finditer(text):
            i = m.start()
            src_at += i - last
            dst_at += i - last
            ch = text[i]
            ws, wd = _width(ch, src), _width(ch, dst)
            self._src_starts.append(src_at)
            self._dst_starts.append(dst_at)
            self._widths.append((ws, wd))
            src_at += ws
            dst_at += wd
            last = i + 1
        self._src_total = src_at + len(text) - last
        self._dst_total = dst_at + len(text) - last
        self._done: dict[int, int] = {}

    def convert(self, character: int) -> int:
        """A column inside a character (half a surrogate pair, a byte inside a sequence) moves
        to the character's end; a column past the end of the line stays past it by as many
        units."""
        if character <= 0:
            return character
        done = self._done.get(character)
        if done is None:
            done = self._done[character] = self._convert(character)
        return done

    def _convert(self, character: int) -> int:
        if character >= self._src_total:
            return self._dst_total + character - self._src_total
        k = bisect_right(self._src_starts, character) - 1
        if k < 0:
            return character  # only ASCII before it
        src_at, dst_at = self._src_starts[k], self._dst_starts[k]
        ws, wd = self._widths[k]
        if character == src_at:
            return dst_at
        if character < src_at + ws:
            return dst_at + wd  # inside the character: to its end
        return dst_at + wd + character - src_at - ws


def convert_character(line: str, character: int, src: Encoding, dst: Encoding) -> int:
    """`character` (in `src` units of `line`) in `dst` units (see `LineMap.convert`)."""
    if src == dst or character <= 0 or line.isascii():
        return character
    return LineMap(line, src, dst).convert(character)


def with_disk(text_of: TextOf) -> TextOf:
    """`text_of`, falling back to the file on disk for a `file:` URI it does not know."""
    from lspmux.uris import uri_to_path

    def source(uri: str) -> Source:
        found = text_of(uri)
        if found is not None or not uri.startswith("file:"):
            return found
        try:
            return Path(uri_to_path(uri)).read_text(encoding="utf-8", errors="surrogatepass")
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: not a local file
            log.debug("cannot read %s for position conversion: %s", uri, exc)
            return None

    return source


class Converter:
    """Converts positions from `src` to `dst` for one message."""

    def __init__(self, src: Encoding, dst: Encoding, text_of: TextOf) -> None:
        self.src = src
        self.dst = dst
        self._text_of = text_of
        self._lines: dict[str, Lines | None] = {}
        self._memo: dict[tuple[str | None, int], LineMap | None] = {}

    def lines(self, uri: str | None) -> Lines | None:
        if uri is None:
            return None
        if uri not in self._lines:
            found = as_lines(self._text_of(uri))
            if found is None:
                log.warning(
                    "positions in %s left in %s (not converted to %s): its text is not known",
                    uri, self.src, self.dst,
                )  # fmt: skip
            self._lines[uri] = found
        return self._lines[uri]

    def set_lines(self, uri: str, lines: Lines) -> None:
        """Use `lines` for `uri` from now on (a didChange's text between two changes)."""
        self._lines[uri] = lines
        self._memo = {k: v for k, v in self._memo.items() if k[0] != uri}

    def line_map(self, uri: str | None, line: int) -> LineMap | None:
        """The map of a line that needs converting; None for an ASCII line (nothing to do) or
        an unknown one. Memoised: the items of a large result share few lines."""
        key = (uri, line)
        try:
            return self._memo[key]
        except KeyError:
            pass
        lines = self.lines(uri)
        text = lines.line(line) if lines is not None else None
        found = None if text is None or text.isascii() else LineMap(text, self.src, self.dst)
        self._memo[key] = found
        return found

    def character(self, uri: str | None, line: int, character: int) -> int:
        found = self.line_map(uri, line)
        return character if found is None else found.convert(character)

    def position(self, pos: Any, uri: str | None) -> Any:
        if not isinstance(pos, dict):
            return pos
        line, character = pos.get("line"), pos.get("character")
        if not isinstance(line, int) or not isinstance(character, int):
            return pos
        found = self.line_map(uri, line)
        if found is None:
            return pos
        new = found.convert(character)
        return pos if new == character else {**pos, "character": new}

    def range(self, rng: Any, uri: str | None) -> Any:
        if not isinstance(rng, dict) or "start" not in rng:
            return rng
        start, end = self.position(rng["start"], uri), self.position(rng.get("end"), uri)
        if start is rng["start"] and end is rng.get("end"):
            return rng
        return {**rng, "start": start, "end": end}
