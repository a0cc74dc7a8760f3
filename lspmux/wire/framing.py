"""Content-Length framing: bytes ↔ message bodies, pure and incremental.

`FrameParser.feed()` takes whatever bytes arrived and returns every complete body (as `bytes`)
and every framing fault (as `FrameError`) in order. It tolerates `Content-Type` and unknown
headers, header names in any case, any message size, and recovers from a malformed header
block by skipping it. `encode()` turns a dict into a framed message with orjson.
"""

from __future__ import annotations

from typing import Any

import orjson

HEADER_END = b"\r\n\r\n"
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
                end = buf.find(HEADER_END)
                if end < 0:
                    if len(buf) > MAX_HEADER:
                        out.append(FrameError(f"no header end within {MAX_HEADER} bytes"))
                        del buf[:]
                    return out
                length = _content_length(bytes(buf[:end]))
                del buf[: end + 4]
                if isinstance(length, FrameError):
                    out.append(length)
                    continue
                self._need = length
            if len(buf) < self._need:
                return out
            n = self._need
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


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: dict[str, Any]) -> bytes:
    """A dict as a framed message."""
    return frame(orjson.dumps(message))
