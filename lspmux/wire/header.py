"""The `Content-Length` header: the one place it is read and written (standard library only:
the shim imports it).

`header_length(block)` reads a header block (the bytes before the blank line): its
`Content-Length`, with `Content-Type` and unknown headers tolerated and names in any case.
`frame(body)` writes the header in front of a body. Every reader of frames goes through
`header_length` — the incremental `FrameParser`, the daemon's handshake, the blocking
`wire/blocking.py` — so none of them can take a length `int()` would accept but LSP does not.

`parse_length(value)` accepts only ASCII digits (no sign, no spaces inside, no `_`, at most
`MAX_DIGITS` of them) and returns the number, or a `FrameError` saying what was wrong. It never
raises: a 4,301-digit length would make `int()` raise (Python's int-string limit), a `+5`, `5_0`
or Unicode digit would be accepted by `int()` though no LSP peer writes them. Junk (a sign, a
letter, more digits than any length) is a bad header the stream can get past; a real number over
the limit (a `fatal` FrameError) is a message that cannot be read, and its connection must close.
"""

from __future__ import annotations

HEADER_END = b"\r\n\r\n"
#: A header block longer than this without its blank line is garbage, not a slow writer.
MAX_HEADER = 64 * 1024

#: More digits than this is junk, not a length: 19 digits already exceed any memory (2^63 has
#: 19).
MAX_DIGITS = 19


class FrameError:
    """A framing fault: the bytes could not be read as one message. Not an exception: the
    parser reports it in-line and carries on with the next frame, unless it is `fatal` (a
    message too large to read): then nothing more can be read and the stream must close."""

    __slots__ = ("detail", "fatal")

    def __init__(self, detail: str, *, fatal: bool = False) -> None:
        self.detail = detail
        self.fatal = fatal

    def __repr__(self) -> str:
        return f"FrameError({self.detail!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FrameError) and other.detail == self.detail


def too_large(length: int, limit: int) -> FrameError:
    return FrameError(
        f"Content-Length {length} exceeds the maximum message size ({limit} bytes)", fatal=True
    )


def parse_length(value: bytes, limit: int | None = None) -> int | FrameError:
    """The Content-Length `value` (surrounding whitespace allowed) as an int, or why not.
    With `limit`, a larger length is refused too (a fatal fault)."""
    digits = value.strip()
    if not digits.isdigit():  # bytes.isdigit: ASCII digits only, so no sign, `_` or space
        if digits[:1] == b"-" and digits[1:].isdigit():
            return FrameError(f"negative Content-Length {digits[:40].decode()}")
        return FrameError(f"Content-Length is not a number: {digits[:40]!r}")
    if len(digits) > MAX_DIGITS:
        return FrameError(f"Content-Length has {len(digits)} digits (at most {MAX_DIGITS})")
    length = int(digits)
    if limit is not None and length > limit:
        return too_large(length, limit)
    return length


def header_length(block: bytes, limit: int | None = None) -> int | FrameError:
    """The Content-Length of a header `block` (without its blank line), or why there is none:
    a FrameError for a bad header (a stream can get past it), a fatal one for a length over
    `limit` (it cannot)."""
    length: int | None = None
    for line in block.split(b"\r\n"):
        if not line.strip():
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            return FrameError(f"malformed header line {line[:80]!r}")
        if name.strip().lower() == b"content-length":
            parsed = parse_length(value, limit)
            if isinstance(parsed, FrameError):
                return parsed
            length = parsed
    if length is None:
        return FrameError(f"header block without Content-Length: {block[:80]!r}")
    return length


#: The header written in front of a body: `HEADER % len(body)` (the hot path formats it
#: without a call; everyone else calls `frame`).
HEADER = b"Content-Length: %d\r\n\r\n"


def frame(body: bytes | bytearray) -> bytes:
    """`body` with its header in front."""
    return HEADER % len(body) + body
