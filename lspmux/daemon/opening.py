"""What a connection's first message asks, and whether its peer may ask it.

Parsing only; the daemon acts on the answer. A first message is one of:

- `initialize`, optionally with `initializationOptions.lspMux` = `{"version": "1", "method":
  "connect", "server", "args", "env", "cwd"}` (the Rust lspmux protocol; `token` on TCP). The
  key is removed, then the message goes to a new Session. `method` "status" and "reload"
  (with `cwd`, the Rust client's folder) are also understood.
- `lspmux/status`, `lspmux/reload` (params: `cwd`, `all`, `restart` or `root`),
  `lspmux/documents` (params: `uris`), `lspmux/tool` (params: `root`, `name`,
  `arguments`), `lspmux/locate` (params: `root`, `locate`, `range`) or `lspmux/stop`, `token` on TCP: answered, then the connection is closed.

Errors that need no trust (not JSON, not a request, `lspMux` not an object) are told before
the token is checked; the others only to a peer that passed it.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from lspmux.errors import InvalidRequest, JsonRpcError

#: The one-shot requests a connection may open with, by the `kind` they get.
ONE_SHOT = {
    "lspmux/status": "status",
    "lspmux/reload": "reload",
    "lspmux/documents": "documents",
    "lspmux/tool": "tool",
    "lspmux/locate": "locate",
    "lspmux/stop": "stop",
}


@dataclass
class Opening:
    """A first message, read. `kind`: "session" (an initialize for a new Session), "status",
    "reload", "documents", "tool" or "locate"; `error` set when it cannot be served at all."""

    kind: str = ""
    msg_id: Any = None
    #: The request's params; for "session", the initialize params without `lspMux`; for the
    #: Rust handshake's reload, `{"cwd": ...}`.
    params: dict[str, Any] = field(default_factory=dict)
    #: "session": the `lspMux` options (server, args, env, cwd).
    options: dict[str, Any] = field(default_factory=dict)
    #: "session": the initialize message to hand over, `lspMux` removed.
    message: dict[str, Any] | None = None
    token: Any = None
    #: Refused before the token is checked (it reveals nothing).
    error: JsonRpcError | None = None
    #: Refused once the token has passed.
    error_after_token: JsonRpcError | None = None


def read_opening(body: bytes) -> Opening:
    try:
        msg = orjson.loads(body)
    except orjson.JSONDecodeError:
        msg = None
    if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
        return Opening(error=InvalidRequest("lspmux: expected initialize first"))
    method = msg["method"]
    msg_id = msg.get("id")
    raw_params = msg.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    if method in ONE_SHOT:
        return Opening(ONE_SHOT[method], msg_id, params, token=params.get("token"))
    if method != "initialize":
        why = f"lspmux: expected initialize first, got {method}"
        return Opening(msg_id=msg_id, error=InvalidRequest(why))
    init = params.get("initializationOptions")
    options = init.pop("lspMux", None) if isinstance(init, dict) else None
    if isinstance(init, dict) and not init:
        del params["initializationOptions"]
    if options is not None and not isinstance(options, dict):
        return Opening(msg_id=msg_id, error=InvalidRequest("lspmux: lspMux must be an object"))
    options = options or {}
    opening = Opening("session", msg_id, params, options, token=options.get("token"))
    if options and str(options.get("version", "1")) != "1":
        why = f"lspmux: unsupported lspMux version {options.get('version')}"
        opening.error_after_token = InvalidRequest(why)
        return opening
    kind = options.get("method", "connect")
    if kind == "status":
        opening.kind = "status"
    elif kind == "reload":
        opening.kind, opening.params = "reload", {"cwd": options.get("cwd")}
    elif kind != "connect":
        opening.error_after_token = InvalidRequest(f"lspmux: unknown lspMux method {kind!r}")
    else:
        msg["params"] = params
        opening.message = msg
    return opening


@dataclass(frozen=True)
class ReloadAsk:
    root: str | None
    cwd: str | None
    everything: bool
    restart: bool | None


def reload_ask(params: Mapping[str, Any]) -> ReloadAsk:
    """`lspmux/reload`'s params (`cwd`, `root`, `all`, `restart`), or the Rust handshake's
    `reload` (its `cwd`); InvalidRequest for a `cwd` that is not a folder name."""

    def text(key: str) -> str | None:
        value = params.get(key)
        return value if isinstance(value, str) and value else None

    if "cwd" in params and text("cwd") is None:
        raise InvalidRequest("lspmux: reload needs cwd, the folder to reload")
    restart = params.get("restart")
    return ReloadAsk(
        text("root"),
        text("cwd"),
        params.get("all") is True,
        restart if isinstance(restart, bool) else None,
    )


def token_refusal(kind: str, uid: int | None, token: str | None, given: Any) -> str | None:
    """None when a connection may proceed; else why not. A Unix socket admits only its user
    (its folder is private); on TCP the daemon's own user (`uid`, the peer's, None when it
    cannot be told) needs no token, anyone else needs `token`."""
    if kind != "tcp" or uid == os.getuid():
        return None
    who = (
        "its user cannot be told here"
        if uid is None
        else f"it comes from uid {uid}, not the daemon's user (uid {os.getuid()})"
    )
    if not token:
        return (
            f"lspmux: this TCP listener admits only its own user, and {who}; a token "
            "is needed: start the daemon with --token-file FILE (or LSPMUX_TOKEN) and "
            "give the client the same token"
        )
    if not isinstance(given, str):
        return (
            f"lspmux: {who}, so this TCP listener needs the token (lspMux.token / "
            "params.token; `lspmux client --token-file FILE` or LSPMUX_TOKEN)"
        )
    if not hmac.compare_digest(given.encode(), token.encode()):
        return "lspmux: wrong token"
    return None
