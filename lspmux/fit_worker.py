"""The fitting worker: a child process that fits large answers to a client's capabilities.

`session/fitting.py` starts it (`python -I -c ...`, see there) and talks JSON-RPC to it over
its stdin and stdout (`wire.blocking.BlockingPeer`), framed like a language server. It answers one
method, `lspmux/fit`:

    params: {"method": the LSP method answered, "client": the client's capabilities,
             "answer": the backend's whole response (spliced in as it was read)}
    result: the answer's `result`, fitted by `routing.adapt.adapt`

and exits when its stdin closes. It is a separate process, not a thread, so that parsing and
rewriting a 2.5 MB answer (≈ 80 ms of CPU) runs on another core and never holds the daemon's
interpreter lock: the event loop that serves every other client goes on undisturbed.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from lspmux.errors import InternalError, JsonRpcError, MethodNotFound, ParseError
from lspmux.routing.adapt import adapt
from lspmux.wire.blocking import BlockingPeer, WireError
from lspmux.wire.framing import MAX_MESSAGE_SIZE

METHOD = "lspmux/fit"


def fit(params: Any) -> Any:
    """The fitted result for one `lspmux/fit` request's params."""
    if not isinstance(params, dict) or not isinstance(params.get("answer"), dict):
        raise ValueError("lspmux/fit needs params {method, client, answer}")
    client = params.get("client")
    return adapt(
        str(params.get("method")),
        params["answer"].get("result"),
        client if isinstance(client, dict) else {},
    )


def handle(body: bytes) -> bytes | None:
    """The encoded response to one message body (None for a notification)."""
    try:
        msg = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return _error(None, ParseError(f"the fitting worker could not parse a request: {exc}"))
    if not isinstance(msg, dict) or "id" not in msg:
        return None
    if msg.get("method") != METHOD:
        return _error(msg["id"], MethodNotFound(f"the fitting worker only answers {METHOD}"))
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": fit(msg.get("params"))})
    except Exception as exc:  # the requester fits it itself instead
        return _error(msg["id"], InternalError(f"the fitting worker failed: {exc!r}"))


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
