"""Reading a `Content-Length` value safely (standard library only: the shim imports it).

`parse_length(value)` accepts only ASCII digits (no sign, no spaces inside, no `_`, at most
`MAX_DIGITS` of them) and returns the number, or a `LengthError` saying what was wrong. It never
raises: a 4,301-digit length would make `int()` raise (Python's int-string limit), a `+5`, `5_0`
or Unicode digit would be accepted by `int()` though no LSP peer writes them. Junk (a sign, a
letter, more digits than any length) is a bad header the stream can get past; a real number over
the limit (`too_large`) is a message that cannot be read, and its connection must close.
"""

from __future__ import annotations

#: More digits than this is junk, not a length: 19 digits already exceed any memory (2^63 has
#: 19).
MAX_DIGITS = 19


class LengthError:
    """Why a Content-Length value was refused; `too_large` when it is a valid number beyond
    what lspmux accepts (the stream cannot be resynchronised past such a body)."""

    __slots__ = ("detail", "too_large")

    def __init__(self, detail: str, *, too_large: bool = False) -> None:
        self.detail = detail
        self.too_large = too_large

    def __repr__(self) -> str:
        return f"LengthError({self.detail!r})"


def parse_length(value: bytes, limit: int | None = None) -> int | LengthError:
    """The Content-Length `value` (surrounding whitespace allowed) as an int, or why not.
    With `limit`, a larger length is refused too (`too_large`)."""
    digits = value.strip()
    if not digits.isdigit():  # bytes.isdigit: ASCII digits only, so no sign, `_` or space
        if digits[:1] == b"-" and digits[1:].isdigit():
            return LengthError(f"negative Content-Length {digits[:40].decode()}")
        return LengthError(f"Content-Length is not a number: {digits[:40]!r}")
    if len(digits) > MAX_DIGITS:
        return LengthError(f"Content-Length has {len(digits)} digits (at most {MAX_DIGITS})")
    length = int(digits)
    if limit is not None and length > limit:
        return LengthError(
            f"Content-Length {length} exceeds the maximum message size ({limit} bytes)",
            too_large=True,
        )
    return length
