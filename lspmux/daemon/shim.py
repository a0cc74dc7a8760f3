"""`lspmux client`: the stdio shim an editor starts instead of a language server (stdlib only).

Responsible for: finding the daemon (`--connect`, `$LSPMUX_ADDRESS`, else the default Unix
socket), starting it when none answers (under an flock on a lock file beside the socket, so
two shims starting together produce one daemon), rewriting the client's first message when the
daemon must be told something (`initializationOptions.lspMux`: the server to share, and the
token on TCP), and then copying bytes both ways without parsing them: one thread
stdin → socket, the main thread socket → stdout. It also sends the one-shot requests of
`lspmux status` and `lspmux reload`.

Which server: `--server-path CMD [-- ARGS]` (the Rust tool's `--ra-mux-server` too), or
`$LSPMUX_SERVER` (or its older name `$RA_MUX_SERVER`) when it is set, share exactly that
server (the daemon checks its allow-list). `lspmux` with no subcommand is the
Rust-lspmux-compatible mode: the server defaults to `rust-analyzer`. `lspmux client` with
neither routes every file by type over the whole configuration, like `lspmux proxy`.

It must start fast (the first byte reaches the daemon well under 60 ms after exec), so it
imports only the standard library, and `subprocess` only when it has to start the daemon.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

from lspmux.daemon.address import (
    ADDRESS_ENV,
    Address,
    AddressError,
    check_socket_dir,
    load_token,
    peer_uid_checkable,
    resolve_client,
    user_config_file,
)
from lspmux.wire.length import FrameError, parse_length

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:  # argparse is imported only to print help or an error
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

SERVER_ENV = "LSPMUX_SERVER"
#: The Rust tool's older name for it (ra-multiplex); `LSPMUX_SERVER` wins when both are set.
RA_MUX_SERVER_ENV = "RA_MUX_SERVER"
RUST_DEFAULT_SERVER = "rust-analyzer"
AUTOSTART_TIMEOUT = 15.0
CHUNK = 1 << 16


class ShimError(Exception):
    """A failure the shim reports on stderr (never on stdout, the protocol channel)."""


def add_connect_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--connect",
        metavar="ADDR",
        default=None,
        help="the daemon's address: unix:PATH or tcp:HOST:PORT (env LSPMUX_ADDRESS; "
        "default: a Unix socket in $XDG_RUNTIME_DIR/lspmux/)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        default=None,
        help="for tcp: addresses, a 0600 file holding the daemon's token (env LSPMUX_TOKEN)",
    )


def add_client_options(p: argparse.ArgumentParser) -> None:
    add_connect_options(p)
    p.add_argument(
        "--server-path",
        "--ra-mux-server",
        dest="server_path",
        metavar="CMD",
        default=None,
        help="share exactly this server for every file (env LSPMUX_SERVER or RA_MUX_SERVER); "
        "without it, `lspmux client` routes each file by type like `lspmux proxy`",
    )
    p.add_argument(
        "--pass-env",
        metavar="NAME",
        action="append",
        default=[],
        help="pass this environment variable to the server (may be repeated)",
    )
    p.add_argument(
        "--no-autostart",
        action="store_true",
        help="fail instead of starting the daemon when none is running",
    )
    p.add_argument(
        "server_args", nargs="*", metavar="ARGS", help="the server's arguments (after --)"
    )


def build_parser(prog: str = "lspmux client") -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(
        prog=prog,
        description="Pipe stdin/stdout to the lspmux daemon, starting it when needed. "
        "Use it as the editor's language server command.",
    )
    add_client_options(p)
    from lspmux.remote.cli import add_remote_options

    add_remote_options(p)
    return p


class ClientArgs:
    """The shim's options (what `add_client_options` declares)."""

    def __init__(self) -> None:
        self.connect: str | None = None
        self.token_file: str | None = None
        self.server_path: str | None = None
        self.pass_env: list[str] = []
        self.no_autostart = False
        self.server_args: list[str] = []


_VALUED = {
    "--connect": "connect",
    "--token-file": "token_file",
    "--server-path": "server_path",
    "--ra-mux-server": "server_path",  # the Rust tool's alias
}


def parse_args(argv: Sequence[str]) -> ClientArgs | None:
    """The options, parsed without argparse (it costs milliseconds at every editor start);
    None when argparse must handle them (help, an unknown option, a missing value)."""
    args = ClientArgs()
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            args.server_args += words[i + 1 :]
            break
        name, eq, value = word.partition("=")
        if name in _VALUED or name == "--pass-env":
            if not eq:
                if i + 1 >= len(words):
                    return None
                i += 1
                value = words[i]
            if name == "--pass-env":
                args.pass_env.append(value)
            else:
                setattr(args, _VALUED[name], value)
        elif word == "--no-autostart":
            args.no_autostart = True
        elif word.startswith("-"):
            return None
        else:
            args.server_args.append(word)
        i += 1
    return args


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


#: Commands that may follow the connect options: `lspmux --connect ADDR status` is the status
#: command (as with the Rust lspmux), never a client running a server with a `status` argument.
COMMANDS_AFTER_OPTIONS = ("status", "reload", "client")
_CONNECT_OPTIONS = ("--connect", "--token-file")


def command_first(words: Sequence[str]) -> list[str]:
    """`--connect ADDR status …` as `status --connect ADDR …`; other command lines as they
    are."""
    i = 0
    while i < len(words):
        name, eq, _ = words[i].partition("=")
        if name not in _CONNECT_OPTIONS:
            break
        i += 1 if eq else 2
    if 0 < i < len(words) and words[i] in COMMANDS_AFTER_OPTIONS:
        return [words[i], *words[:i], *words[i + 1 :]]
    return list(words)


# -- the handshake --------------------------------------------------------------------------


def lspmux_options(
    args: ClientArgs | argparse.Namespace,
    *,
    rust_compat: bool,
    address: Address,
    environ: Mapping[str, str],
    token: str | None,
) -> dict[str, Any] | None:
    """What the shim adds to the client's `initialize` as `initializationOptions.lspMux`, or
    None when nothing needs adding (route by file type over a Unix socket)."""
    server = args.server_path or environ.get(SERVER_ENV) or environ.get(RA_MUX_SERVER_ENV) or None
    if server is None and rust_compat:
        server = RUST_DEFAULT_SERVER
    options: dict[str, Any] = {"version": "1"}
    env = {k: environ[k] for k in args.pass_env if k in environ}
    if server is not None:
        options.update(
            method="connect", server=server, args=list(args.server_args), env=env, cwd=os.getcwd()
        )
    elif env:  # routing by file type: every server of the client gets (and is keyed by) them
        options.update(method="connect", env=env, cwd=os.getcwd())
    if not address.is_unix and token is not None:
        options["token"] = token
    return options if len(options) > 1 else None


def header_length(block: bytes, what: str) -> int:
    """The Content-Length of a header block; ShimError naming `what` when it has none that is
    a length (junk never reaches `int()`)."""
    for line in block.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = parse_length(value)
            if isinstance(length, FrameError):
                raise ShimError(f"{what}: {length.detail}")
            return length
    raise ShimError(f"{what} has no Content-Length header")


def read_frame(fd: int, buf: bytearray) -> tuple[bytes, bytes] | None:
    """Read one framed message from `fd` (plus what was read beyond it): (body, rest), or
    None at end of input with (possibly) a partial frame left in `buf`."""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            length = header_length(bytes(buf[:end]), "the client's first message")
            start = end + 4
            while len(buf) < start + length:
                data = os.read(fd, CHUNK)
                if not data:
                    return None
                buf += data
            return bytes(buf[start : start + length]), bytes(buf[start + length :])
        data = os.read(fd, CHUNK)
        if not data:
            return None
        buf += data


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
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# -- reaching the daemon ----------------------------------------------------------------------


def open_socket(address: Address, timeout: float | None = None) -> socket.socket:
    if address.is_unix:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: Any = address.path
    else:
        sock = socket.socket(
            socket.AF_INET6 if ":" in address.host else socket.AF_INET, socket.SOCK_STREAM
        )
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        target = (address.host, address.port)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except BaseException:
        sock.close()
        raise
    sock.settimeout(None)
    return sock


_NOT_RUNNING = (FileNotFoundError, ConnectionRefusedError)


def connect(address: Address, *, autostart: bool, environ: Mapping[str, str]) -> socket.socket:
    """A socket to the daemon; starts it first (Unix addresses only) when none answers."""
    try:
        return open_socket(address)
    except _NOT_RUNNING:
        if not autostart or not address.is_unix:
            raise
    import fcntl
    import time

    check_socket_dir(address)
    lock = os.open(address.lock_path("lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one shim at a time decides whether to start it
        try:
            return open_socket(address)
        except _NOT_RUNNING:
            pass
        proc = start_daemon(address, environ)
        deadline = time.monotonic() + AUTOSTART_TIMEOUT
        while True:
            try:
                return open_socket(address)
            except _NOT_RUNNING:
                code = proc.poll()
                if code is not None or time.monotonic() > deadline:
                    log = address.lock_path("log")
                    why = f"exited with code {code}" if code is not None else "did not answer"
                    raise ShimError(
                        f"the lspmux daemon {why} (started for {address}); see {log}"
                    ) from None
                time.sleep(0.02)
    finally:
        os.close(lock)  # releases the flock


def start_daemon(address: Address, environ: Mapping[str, str]) -> Any:
    import subprocess

    log_path = address.lock_path("log")
    argv = [sys.executable, "-m", "lspmux", "server", "--listen", str(address)]
    argv += ["--log-file", str(log_path)]
    with open(os.devnull, "rb") as null_in, open(log_path, "ab") as err:
        os.chmod(log_path, 0o600)
        return subprocess.Popen(
            argv,
            stdin=null_in,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd="/",
            env=dict(environ),
            start_new_session=True,
            close_fds=True,
        )


def request(
    address: Address, method: str, params: dict[str, Any], *, token: str | None, timeout: float
) -> Any:
    """One request as the connection's first message (`lspmux/status`, `lspmux/reload`);
    the result, or ShimError with the daemon's error message."""
    import json

    if token is not None:
        params = {**params, "token": token}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    sock = open_socket(address, timeout)
    try:
        sock.settimeout(timeout)
        sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        buf = bytearray()
        while True:
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                length = header_length(bytes(buf[:end]), f"the answer of the daemon at {address}")
                if len(buf) >= end + 4 + length:
                    reply = json.loads(bytes(buf[end + 4 : end + 4 + length]))
                    if "error" in reply:
                        raise ShimError(str((reply["error"] or {}).get("message", reply["error"])))
                    return reply.get("result")
            data = sock.recv(CHUNK)
            if not data:
                raise ShimError(f"the daemon at {address} closed the connection without answering")
            buf += data
    finally:
        sock.close()


# -- the pump ----------------------------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


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


def pump(sock: socket.socket, first: bytes, stdin: int = 0, stdout: int = 1) -> int:
    """Copy bytes both ways until the daemon closes the connection."""
    if first:
        sock.sendall(first)
    threading.Thread(target=_stdin_to_socket, args=(sock, stdin), daemon=True).start()
    try:
        while True:
            data = sock.recv(CHUNK)
            if not data:
                return 0
            _write_all(stdout, data)
    except BrokenPipeError:
        return 0


def _from_config(given: str | None, environ: Mapping[str, str]) -> str:
    """Where the address came from, when it was the user file's `connect`."""
    if given or environ.get(ADDRESS_ENV):
        return ""
    return (
        f" (it is `connect` in {user_config_file()}; without it, clients use the "
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
        first = b""
        if options is not None:  # read the client's initialize before connecting
            buf = bytearray()
            got = read_frame(0, buf)
            if got is None:
                return 0  # the client left before saying anything
            first = rewrite_initialize(got[0], options) + got[1]
        try:
            sock = connect(address, autostart=not args.no_autostart, environ=environ)
        except OSError as exc:
            raise ShimError(f"cannot reach the lspmux daemon at {address}: {exc}") from exc
        return pump(sock, first)
    except (ShimError, AddressError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
