"""`lspmux client`: the stdio shim an editor starts instead of a language server (stdlib only).

Responsible for: rewriting the client's first message when the daemon must be told something
(`initializationOptions.lspMux`: the server to share, and the token on TCP), and then copying
bytes both ways without parsing them: one thread stdin → socket, the main thread socket →
stdout. Its options are `daemon/client_options.py`; finding and starting the daemon is
`daemon/dial.py`; the first message is read with `wire/blocking.py`.

On the Unix socket the shim hands the daemon its stdin and stdout with the first message
(SCM_RIGHTS, `pass_stdio`): the daemon then reads and writes the editor's pipes itself, no
process copies the messages in between, and the shim only waits for the daemon to close the
socket (its session ended) to exit. A daemon that does not take them (it says `STDIO_TAKEN`
when it does) is relayed to as before. `LSPMUX_CLIENT_RELAY=1` keeps the copying.

It must start fast (the first byte reaches the daemon well under 60 ms after exec), so it
imports only the standard library, and `subprocess` only when it has to start the daemon.
`lspmux.cli` imports it first for every command, so its module level holds only what the
client and the daemon's one-request commands (`lspmux status`, the agent verbs) share.
"""

from __future__ import annotations

import os
import socket
import sys

from lspmux.daemon.address import (
    ADDRESS_ENV,
    AddressError,
    load_token,
    peer_uid_checkable,
    resolve_client,
)
from lspmux.daemon.client_options import build_parser, command_first, lspmux_options, parse_args
from lspmux.daemon.dial import ShimError, connect
from lspmux.dirs import user_config_file_name
from lspmux.wire.blocking import BlockingPeer, WireError, write_all
from lspmux.wire.header import frame

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

CHUNK = 1 << 16
#: What the daemon sends a shim whose stdin and stdout it took, before anything else (an LSP
#: message never starts with NUL); the shim then only waits for the session's end.
STDIO_TAKEN = b"\x00lspmux: stdio taken\n"
#: Set to 1: never pass stdio, copy every message (how lspmux worked before it passed them).
RELAY_ENV = "LSPMUX_CLIENT_RELAY"


def run_if_client(words: Sequence[str]) -> int | None:
    """Run the shim when the command line asks for it: `lspmux client …`, or `lspmux` with
    no subcommand (an editor on stdin, as with the Rust lspmux; a terminal gets the help).
    None: another command, for `lspmux.cli`."""
    if not words:
        return None if sys.stdin.isatty() else main([], rust_compat=True)
    words = command_first(words)
    first = words[0]
    if first == "client":
        return main(words[1:])
    if first.startswith("-") and first not in ("-h", "--help", "-V", "--version"):
        return main(words, rust_compat=True)
    return None


# -- the handshake --------------------------------------------------------------------------


def read_first(fd: int, *, exact: bool = False) -> tuple[bytes, bytes] | None:
    """The client's first message read from `fd`, and what was read beyond it: (body, rest);
    None when the input ends first. ShimError when it is not a message. `exact`: nothing is
    read beyond it (rest is empty): the daemon reads what follows from `fd` itself."""
    peer = BlockingPeer("the client's first message", lambda n: os.read(fd, n))
    try:
        body = peer.read_body(exact=exact)
    except WireError as exc:
        raise ShimError(str(exc)) from None
    return None if body is None else (body, peer.rest())


def rewrite_initialize(body: bytes, options: Mapping[str, Any]) -> bytes:
    """The framed first message with `initializationOptions.lspMux` set (when it is an
    `initialize`; anything else is passed on unchanged)."""
    import json

    try:
        msg = json.loads(body)
    except ValueError:
        msg = None
    if isinstance(msg, dict) and msg.get("method") == "initialize":
        params = msg.get("params")
        if not isinstance(params, dict):
            params = msg["params"] = {}
        init = params.get("initializationOptions")
        if not isinstance(init, dict):
            init = params["initializationOptions"] = {}
        init["lspMux"] = dict(options)
        body = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode()
    return frame(body)


# -- the pump ----------------------------------------------------------------------------------


def _stdin_to_socket(sock: socket.socket, stdin: int) -> None:
    try:
        while True:
            data = os.read(stdin, CHUNK)
            if not data:
                break
            sock.sendall(data)
    except OSError:
        pass
    try:  # noqa: SIM105 (contextlib would cost an import at startup)
        sock.shutdown(socket.SHUT_WR)  # the daemon sees end of input: the client went away
    except OSError:
        pass


def passable(stdin: int, stdout: int) -> bool:
    """Whether the daemon's event loop can serve `stdin` and `stdout` as they are (asked by
    the shim before it offers them, and by the daemon of what it was passed): pipes or
    sockets (what editors give a language server), not a terminal or a file, and not one
    socket for both (socat's EXEC gives that: a loop's write pipe would take the input arriving
    on it for the peer's close)."""
    import stat

    try:
        ends = os.fstat(stdin), os.fstat(stdout)
    except OSError:
        return False
    for end in ends:
        if not (stat.S_ISFIFO(end.st_mode) or stat.S_ISSOCK(end.st_mode)):
            return False
    same = (ends[0].st_dev, ends[0].st_ino) == (ends[1].st_dev, ends[1].st_ino)
    return not (same and stat.S_ISSOCK(ends[0].st_mode))


def pass_stdio(sock: socket.socket, first: bytes, stdin: int, stdout: int) -> bytes | None:
    """Send `first` (not empty) with `stdin` and `stdout` attached. None: the daemon took
    them (`STDIO_TAKEN`). Else what it sent instead, to be copied to stdout as before (its
    answer, or nothing: it closed the connection)."""
    sent = socket.send_fds(sock, [first], [stdin, stdout])
    if sent < len(first):
        sock.sendall(first[sent:])
    got = b""
    while len(got) < len(STDIO_TAKEN):
        data = sock.recv(CHUNK)
        if not data:
            return got
        got += data
        if not STDIO_TAKEN.startswith(got[: len(STDIO_TAKEN)]):
            return got  # not the daemon's word: an answer over the socket
    return None  # nothing follows it: the daemon writes to the editor's pipe, not here


def pump(
    sock: socket.socket, first: bytes, stdin: int = 0, stdout: int = 1, *, passing: bool = False
) -> int:
    """Copy bytes both ways until the daemon closes the connection; `passing`: first offer
    it stdin and stdout with `first`, and wait while it uses them."""
    import threading  # here: the commands that share the shim's imports need no thread

    if passing:
        got = pass_stdio(sock, first, stdin, stdout)
        if got is None:  # the daemon reads and writes the editor's pipes: wait for its end
            try:
                while sock.recv(CHUNK):
                    pass
            except OSError:  # the daemon went away (reset): the session ended all the same
                pass
            return 0
        if got:
            write_all(stdout, got)
    elif first:
        sock.sendall(first)
    threading.Thread(target=_stdin_to_socket, args=(sock, stdin), daemon=True).start()
    try:
        while True:
            data = sock.recv(CHUNK)
            if not data:
                return 0
            write_all(stdout, data)
    except BrokenPipeError:
        return 0


def _from_config(given: str | None, environ: Mapping[str, str]) -> str:
    """Where the address came from, when it was the user file's `connect`."""
    if given or environ.get(ADDRESS_ENV):
        return ""
    return (
        f" (it is `connect` in {user_config_file_name()}; without it, clients use the "
        "private Unix socket)"
    )


def main(argv: Sequence[str], *, rust_compat: bool = False) -> int:
    """Run the shim; `argv` excludes the program name and the `client` word."""
    from lspmux.remote.cli import wants_remote

    if wants_remote(argv):  # the daemon lives on another machine: the relay's job
        from lspmux.remote.cli import main as remote_main

        return remote_main(argv)
    args = parse_args(argv)
    if args is None:  # help or a mistake: argparse says it properly (and exits)
        build_parser("lspmux" if rust_compat else "lspmux client").parse_args(list(argv))
        return 2
    environ = os.environ
    try:
        address = resolve_client(args.connect, environ)
        token = load_token(args.token_file, environ) if not address.is_unix else None
        if not address.is_unix and token is None and not peer_uid_checkable():
            raise ShimError(
                f"{address} is a TCP address: give --token-file or set LSPMUX_TOKEN"
                + _from_config(args.connect, environ)
            )
        options = lspmux_options(
            args, rust_compat=rust_compat, address=address, environ=environ, token=token
        )
        passing = address.is_unix and environ.get(RELAY_ENV) != "1" and passable(0, 1)
        first = b""
        if options is not None or passing:  # read the client's initialize before connecting
            got = read_first(0, exact=passing)
            if got is None:
                return 0  # the client left before saying anything
            body = rewrite_initialize(got[0], options) if options is not None else frame(got[0])
            first = body + got[1]
        try:
            sock = connect(address, autostart=not args.no_autostart, environ=environ)
        except OSError as exc:
            raise ShimError(f"cannot reach the lspmux daemon at {address}: {exc}") from exc
        return pump(sock, first, passing=passing)
    except (ShimError, AddressError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
