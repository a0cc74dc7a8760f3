"""Text held in chunks of whole lines, edited in place: what an open document's text is made of.

A `ChunkedText` keeps the text as a list of chunks of about `target` characters. Every chunk
but the last ends right after a line break, so a line (and a "\\r\\n") never straddles two
chunks; a line longer than a chunk is one chunk of its own. Two Fenwick trees index the chunks
by length and by number of line breaks, so finding the chunk of an offset or of a line costs
O(log chunks), and an edit rewrites only the chunk(s) it touches: a single-character change in
a 10 MB file copies about one kilobyte. Chunks that grow past `max_size` are split, chunks that
shrink below `min_size` are merged with a neighbour; the index is then rebuilt with C-level
operations (`itertools.accumulate`), O(chunks), which is rare (once per ~`target` characters
typed into one place).

Positions follow `lspmux.text` exactly (the same clamping, the same three encodings); only the
lines concerned are looked at. The full string is built on demand (`text()`), cached until the
next edit. A text that was never edited is kept as the one string it came as (no copy): it is
cut into chunks at its first incremental edit.
"""

from __future__ import annotations

import operator
import re
from itertools import accumulate
from typing import Any

from lspmux.text import Encoding, index_for_units, units

_EOL = re.compile(r"\r\n|\r|\n")

TARGET = 1024
MAX_SIZE = 2048
MIN_SIZE = 256


class Fenwick:
    """Prefix sums of non-negative integers with O(log n) update and search."""

    __slots__ = ("_n", "_step", "tree", "values")

    def __init__(self, values: list[int]) -> None:
        self.values = values
        self.rebuild()

    def rebuild(self) -> None:
        """Rebuild the tree from `values` (after they were replaced wholesale), in C-level steps:
        node i (1-based) holds P[i] - P[i - lowbit(i)], P being the inclusive prefix sums."""
        n = self._n = len(self.values)
        prefix = list(accumulate(self.values, initial=0))
        self.tree = [0, *map(operator.sub, prefix[1:], map(prefix.__getitem__, _low(n)))]
        self._step = 1 << (n.bit_length() - 1) if n else 0

    def add(self, i: int, delta: int) -> None:
        self.values[i] += delta
        tree, n = self.tree, self._n
        i += 1
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, i: int) -> int:
        """Sum of values[:i]."""
        tree, total = self.tree, 0
        while i > 0:
            total += tree[i]
            i &= i - 1
        return total

    def find(self, target: int) -> tuple[int, int]:
        """(i, prefix(i)) for the first i whose running sum passes `target`, that is
        prefix(i) <= target < prefix(i + 1); (n, total) when `target` >= the total."""
        tree, n = self.tree, self._n
        pos, step, left = 0, self._step, target
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= left:
                pos = nxt
                left -= tree[nxt]
            step >>= 1
        return pos, target - left


_LOW: list[int] = []


def _low(n: int) -> list[int]:
    """[i - lowbit(i) for i in 1..n], grown as needed and shared."""
    if len(_LOW) < n:
        _LOW.extend(i - (i & -i) for i in range(len(_LOW) + 1, max(n, 2 * len(_LOW)) + 1))
    return _LOW[:n]


def breaks(s: str) -> int:
    """Line breaks in `s` ("\\r\\n" counts once); `s` must not end between "\\r" and "\\n"."""
    if "\r" not in s:
        return s.count("\n")
    return s.count("\n") + s.count("\r") - s.count("\r\n")


def split_lines(s: str, target: int = TARGET, max_size: int = MAX_SIZE) -> list[str]:
    """Cut `s` into chunks of whole lines of about `target` characters (at least one chunk)."""
    n = len(s)
    if n <= max_size:
        return [s]
    out: list[str] = []
    start = 0
    while n - start > max_size:
        m = _EOL.search(s, start + target)
        if m is None or m.end() >= n:
            break
        out.append(s[start : m.end()])
        start = m.end()
    out.append(s[start:])
    return out


def _line_bounds(s: str, k: int) -> tuple[int, int]:
    """Start and end (before its break) of the line after the k-th line break of chunk `s`."""
    if "\r" not in s:
        pos = 0
        find = s.index
        for _ in range(k):
            pos = find("\n", pos) + 1
        end = s.find("\n", pos)
        return pos, len(s) if end < 0 else end
    pos = 0
    search = _EOL.search
    for _ in range(k):
        m = search(s, pos)
        assert m is not None
        pos = m.end()
    m = search(s, pos)
    return pos, len(s) if m is None else m.start()


class ChunkedText:
    """A text that takes incremental edits in time proportional to the edit and its lines."""

    __slots__ = ("_breaks", "_chars", "_chunks", "_max", "_min", "_target", "_text")

    def __init__(
        self,
        text: str = "",
        *,
        target: int = TARGET,
        max_size: int = MAX_SIZE,
        min_size: int = MIN_SIZE,
    ) -> None:
        if not 0 < min_size <= target < max_size:
            raise ValueError(f"chunk sizes must satisfy 0 < {min_size=} <= {target=} < {max_size=}")
        self._target, self._max, self._min = target, max_size, min_size
        self._chunks: list[str] | None = None
        self._chars: Fenwick | None = None
        self._breaks: Fenwick | None = None
        self._text: str | None = text

    # -- reading --------------------------------------------------------------------------------

    def text(self) -> str:
        """The whole text (built once per edit, then cached)."""
        if self._text is None:
            assert self._chunks is not None
            self._text = "".join(self._chunks)
        return self._text

    def __len__(self) -> int:
        if self._chunks is None:
            return len(self._text or "")
        assert self._chars is not None
        return self._chars.prefix(len(self._chunks))

    @property
    def chunk_count(self) -> int:
        return 0 if self._chunks is None else len(self._chunks)

    def line_count(self) -> int:
        """Lines as LSP counts them: line breaks + 1."""
        self._index()
        assert self._breaks is not None and self._chunks is not None
        return self._breaks.prefix(len(self._chunks)) + 1

    def line(self, line: int) -> str | None:
        """The text of `line` without its line break; None past the end (or before the start),
        as `lspmux.encodings.lines.Lines` asks."""
        found = self._locate_line(line) if line >= 0 else None
        if found is None:
            return None
        chunk, start, end = found[:3]
        return chunk[start:end]

    def offset_at(self, line: int, character: int, encoding: Encoding = "utf-16") -> int:
        """`lspmux.text.position_to_offset` on this text, looking only at `line`."""
        if line < 0:
            return 0
        found = self._locate_line(line)
        if found is None:
            return len(self)
        chunk, start, end, base, _ = found
        return base + start + index_for_units(chunk[start:end], max(character, 0), encoding)

    def position_at(self, offset: int, encoding: Encoding = "utf-16") -> tuple[int, int]:
        """`lspmux.text.offset_to_position` on this text, looking only at the offset's line."""
        chunks, chars, brk = self._index()
        offset = max(0, min(offset, chars.prefix(len(chunks))))
        i, base = chars.find(offset)
        if i == len(chunks):  # the very end
            i -= 1
            base -= len(chunks[i])
        s, local = chunks[i], offset - base
        end = local
        if 0 < local < len(s) and s[local - 1] == "\r" and s[local] == "\n":
            end -= 1  # between "\r" and "\n": still on the line that "\r\n" ends
        head = s[:end]
        start = max(head.rfind("\n"), head.rfind("\r")) + 1
        return brk.prefix(i) + breaks(head), units(s[start:local], encoding)

    # -- editing --------------------------------------------------------------------------------

    def apply(self, change: dict[str, Any], encoding: Encoding = "utf-16") -> None:
        """Apply one `TextDocumentContentChangeEvent` (full or incremental)."""
        rng = change.get("range")
        if rng is None:
            self.reset(str(change["text"]))
            return
        s, e = rng["start"], rng["end"]
        line = s["line"]
        found = self._locate_line(line) if line >= 0 and line == e["line"] else None
        if found is not None:  # the usual edit: within one line, looked up once
            chunk, start, end, base, i = found
            text = chunk[start:end]
            a = base + start + index_for_units(text, max(s["character"], 0), encoding)
            b = base + start + index_for_units(text, max(e["character"], 0), encoding)
            self.replace(min(a, b), max(a, b), change["text"], hint=(i, base))
            return
        a = self.offset_at(line, s["character"], encoding)
        b = self.offset_at(e["line"], e["character"], encoding)
        if b < a:
            a, b = b, a
        self.replace(a, b, change["text"])

    def reset(self, text: str) -> None:
        self._chunks = self._chars = self._breaks = None
        self._text = text

    def replace(self, a: int, b: int, new: str, *, hint: tuple[int, int] | tuple[()] = ()) -> None:
        """Replace the characters [a, b) by `new` (0 <= a <= b <= len). `hint`: (chunk index,
        its offset) of a chunk known to hold both a and b."""
        chunks, chars, brk = self._index()
        self._text = None
        n = len(chunks)
        if hint and (b - hint[1] < len(chunks[hint[0]]) or hint[0] == n - 1):
            i, base_i = hint
            j, base_j = hint
        else:
            i, base_i = chars.find(a)
            if i == n:
                i -= 1
                base_i -= len(chunks[i])
            j, base_j = chars.find(b)
            if j == n:
                j -= 1
                base_j -= len(chunks[j])
        local_a = a - base_i
        if local_a == 0 and i > 0 and chunks[i - 1].endswith("\r"):
            i -= 1  # `new` may start with "\n": join the "\r" before it
            base_i -= len(chunks[i])
            local_a = len(chunks[i])
        merged = chunks[i][:local_a] + new + chunks[j][b - base_j :]
        size = len(merged)
        if i == j and size <= self._max and (size >= self._min or n == 1):  # the usual case
            old = chunks[i]
            chunks[i] = merged
            chars.add(i, size - len(old))
            delta = breaks(merged) - brk.values[i]
            if delta:
                brk.add(i, delta)
            return
        if len(merged) < self._min and j + 1 < n:
            j += 1
            merged += chunks[j]
        elif len(merged) < self._min and i > 0:
            i -= 1
            merged = chunks[i] + merged
        pieces = split_lines(merged, self._target, self._max)
        chunks[i : j + 1] = pieces
        chars.values[i : j + 1] = [len(p) for p in pieces]
        brk.values[i : j + 1] = [breaks(p) for p in pieces]
        chars.rebuild()
        brk.rebuild()

    # -- internals ------------------------------------------------------------------------------

    def _index(self) -> tuple[list[str], Fenwick, Fenwick]:
        """The chunks and their two indexes, cutting the text into chunks on first use."""
        if self._chunks is None:
            self._chunks = split_lines(self._text or "", self._target, self._max)
            self._chars = Fenwick([len(c) for c in self._chunks])
            self._breaks = Fenwick([breaks(c) for c in self._chunks])
        assert self._chars is not None and self._breaks is not None
        return self._chunks, self._chars, self._breaks

    def _locate_line(self, line: int) -> tuple[str, int, int, int, int] | None:
        """(chunk, start, end, chunk offset, chunk index) of `line` inside its chunk; None past
        the end."""
        chunks, chars, brk = self._index()
        n = len(chunks)
        i, before = brk.find(line)
        if i == n:
            if line > before:
                return None
            i -= 1  # the last line: after the final break, in the last chunk
            before -= brk.values[i]
        start, end = _line_bounds(chunks[i], line - before)
        return chunks[i], start, end, chars.prefix(i), i
