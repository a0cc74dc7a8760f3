"""Exact position conversion between UTF-8, UTF-16 and UTF-32 for whole LSP messages.

Used where a backend insists on another encoding than the session's: `convert_params` and
`convert_notification` on the way in, `convert_result` (and `convert_notification` for
publishDiagnostics) on the way out, each given the shape of what it converts. `lines.py`
converts single positions given a line's text, `shapes.py` knows where positions live in each
structure, `methods.py` runs a shape over a message; which shape a method has is its route's
(`session/positions.py` converts by method name).
"""

from __future__ import annotations

from lspmux.encodings.lines import Lines, TextLines, TextOf, convert_character, with_disk
from lspmux.encodings.methods import convert_notification, convert_params, convert_result

__all__ = [
    "Lines",
    "TextLines",
    "TextOf",
    "convert_character",
    "convert_notification",
    "convert_params",
    "convert_result",
    "with_disk",
]
