"""The fitting worker: a child process that fits large answers to a client's capabilities.

`session/fitting.py` starts it (`python -I -c ...`, see there) and talks JSON-RPC to it over
its stdin and stdout (`wire.blocking.BlockingPeer`), framed like a language server. It answers one
method, `lspmux/fit`:

    params: {"kind": the answer's fitting kind (its method's `Route.fit`: "completion",
             "hover", "definition", …), "client": the client's capabilities,
             "size": the answer's length in bytes,
             "answer": the backend's whole response (spliced in as it was read)}, in that
             order: the answer last, its size before it
    result: the answer's `result`, fitted as `routing.adapt.adapt` fits it

The answer is not parsed here: only what the client cannot take is rewritten
(`routing.fit_raw`), and the response is the answer's own bytes under the request's id. A
request written otherwise (the answer not last, or without its size) is an error: the
requester, `session/fitting.py`, always writes it so (and fits an answer itself when the
worker answers with an error).

It exits when its stdin closes. It is a separate process, not a thread, so that parsing and
rewriting a 2.5 MB answer (10 to 80 ms of CPU) runs on another core and never holds the daemon's
interpreter lock: the event loop that serves every other client goes on undisturbed.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import orjson

from lspmux.errors import InternalError, InvalidParams, JsonRpcError, MethodNotFound, ParseError
from lspmux.routing import fit_raw
from lspmux.wire.blocking import BlockingPeer, WireError
from lspmux.wire.framing import MAX_MESSAGE_SIZE
from lspmux.wire.messages import rewrite_response_id, sniff_response

METHOD = "lspmux/fit"


def handle(body: bytes) -> bytes | None:
    """The encoded response to one message body (None for a notification)."""
    split = _split(body)
    if split is not None:
        return _handle_raw(*split)
    try:
        msg = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return _error(None, ParseError(f"the fitting worker could not parse a request: {exc}"))
    if not isinstance(msg, dict) or "id" not in msg:
        return None
    if msg.get("method") != METHOD:
        return _error(msg["id"], MethodNotFound(f"the fitting worker only answers {METHOD}"))
    return _error(
        msg["id"],
        InvalidParams(
            f"{METHOD} needs params {{kind, client, size, answer}} with the answer last and "
            "its size in bytes before it (as session/fitting.py writes them)"
        ),
    )


#: Where the requester's params end: `"size": N, "answer": <N bytes>}}` (session/fitting.py).
_SIZED_ANSWER = re.compile(rb'"size":(\d+),"answer":')


def _split(body: bytes) -> tuple[dict[str, Any], bytes] | None:
    """The request without its answer, and the answer's bytes, when the answer is the last
    member of the params with its size before it, as session/fitting.py writes it: the answer
    is then never parsed here (most of it is relayed as it came)."""
    for m in _SIZED_ANSWER.finditer(body):
        end = m.end() + int(m.group(1))
        if end + 2 != len(body) or not body.endswith(b"}}"):
            continue
        try:
            msg = orjson.loads(body[: m.end()] + b"null}}")
        except orjson.JSONDecodeError:
            return None
        if isinstance(msg, dict) and msg.get("method") == METHOD and "id" in msg:
            return msg, body[m.end() : end]
        return None
    return None


def _handle_raw(msg: dict[str, Any], answer: bytes) -> bytes:
    """The worker's response to `msg` for the server's `answer`: the answer itself, fitted
    where the client cannot take it, under the request's id."""
    params = msg.get("params") or {}
    client = params.get("client")
    try:
        # the requester sends only answers its scan found something in (`needs_fitting`)
        out = fit_raw.fit_found(
            str(params.get("kind")), answer, client if isinstance(client, dict) else {}
        )
    except Exception as exc:  # the requester fits it itself instead
        return _error(msg["id"], InternalError(f"the fitting worker failed: {exc!r}"))
    sniffed = sniff_response(out)
    if sniffed is None or not out.startswith(b'"result"', sniffed[1]):
        return _error(msg["id"], InternalError("the fitting worker got no plain result to fit"))
    return rewrite_response_id(out, sniffed[1], msg["id"])


def _error(msg_id: Any, error: JsonRpcError) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error.to_response_error()})


def main() -> int:
    peer = BlockingPeer.over_fds(0, 1, "the fitting worker's requester", limit=MAX_MESSAGE_SIZE)
    try:
        while (body := peer.read_body()) is not None:
            reply = handle(body)
            if reply is not None:
                peer.write_body(reply)
    except WireError as exc:  # the requester writes frames it knows: nothing to carry on for
        print(f"lspmux fit worker: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
