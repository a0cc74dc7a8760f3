"""The session's position encoding, from what the client can take.

- `client_encodings(caps)`: what the client can take, in its order of preference (LSP 3.17
  `general.positionEncodings`, else clangd's older `offsetEncoding` extension), UTF-16 always.
- `session_encoding(caps)`: the session's encoding: UTF-16 unless the client cannot take it.

What a backend is told and what it answered are `backends/client_caps.py`'s `for_backend`
(`position_encoding=`) and `answered_encoding`; where the answer differs from the session's
encoding, the session converts with `convert_params` / `convert_result`.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def session_encoding(caps: Mapping[str, Any] | None) -> Encoding:
    """The session's encoding: UTF-16 unless the client cannot take it. Servers speak UTF-16
    (most of them only that), so a UTF-16 session converts nothing; a client that lists
    encodings without UTF-16 gets its first one, converted for each server."""
    declared = ((caps or {}).get("general") or {}).get("positionEncodings")
    if not isinstance(declared, list) or not declared or "utf-16" in declared:
        return "utf-16"
    return client_encodings(caps)[0]
