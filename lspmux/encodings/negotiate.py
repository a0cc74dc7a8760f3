"""Which position encoding each side uses: pure decisions on capabilities and answers.

- `client_encodings(caps)`: what the client can take, in its order of preference (LSP 3.17
  `general.positionEncodings`, else clangd's older `offsetEncoding` extension), UTF-16 always.
- `choose(caps, servable)`: the session's encoding: the client's first preference that every
  backend can serve (`servable`: what lspmux can give the client exactly — with conversion, any
  of the three), else UTF-16.
- `for_backend(caps, encoding)`: the capabilities a backend is initialized with, asking for the
  session's encoding only (then UTF-16, which every server must take) and without
  `offsetEncoding`, so that no backend picks an encoding lspmux did not plan.
- `answered(result)`: the encoding a backend's `initialize` result says it uses
  (`capabilities.positionEncoding`, else clangd's `offsetEncoding`, else UTF-16). Where it
  differs from the session's, the session converts with `convert_params` / `convert_result`.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from typing import Any, cast

from lspmux.text import ENCODINGS, Encoding

log = logging.getLogger(__name__)


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


def for_backend(caps: Mapping[str, Any], encoding: Encoding) -> dict[str, Any]:
    out = copy.deepcopy(dict(caps))
    out.pop("offsetEncoding", None)
    general = out.setdefault("general", {})
    general["positionEncodings"] = [encoding] if encoding == "utf-16" else [encoding, "utf-16"]
    return out


def answered(result: Mapping[str, Any] | None, server: str = "server") -> Encoding:
    result = result or {}
    value = (result.get("capabilities") or {}).get("positionEncoding")
    if value is None:
        value = result.get("offsetEncoding")  # clangd before LSP 3.17
    if value is None:
        return "utf-16"
    if value not in ENCODINGS:
        log.warning("%s answered position encoding %r, which lspmux does not know; "
                    "assuming utf-16", server, value)  # fmt: skip
        return "utf-16"
    return cast(Encoding, value)
