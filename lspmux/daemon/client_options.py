"""The options of `lspmux client` (and of the bare, Rust-lspmux-compatible `lspmux`) and of
`lspmux status`, declared once (standard library only: the shim imports it).

`OPTIONS` and `STATUS_OPTIONS` are the declarations. Two readers are derived from each
(`lspmux.options`): a plain loop (`parse_args`, `parse_status_args`) that runs at every start
(argparse and the modules of the full command line cost tens of milliseconds), and argparse
(`add_client_options` / `build_parser`, `add_status_options`) for `--help`, a mistake, and the
full command line. `lspmux_options` turns the options into what the shim adds to the client's
`initialize` (`initializationOptions.lspMux`).

Which server: `--server-path CMD [-- ARGS]` (the Rust tool's `--ra-mux-server` too), or
`$LSPMUX_SERVER` (or its older name `$RA_MUX_SERVER`) when it is set, share exactly that
server (the daemon checks its allow-list). `lspmux` with no subcommand is the
Rust-lspmux-compatible mode: the server defaults to `rust-analyzer`. `lspmux client` with
neither routes every file by type over the whole configuration, like `lspmux proxy`.
"""

from __future__ import annotations

import os

from lspmux.options import Option, read_args

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:  # argparse is imported only to print help or an error
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

    from lspmux.daemon.address import Address
    from lspmux.options import Args

SERVER_ENV = "LSPMUX_SERVER"
#: The Rust tool's older name for it (ra-multiplex); `LSPMUX_SERVER` wins when both are set.
RA_MUX_SERVER_ENV = "RA_MUX_SERVER"
RUST_DEFAULT_SERVER = "rust-analyzer"


CONNECT_OPTIONS = (
    Option(
        "--connect",
        dest="connect",
        metavar="ADDR",
        help="the daemon's address: unix:PATH or tcp:HOST:PORT (env LSPMUX_ADDRESS; "
        "default: a Unix socket in $XDG_RUNTIME_DIR/lspmux/)",
    ),
    Option(
        "--token-file",
        dest="token_file",
        metavar="FILE",
        help="for tcp: addresses, a 0600 file holding the daemon's token (env LSPMUX_TOKEN)",
    ),
)
OPTIONS = (
    *CONNECT_OPTIONS,
    Option(
        "--server-path",
        "--ra-mux-server",  # the Rust tool's name for it
        dest="server_path",
        metavar="CMD",
        help="share exactly this server for every file (env LSPMUX_SERVER or RA_MUX_SERVER); "
        "without it, `lspmux client` routes each file by type like `lspmux proxy`",
    ),
    Option(
        "--pass-env",
        dest="pass_env",
        metavar="NAME",
        kind="append",
        help="pass this environment variable to the server (may be repeated)",
    ),
    Option(
        "--no-autostart",
        dest="no_autostart",
        kind="flag",
        help="fail instead of starting the daemon when none is running",
    ),
)
STATUS_OPTIONS = (
    *CONNECT_OPTIONS,
    Option("--json", dest="json", kind="flag", help="machine-readable output"),
    Option(
        "-v",
        "--verbose",
        dest="verbose",
        kind="flag",
        help="every instance and client in full, with each client's open documents",
    ),
)


def add_connect_options(p: argparse.ArgumentParser) -> None:
    for option in CONNECT_OPTIONS:
        option.add_to(p)


def add_client_options(p: argparse.ArgumentParser) -> None:
    for option in OPTIONS:
        option.add_to(p)
    p.add_argument(
        "server_args", nargs="*", metavar="ARGS", help="the server's arguments (after --)"
    )


def add_status_options(p: argparse.ArgumentParser) -> None:
    for option in STATUS_OPTIONS:
        option.add_to(p)


def build_parser(prog: str = "lspmux client", *, remote: bool = True) -> argparse.ArgumentParser:
    """The argparse reader of `OPTIONS` (help and mistakes), with the `--remote` options that
    the shim hands to `lspmux.remote` before its own reading (`remote=False`: without them)."""
    import argparse

    p = argparse.ArgumentParser(
        prog=prog,
        description="Pipe stdin/stdout to the lspmux daemon, starting it when needed. "
        "Use it as the editor's language server command.",
    )
    add_client_options(p)
    if remote:
        from lspmux.remote.cli import add_remote_options

        add_remote_options(p)
    return p


def parse_args(argv: Sequence[str]) -> Args | None:
    """The shim's options, read from `OPTIONS` without argparse (the server's own arguments
    in `server_args`); None when argparse must handle them (help, an unknown option, a
    missing value)."""
    return read_args(argv, OPTIONS, rest="server_args")


def parse_status_args(argv: Sequence[str]) -> Args | None:
    """`lspmux status`'s options (the words after `status`), read from `STATUS_OPTIONS`
    without argparse; None when argparse must handle them (help, a mistake, `--remote`: the
    `--remote` options are argparse's to read)."""
    return read_args(argv, STATUS_OPTIONS, remote=None, remote_exec=None, remote_lspmux=None)


#: Commands that may follow the connect options: `lspmux --connect ADDR status` is the status
#: command (as with the Rust lspmux), never a client running a server with a `status` argument.
COMMANDS_AFTER_OPTIONS = ("status", "reload", "stop", "client")
_CONNECT_NAMES = tuple(name for option in CONNECT_OPTIONS for name in option.names)


def command_first(words: Sequence[str]) -> list[str]:
    """`--connect ADDR status …` as `status --connect ADDR …`; other command lines as they
    are."""
    i = 0
    while i < len(words):
        name, eq, _ = words[i].partition("=")
        if name not in _CONNECT_NAMES:
            break
        i += 1 if eq else 2
    if 0 < i < len(words) and words[i] in COMMANDS_AFTER_OPTIONS:
        return [words[i], *words[:i], *words[i + 1 :]]
    return list(words)


def lspmux_options(
    args: argparse.Namespace,
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
