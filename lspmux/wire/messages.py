"""JSON-RPC message shapes on raw dicts: decoding, validation, replies, and the response sniff.

Messages stay plain dicts. `decode()` turns a body into a message or a ready-made error reply
(ParseError / InvalidRequest) for the peer. `sniff_response()` recognises a response from its
first bytes, without parsing the rest, so a large answer can be relayed as raw bytes with only
its id rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from lspmux import speedups
from lspmux.errors import InvalidRequest, JsonRpcError, ParseError

Message = dict[str, Any]


class ErrorReply(dict[str, Any]):
    """An error reply `decode()` made for a body that is not a message: to be sent back."""

    __slots__ = ()


def request(id: int | str, method: str, params: Any = None) -> Message:
    msg: Message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Any = None) -> Message:
    msg: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def error(id: int | str | None, err: JsonRpcError | dict[str, Any]) -> Message:
    body = err.to_response_error() if isinstance(err, JsonRpcError) else err
    return {"jsonrpc": "2.0", "id": id, "error": body}


def decode(body: bytes | bytearray) -> Message | Message:
    """A message dict, or an error *reply* (a dict with "error" and no "method") to send back.

    Invalid JSON → ParseError with id null; JSON that is not a request, notification or
    response → InvalidRequest, with the id when one can be read.
    """
    try:
        msg = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return ErrorReply(error(None, ParseError(f"invalid JSON: {exc}")))
    if not isinstance(msg, dict):
        kind = "a batch (JSON array)" if isinstance(msg, list) else type(msg).__name__
        return ErrorReply(error(None, InvalidRequest(f"expected a JSON object, got {kind}")))
    return msg


def invalid_reason(msg: Message) -> str | None:
    """Why `msg` is not a valid JSON-RPC message, or None when it is."""
    method = msg.get("method")
    if method is not None:
        if not isinstance(method, str):
            return "'method' must be a string"
        # Absent is taken (some peers omit it); any other version is not this protocol.
        if "jsonrpc" in msg and msg["jsonrpc"] != "2.0":
            return f"'jsonrpc' must be \"2.0\", not {orjson.dumps(msg['jsonrpc']).decode()}"
        if "id" in msg and not isinstance(msg["id"], int | str):
            return "'id' must be a number or a string"
        params = msg.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "'params' must be an object or an array"
        return None
    if "id" in msg and ("result" in msg or "error" in msg):
        return None
    return "neither a request, a notification nor a response (no 'method', no 'result'/'error')"


def looks_like_response(msg: Message) -> bool:
    """An invalid message with the shape of a response (an id, no method): answering it would
    send the peer a response under an id of its own requests, so it is logged and dropped."""
    return "method" not in msg and "id" in msg


def is_error_reply(msg: Message) -> bool:
    """True for the error replies `decode()` produces (to be sent back, not handled) — not for
    a peer's own error response with id null, which must not be echoed back to it."""
    return isinstance(msg, ErrorReply)


# A response's head in the key orders real servers use: {"jsonrpc":"2.0","id":N,"result":…}
# (serde, vscode-languageserver) and {"id":N,"jsonrpc":"2.0","result":…} (clangd).
_SNIFF = re.compile(
    rb'\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)\s*,\s*'
    rb'(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?(?="(?:result|error)"\s*:)'
)


def _sniff_response(body: bytes | bytearray) -> tuple[int, int] | None:
    m = _SNIFF.match(body)
    if m is None:
        return None
    return int(m.group(1)), m.end()


#: (id, offset of the "result"/"error" key) when `body` plainly starts as a response (in C
#: where the speedups are built: `lspmux/_speedups.c`, the same answer for every body).
sniff_response: Callable[[bytes | bytearray], tuple[int, int] | None] = (
    speedups.native.sniff_response if speedups.native is not None else _sniff_response
)


_WS = b" \t\r\n"


def result_is_null(body: bytes, offset: int) -> bool:
    """Whether the sniffed response `body` (its "result"/"error" key at `offset`) has the result
    `null`, read as JSON reads it (any white space around the colon), without parsing the rest
    of a possibly large body."""
    if not body.startswith(b'"result"', offset):
        return False
    i = offset + len(b'"result"')
    n = len(body)
    while i < n and body[i] in _WS:
        i += 1
    if i >= n or body[i] != 0x3A:  # ':'
        return False
    i += 1
    while i < n and body[i] in _WS:
        i += 1
    if not body.startswith(b"null", i):
        return False
    i += 4
    while i < n and body[i] in _WS:
        i += 1
    return i < n and body[i] in b",}"


_rewrite = speedups.native.rewrite_response_id if speedups.native is not None else None


def rewrite_response_id(body: bytes, offset: int, new_id: int | str) -> bytes:
    """The response `body` (sniffed, with its result starting at `offset`) under another id."""
    if _rewrite is not None:  # C, for the ids clients use (ints, plain strings)
        out = _rewrite(body, offset, new_id)
        if out is not None:
            return out
    return _rewrite_response_id(body, offset, new_id)


def _rewrite_response_id(body: bytes, offset: int, new_id: int | str) -> bytes:
    # One copy of the (possibly megabytes long) rest: `body[offset:]` would be a second one.
    return b"".join(
        (b'{"jsonrpc":"2.0","id":', orjson.dumps(new_id), b",", memoryview(body)[offset:])
    )
