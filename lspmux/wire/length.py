"""Reading a `Content-Length` value safely (standard library only: the shim imports it).

`parse_length(value)` accepts only ASCII digits (no sign, no spaces inside, no `_`, at most
`MAX_DIGITS` of them) and returns the number, or a `FrameError` saying what was wrong. It never
raises: a 4,301-digit length would make `int()` raise (Python's int-string limit), a `+5`, `5_0`
or Unicode digit would be accepted by `int()` though no LSP peer writes them. Junk (a sign, a
letter, more digits than any length) is a bad header the stream can get past; a real number over
the limit (a `fatal` FrameError) is a message that cannot be read, and its connection must close.
"""

from __future__ import annotations

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
