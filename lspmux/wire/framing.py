"""Content-Length framing: bytes ↔ message bodies, pure and incremental.

`FrameParser.feed()` takes whatever bytes arrived and returns every complete body (as `bytes`)
and every framing fault (as `FrameError`) in order. It tolerates `Content-Type` and unknown
headers, header names in any case, and recovers from a malformed header block by skipping it
(and the body it announced, which runs into the next header). A message larger than the
maximum size (`max_size`, default `MAX_MESSAGE_SIZE`: 64 MiB, `set_max_message_size()` for the
whole process) is a fatal fault: the parser reports it once, before reading the body, and reads
nothing more, since there is no way to find the next frame without reading the whole body. The
owner must close the stream. `encode()` turns a dict into a framed message with orjson. A header
block is read, and a header written, by `wire/header.py` (shared with the blocking readers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

import orjson

from lspmux import speedups
from lspmux.wire.header import (
    HEADER_END,
    MAX_HEADER,
    FrameError,
    frame,
    header_length,
    too_large,
)

__all__ = [
    "HEADER_END",
    "MAX_HEADER",
    "FrameError",
    "FrameParser",
    "encode",
    "frame",
    "set_max_message_size",
]

#: A body missing more than this many bytes is gathered read by read (see `_gather`).
LARGE_BODY = 256 * 1024
#: A header block of exactly one Content-Length line: read without splitting the block.
_SIMPLE_HEADER = re.compile(rb"Content-Length: (\d{1,19})\r\n\r\n")
#: The default maximum message size (the `max_message_size` config key changes it).
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
#: The maximum size of a message's body for parsers created without `max_size`.
MAX_MESSAGE_SIZE = DEFAULT_MAX_MESSAGE_SIZE


def set_max_message_size(size: int) -> None:
    """Set the maximum message size of every parser created afterwards without `max_size`
    (one value per process: the command line sets it from the configuration)."""
    global MAX_MESSAGE_SIZE
    if size <= 0:
        raise ValueError(f"the maximum message size must be positive, not {size}")
    MAX_MESSAGE_SIZE = size


#: A large body up to this size is read in place from its first read on (`_place`), a larger
#: one once half of it has come: a peer that announces a body and sends little makes lspmux
#: hold at most this much, or twice what it sent.
PLACE_AT_ONCE = 4 * 1024 * 1024
#: The scratch buffer a transport reads into between large bodies (`FrameParser.get_buffer`).
READ_SIZE = 256 * 1024

#: The frames of a read that have a plain `Content-Length` header and have fully arrived, cut
#: in C (`lspmux/_speedups.c`): their bodies, and where the first other frame starts, which the
#: loop below then reads as it reads every frame without the speedups.
_split_frames = speedups.native.split_frames if speedups.native is not None else None


class FrameParser:
    __slots__ = (
        "_big",
        "_buf",
        "_dead",
        "_have",
        "_in_place",
        "_need",
        "_parts",
        "_scratch",
        "max_size",
    )

    def __init__(self, max_size: int | None = None) -> None:
        self.max_size = MAX_MESSAGE_SIZE if max_size is None else max_size
        self._dead = False  # after a fatal fault: nothing more is read
        self._buf = bytearray()
        self._need = -1  # body length still expected, or -1 while reading headers
        self._parts: list[bytes] | None = None  # a large body, gathered read by read
        self._have = 0  # bytes in _parts or _big
        #: Reading in place (`get_buffer`): a large body is read straight into `_big`.
        self._in_place = False
        self._big: bytearray | None = None
        self._scratch: memoryview | None = None

    # -- reading in place (asyncio.BufferedProtocol) ----------------------------------------------

    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """Where the transport writes what it reads next: the rest of a large body being read,
        once half of it has come (see `_place`), so that the kernel puts its bytes where they
        stay (no copy per read, no join at the end); otherwise a scratch buffer. Never
        empty."""
        self._in_place = True
        big = self._big
        if big is not None:
            return memoryview(big)[self._have :]
        if self._scratch is None:  # a view, made once: it is handed out at every read
            self._scratch = memoryview(bytearray(READ_SIZE))
        return self._scratch

    def buffer_updated(self, nbytes: int) -> Sequence[bytes | bytearray | FrameError]:
        """`nbytes` were written into the last `get_buffer()`: the bodies now complete (a large
        one as the bytearray it was read into) and faults, as `feed` gives them."""
        big = self._big
        if big is not None:
            self._have += nbytes
            return [self._read_in_place()] if self._have == len(big) else []
        scratch = self._scratch
        assert scratch is not None
        split = _split_frames
        if split is None or self._need >= 0 or self._buf or self._parts is not None or self._dead:
            return self.feed(scratch[:nbytes])
        # between messages (the usual read): its whole frames cut where they were read, with
        # no copy into `_buf`; `feed` reads what is left, if anything
        bodies, used = split(scratch[:nbytes], 0, self.max_size)
        if used == nbytes:
            return bodies
        out = cast(list[bytes | FrameError], bodies)
        out += self.feed(scratch[used:nbytes])
        return out

    # -- reading bytes ------------------------------------------------------------------------------

    def feed(self, data: bytes | memoryview) -> list[bytes | FrameError]:
        if self._dead:
            return []
        if self._parts is not None:
            return self._gather(data)
        if self._big is not None:  # bytes handed over while a body is read in place
            return self._fill(data)
        buf = self._buf
        buf += data
        out: list[bytes | FrameError] = []
        split = _split_frames
        while True:
            if self._need < 0:
                if split is not None and buf:
                    bodies, used = split(buf, 0, self.max_size)
                    if used:
                        out += bodies
                        del buf[:used]
                if not buf:
                    return out
                simple = _SIMPLE_HEADER.match(buf)
                if simple is not None:  # the header nearly every peer writes: no block to split
                    self._need = int(simple.group(1))
                    del buf[: simple.end()]
                    if self._need > self.max_size:
                        out.append(self._die(too_large(self._need, self.max_size)))
                        return out
                    continue
                end = buf.find(HEADER_END)
                if end < 0:
                    if len(buf) > MAX_HEADER:
                        out.append(FrameError(f"no header end within {MAX_HEADER} bytes"))
                        del buf[:]
                    return out
                block = bytes(buf[:end])
                del buf[: end + 4]
                length = header_length(block, self.max_size)
                if isinstance(length, FrameError) and length.fatal:
                    out.append(self._die(length))
                    return out
                if isinstance(length, FrameError):
                    out.append(length)
                    resynced = _resync(block, self.max_size)
                    if resynced is None:
                        continue
                    if isinstance(resynced, FrameError):
                        out.append(self._die(resynced))
                        return out
                    length = resynced
                self._need = length
            if len(buf) < self._need:
                if self._need - len(buf) > LARGE_BODY:
                    self._parts = [bytes(buf)]
                    self._have = len(buf)
                    buf.clear()
                    if self._in_place and self._need <= PLACE_AT_ONCE:
                        self._place(self._parts)
                return out
            n = self._need
            if len(buf) == n:  # the usual end of a read, and of every large body: one copy
                out.append(bytes(buf))
                buf.clear()
            else:
                out.append(bytes(buf[:n]))
                del buf[:n]
            self._need = -1

    def _die(self, fault: FrameError) -> FrameError:
        """Stop reading: the body announced cannot be read, so no later frame can be found."""
        self._dead = True
        self._need = -1
        self._buf.clear()
        return fault

    def _fill(self, data: bytes | memoryview) -> list[bytes | FrameError]:
        """`data` (bytes fed while a large body is read in place) into that body."""
        big = self._big
        assert big is not None
        take = min(len(data), len(big) - self._have)
        big[self._have : self._have + take] = data[:take]
        self._have += take
        if self._have < len(big):
            return []
        # a copy, on this path only (no caller mixes the two ways of reading)
        body = bytes(self._read_in_place())
        rest = data[take:]
        return [body, *self.feed(rest)] if rest else [body]

    def _place(self, parts: list[bytes]) -> None:
        """Read the rest of the body being gathered in place: its buffer, with what came so
        far. At once up to `PLACE_AT_ONCE` (a 2.5 MB answer's first half is then not copied
        twice), else once half of it has come: the buffer is committed memory as soon as it
        exists, so a peer that announces a large body and sends little holds at most twice
        what it sent, never the whole announced size."""
        big = self._big = bytearray(self._need)
        at = 0
        for part in parts:
            big[at : at + len(part)] = part
            at += len(part)
        self._parts = None

    def _read_in_place(self) -> bytearray:
        """The large body read in place, now complete; back to reading headers."""
        big = self._big
        assert big is not None
        self._big = None
        self._have = 0
        self._need = -1
        return big

    def _gather(self, data: bytes | memoryview) -> list[bytes | FrameError]:
        """Keep the reads of a large body as they are and join them once, when it is complete:
        growing one buffer instead would copy it over and over, into fresh memory each time."""
        parts = self._parts
        assert parts is not None
        parts.append(data if type(data) is bytes else bytes(data))
        self._have += len(data)
        if self._have < self._need:
            if self._in_place and 2 * self._have >= self._need:
                self._place(parts)
            return []
        rest = b""
        surplus = self._have - self._need
        if surplus:  # the next frame began in the same read
            last = parts[-1]
            parts[-1], rest = last[: len(last) - surplus], last[len(last) - surplus :]
        self._parts = None
        self._have = 0
        self._need = -1
        body = b"".join(parts)
        return [body, *self.feed(rest)] if rest else [body]

    @property
    def buffered(self) -> int:
        return len(self._buf) + self._have


def _resync(block: bytes, limit: int | None = None) -> int | FrameError | None:
    """After a bad header, the unread body of that frame runs into the next frame's header
    (`{"id":1}Content-Length: 10`): the length in that glued header, so the stream gets back
    in step instead of losing every frame that follows. A fatal FrameError when that length
    is over `limit`; None when there is none."""
    i = block.lower().rfind(b"content-length:")
    if i <= 0:
        return None
    length = header_length(block[i:], limit)
    if isinstance(length, FrameError):
        return length if length.fatal else None
    return length


def encode(message: dict[str, Any]) -> bytes:
    """A dict as a framed message."""
    return frame(orjson.dumps(message))
