"""Content-Length framing: bytes ↔ message bodies, pure and incremental.

`FrameParser.feed()` takes whatever bytes arrived and returns every complete body (as `bytes`)
and every framing fault (as `FrameError`) in order. It tolerates `Content-Type` and unknown
headers, header names in any case, any message size, and recovers from a malformed header
block by skipping it (and the body it announced, which runs into the next header).
`encode()` turns a dict into a framed message with orjson.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

HEADER_END = b"\r\n\r\n"
#: A header block of exactly one Content-Length line: read without splitting the block.
_SIMPLE_HEADER = re.compile(rb"Content-Length: (\d+)\r\n\r\n")
#: A header block longer than this without its blank line is garbage, not a slow writer.
MAX_HEADER = 64 * 1024


class FrameError:
    """A framing fault: the bytes could not be read as one message. Not an exception: the
    parser reports it in-line and carries on with the next frame."""

    __slots__ = ("detail",)

    def __init__(self, detail: str) -> None:
        self.detail = detail

    def __repr__(self) -> str:
        return f"FrameError({self.detail!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameError) and other.detail == self.detail


class FrameParser:
    __slots__ = ("_buf", "_need")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._need = -1  # body length still expected, or -1 while reading headers

    def feed(self, data: bytes) -> list[bytes | FrameError]:
        buf = self._buf
        buf += data
        out: list[bytes | FrameError] = []
        while True:
            if self._need < 0:
                simple = _SIMPLE_HEADER.match(buf)
                if simple is not None:  # the header nearly every peer writes: no block to split
                    self._need = int(simple.group(1))
                    del buf[: simple.end()]
                    continue
                end = buf.find(HEADER_END)
                if end < 0:
                    if len(buf) > MAX_HEADER:
                        out.append(FrameError(f"no header end within {MAX_HEADER} bytes"))
                        del buf[:]
                    return out
                block = bytes(buf[:end])
                del buf[: end + 4]
                length = _content_length(block)
                if isinstance(length, FrameError):
                    out.append(length)
                    resynced = _resync(block)
                    if resynced is None:
                        continue
                    length = resynced
                self._need = length
            if len(buf) < self._need:
                return out
            n = self._need
            if len(buf) == n:  # the usual end of a read, and of every large body: one copy
                out.append(bytes(buf))
                buf.clear()
            else:
                out.append(bytes(buf[:n]))
                del buf[:n]
            self._need = -1

    @property
    def buffered(self) -> int:
        return len(self._buf)


def _content_length(block: bytes) -> int | FrameError:
    length: int | None = None
    for line in block.split(b"\r\n"):
        if not line.strip():
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            return FrameError(f"malformed header line {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return FrameError(f"Content-Length is not a number: {value.strip()[:40]!r}")
            if length < 0:
                return FrameError(f"negative Content-Length {length}")
    if length is None:
        return FrameError(f"header block without Content-Length: {block[:80]!r}")
    return length


def _resync(block: bytes) -> int | None:
    """After a bad header, the unread body of that frame runs into the next frame's header
    (`{"id":1}Content-Length: 10`): the length in that glued header, so the stream gets back
    in step instead of losing every frame that follows."""
    i = block.lower().rfind(b"content-length:")
    if i <= 0:
        return None
    length = _content_length(block[i:])
    return length if isinstance(length, int) else None


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: dict[str, Any]) -> bytes:
    """A dict as a framed message."""
    return frame(orjson.dumps(message))
