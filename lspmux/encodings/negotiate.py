"""The session's position encoding, from what the client can take.

- `client_encodings(caps)`: what the client can take, in its order of preference (LSP 3.17
  `general.positionEncodings`, else clangd's older `offsetEncoding` extension), UTF-16 always.
- `choose(caps, servable)`: the session's encoding: the client's first preference that every
  backend can serve (`servable`: what lspmux can give the client exactly — with conversion, any
  of the three), else UTF-16.

What a backend is told and what it answered are `backends/client_caps.py`'s `for_backend`
(`position_encoding=`) and `answered_encoding`; where the answer differs from the session's
encoding, the session converts with `convert_params` / `convert_result`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from lspmux.text import ENCODINGS, Encoding


def _known(values: Any) -> list[Encoding]:
    if not isinstance(values, list):
        return []
    return [cast(Encoding, v) for v in values if v in ENCODINGS]


def client_encodings(caps: Mapping[str, Any] | None) -> list[Encoding]:
    caps = caps or {}
    found = _known((caps.get("general") or {}).get("positionEncodings"))
    if not found:
        found = _known(caps.get("offsetEncoding"))
    if "utf-16" not in found:
        found.append("utf-16")
    return found


def choose(caps: Mapping[str, Any] | None, servable: Iterable[Encoding] = ENCODINGS) -> Encoding:
    allowed = set(servable) | {"utf-16"}
    for encoding in client_encodings(caps):
        if encoding in allowed:
            return encoding
    return "utf-16"
