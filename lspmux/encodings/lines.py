"""Lines of text for position conversion, and the converter of single positions.

Converting a position between encodings needs only the text of its line. A *text source*
`text_of(uri)` gives, per document, either a `str` or any object with `line(n) -> str | None`
(the line without its break; None past the end) — so a document kept as a rope or a list of
lines serves as it is. A `str` is wrapped in `TextLines`, which computes its line starts once.
`Converter` memoises the source per URI for one message, converts positions and ranges, and
leaves (and logs, once per URI) a position whose document cannot be read.
`with_disk(text_of)` adds the fallback to the file on disk, read lazily.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from lspmux.text import Encoding, index_for_units, line_end, line_starts, units

log = logging.getLogger(__name__)


@runtime_checkable
class Lines(Protocol):
    def line(self, n: int) -> str | None: ...


TextOf = Callable[[str], "Lines | str | None"]


class TextLines:
    """`Lines` over a str; line starts computed on first use."""

    __slots__ = ("_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    def line(self, n: int) -> str | None:
        if self._starts is None:
            self._starts = line_starts(self.text)
        if n < 0 or n >= len(self._starts):
            return None
        return self.text[self._starts[n] : line_end(self.text, self._starts, n)]


def as_lines(value: Lines | str | None) -> Lines | None:
    if value is None or isinstance(value, Lines):
        return value
    if isinstance(value, str):
        return TextLines(value)
    text = getattr(value, "text", None)
    return TextLines(text) if isinstance(text, str) else None


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


def convert_character(line: str, character: int, src: Encoding, dst: Encoding) -> int:
    """`character` (in `src` units of `line`) in `dst` units. A column inside a character moves
    to its end; a column past the end of the line stays past it by as many units."""
    if src == dst or character <= 0 or line.isascii():
        return character
    total = units(line, src)
    if character >= total:
        return units(line, dst) + character - total
    return units(line[: index_for_units(line, character, src)], dst)


def with_disk(text_of: TextOf) -> TextOf:
    """`text_of`, falling back to the file on disk for a `file:` URI it does not know."""
    from lspmux.workspace.globs import uri_to_path

    def source(uri: str) -> Lines | str | None:
        found = text_of(uri)
        if found is not None or not uri.startswith("file:"):
            return found
        try:
            return Path(uri_to_path(uri)).read_text(encoding="utf-8", errors="surrogatepass")
        except (OSError, UnicodeDecodeError) as exc:
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

    def character(self, uri: str | None, line: int, character: int) -> int:
        lines = self.lines(uri)
        text = lines.line(line) if lines is not None else None
        if text is None:
            return character
        return convert_character(text, character, self.src, self.dst)

    def position(self, pos: Any, uri: str | None) -> Any:
        if not isinstance(pos, dict):
            return pos
        line, character = pos.get("line"), pos.get("character")
        if not isinstance(line, int) or not isinstance(character, int):
            return pos
        new = self.character(uri, line, character)
        return pos if new == character else {**pos, "character": new}

    def range(self, rng: Any, uri: str | None) -> Any:
        if not isinstance(rng, dict) or "start" not in rng:
            return rng
        return {
            **rng,
            "start": self.position(rng["start"], uri),
            "end": self.position(rng.get("end"), uri),
        }
