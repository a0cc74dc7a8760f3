"""The `lspmux` command line: argument parsing, logging setup, and the event loop choice.

`lspmux proxy` serves one client on stdio with private backends; `lspmux config` prints the
effective configuration. This is the only module that picks the event loop (uvloop when
importable) and configures logging (stderr or --log-file; never stdout, the protocol channel).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lspmux import __version__

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux client` must start fast
if TYPE_CHECKING:
    from lspmux.config.model import Config

DESCRIPTION = """\
lspmux: one language server connection for many servers and linters.

An editor or agent talks LSP to lspmux as if it were one language server; lspmux starts the
real servers for each file type, routes every request to the right ones, merges their answers
and diagnostics, and adds locate/* methods that turn "in Greeter.greet, at return <|>message"
into an exact position.
"""

EPILOG = """\
examples:
  lspmux proxy                      serve one editor on stdin/stdout
  lspmux proxy --config my.toml     add a config file on top of the defaults
  lspmux config                     show the effective configuration and where it came from
  lspmux client                     share backends through the daemon (started when needed)
  lspmux --server-path clangd       Rust-lspmux style: share exactly one server
  lspmux status                     the daemon's instances and clients (docs/sharing.md)
  lspmux trust                      let this project's lspmux.toml and bin/ run

docs: docs/editors.md (editor setups), docs/configuration.md (every key)
"""


def _add_logging(p: argparse.ArgumentParser) -> None:
    p.add_argument("--log-file", type=Path, help="write the log here instead of stderr")
    p.add_argument(
        "--log-level",
        default=os.environ.get("LSPMUX_LOG", "info"),
        choices=["debug", "info", "warning", "error"],
        help="log verbosity (default: info; env LSPMUX_LOG); debug logs every message",
    )


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="one more TOML config file merged on top (may be repeated)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lspmux",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lspmux {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    proxy = sub.add_parser(
        "proxy",
        help="serve one client on stdin/stdout with its own backends",
        description="Serve one editor or agent on stdin/stdout. Language servers start when "
        "the first file they handle opens, and stop with the proxy.",
    )
    _add_config(proxy)
    _add_logging(proxy)

    cfg = sub.add_parser(
        "config",
        help="print the effective configuration and where each value came from",
        description="Print the configuration lspmux would use in a folder: the built-in "
        "defaults merged with the user and project files, with the origin of each value.",
    )
    cfg.add_argument("--json", action="store_true", help="machine-readable output")
    cfg.add_argument(
        "--available", action="store_true", help="only servers whose executable is installed"
    )
    cfg.add_argument("--dir", type=Path, default=None, help="project folder (default: cwd)")
    _add_config(cfg)
    _add_daemon_commands(sub)
    _add_trust_command(sub)
    _add_diagnostics_commands(sub)
    _add_locate_commands(sub)
    return parser


def setup_logging(level: str, log_file: Path | None) -> None:
    import logging  # not at module level: `lspmux client` must start fast

    handler: logging.Handler
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file)
    else:  # a pipe nobody reads must not stall the event loop
        from lspmux.logs import NonBlockingHandler

        handler = NonBlockingHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("lspmux")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def _run(coro: object) -> int:
    import asyncio  # not at module level: `lspmux client` must start fast

    try:
        import uvloop

        return int(uvloop.run(coro))  # type: ignore[arg-type]
    except ImportError:
        return int(asyncio.run(coro))  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    from lspmux.daemon import shim  # stdlib only: the client must start fast

    words = shim.command_first(sys.argv[1:] if argv is None else argv)
    code = shim.run_if_client(words)
    if code is not None:  # `lspmux client …`, or bare `lspmux` (the Rust lspmux's client)
        return code
    parser = build_parser()
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command in _DIAGNOSTICS_COMMANDS:
        return _DIAGNOSTICS_COMMANDS[args.command](args)
    if args.command in _LOCATE_COMMANDS:
        return _LOCATE_COMMANDS[args.command](args)
    if args.command in _DAEMON_COMMANDS:
        return _DAEMON_COMMANDS[args.command](args)
    if args.command == "proxy":
        return _proxy(args)
    if args.command == "config":
        return _config(args)
    if args.command == "trust":
        return _trust(args)
    parser.error(f"unknown command {args.command}")
    return 2


def _proxy(args: argparse.Namespace) -> int:
    from lspmux.config.loader import ConfigError, load_config
    from lspmux.proxy import run_proxy

    setup_logging(args.log_level, args.log_file)
    extra = list(args.config)
    try:  # fail early and loudly on a bad file, before the editor sees anything
        config = load_config(Path.cwd(), extra)
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    _apply_limits(config)

    def load(root: Path | None):  # type: ignore[no-untyped-def]
        return load_config(root or Path.cwd(), extra)

    return _run(run_proxy(load))


def _config(args: argparse.Namespace) -> int:
    from lspmux.config.loader import ConfigError, format_config, load_config

    try:
        config = load_config(args.dir or Path.cwd(), list(args.config))
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    print(format_config(config, only_available=args.available, as_json=args.json))
    return 0


def _apply_limits(config: Config) -> None:
    """The configured maximum message size, for every connection of this process."""
    from lspmux.wire.framing import set_max_message_size

    set_max_message_size(config.max_message_size)


# -- trust (docs/configuration.md#trust-a-projects-own-configuration-and-executables) --------


def _add_trust_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trust = sub.add_parser(
        "trust",
        help="let a project's lspmux.toml and its own executables (bin/, node_modules/.bin) run",
        description="Trust the project configuration that applies to DIR (its exact content: a "
        "change needs trusting again) and the executables inside DIR, like `direnv allow`. "
        "Until then lspmux runs only what the built-in table and your own files name, from "
        "PATH. See docs/configuration.md.",
    )
    trust.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--revoke", action="store_true", help="take the trust of DIR back")
    what.add_argument("--list", action="store_true", help="list what is trusted")


def _trust(args: argparse.Namespace) -> int:
    from lspmux import trust
    from lspmux.config.loader import ConfigError

    try:
        lines = trust.command(args.dir or Path.cwd(), revoke=args.revoke, listing=args.list)
    except (OSError, ConfigError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


# -- the daemon: server, client, status, reload (docs/sharing.md) ------------------------------


def _add_daemon_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from lspmux.daemon.shim import add_client_options, add_connect_options

    server = sub.add_parser(
        "server",
        help="the daemon: share one backend per (server, workspace root) among clients",
        description="Run the lspmux daemon. Each client (`lspmux client`, or a raw socket "
        "speaking LSP) gets its own session; backends are shared per (server, root). "
        "See docs/sharing.md.",
    )
    server.add_argument(
        "--listen",
        metavar="ADDR",
        default=None,
        help="unix:PATH or tcp:127.0.0.1:PORT (TCP needs a token; env LSPMUX_ADDRESS; "
        "default: a Unix socket in $XDG_RUNTIME_DIR/lspmux/)",
    )
    server.add_argument(
        "--token-file",
        metavar="FILE",
        default=None,
        help="for tcp: a 0600 file holding the token clients must send (env LSPMUX_TOKEN)",
    )
    _add_config(server)
    _add_logging(server)

    client = sub.add_parser(
        "client",
        help="pipe stdio to the daemon (start it when needed): the editor's server command",
        description="Pipe stdin/stdout to the lspmux daemon, starting it when none runs. "
        "With --server-path (or LSPMUX_SERVER) it shares exactly that server; without, "
        "it routes each file by type like `lspmux proxy`.",
    )
    add_client_options(client)

    status = sub.add_parser(
        "status",
        help="show the daemon's instances and clients (exit 1 when no daemon answers)",
        description="Ask the daemon for its instances (server, root, pid, clients, open "
        "documents, memory, uptime, state) and clients. Exits 0 when it answers within 1 s.",
    )
    add_connect_options(status)
    status.add_argument("--json", action="store_true", help="machine-readable output")

    reload = sub.add_parser(
        "reload",
        help="restart the daemon's instances of a workspace root (all without DIR)",
        description="Restart the shared instances whose workspace root is DIR (every "
        "instance when DIR is left out); open documents are given to the new processes.",
    )
    add_connect_options(reload)
    reload.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR")


def _server(args: argparse.Namespace) -> int:
    from lspmux.config.loader import ConfigError, load_config, user_config_path
    from lspmux.daemon.address import AddressError, load_token, resolve
    from lspmux.daemon.server import Daemon, DaemonError

    setup_logging(args.log_level, args.log_file)
    extra = list(args.config)
    try:
        address = resolve(args.listen)
        token = None if address.is_unix else load_token(args.token_file)
        config = load_config(None, extra)  # a bad file fails here, loudly
    except (AddressError, ConfigError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    _apply_limits(config)

    def load(root: Path | None):  # type: ignore[no-untyped-def]
        return load_config(root, extra)

    daemon = Daemon(address, load, token=token, config_file_hint=str(user_config_path()))

    async def run() -> int:
        try:
            return await daemon.run()
        except DaemonError as exc:
            print(f"lspmux: {exc}", file=sys.stderr)
            return 1

    return _run(run())


def _client(args: argparse.Namespace) -> int:  # reached only through parse_args in tests
    from lspmux.daemon import shim

    return shim.main(sys.argv[2:])


def _where(args: argparse.Namespace) -> str:
    from lspmux.daemon.address import AddressError, resolve

    try:
        return str(resolve(args.connect))
    except AddressError:
        return str(args.connect)


def _daemon_request(args: argparse.Namespace, method: str, params: dict[str, object]) -> object:
    from lspmux.daemon.address import load_token, resolve
    from lspmux.daemon.shim import request

    address = resolve(args.connect)
    token = None if address.is_unix else load_token(args.token_file)
    timeout = 1.0 if method == "lspmux/status" else 120.0
    return request(address, method, params, token=token, timeout=timeout)


def _status(args: argparse.Namespace) -> int:
    import json

    from lspmux.daemon.address import AddressError
    from lspmux.daemon.shim import ShimError
    from lspmux.daemon.status import render

    try:
        result = _daemon_request(args, "lspmux/status", {})
    except (OSError, ShimError, AddressError) as exc:
        where = _where(args)
        print(
            f"lspmux: no daemon answers at {where} ({exc}); start one with `lspmux server` "
            "(or let `lspmux client` start it), or name another with --connect / LSPMUX_ADDRESS",
            file=sys.stderr,
        )
        return 1
    print(json.dumps(result, indent=2) if args.json else render(result))  # type: ignore[arg-type]
    return 0


def _reload(args: argparse.Namespace) -> int:
    from lspmux.daemon.address import AddressError
    from lspmux.daemon.shim import ShimError

    root = str(args.dir.resolve()) if args.dir is not None else None
    try:
        result = _daemon_request(args, "lspmux/reload", {"root": root})
    except (OSError, ShimError, AddressError) as exc:
        print(f"lspmux: reload failed: {exc}", file=sys.stderr)
        return 1
    restarted = result.get("restarted", []) if isinstance(result, dict) else []
    for row in restarted:
        state = "running" if row.get("running") else "NOT running"
        print(f"restarted {row.get('server')} for {row.get('root')}: {state}")
    if not restarted:
        print(f"no instance for {root}" if root else "no instance to restart")
    return 0


_DAEMON_COMMANDS = {"server": _server, "client": _client, "status": _status, "reload": _reload}


# -- diagnostics and doctor (docs/linters.md) ---------------------------------------------------


def _add_diagnostics_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diag = sub.add_parser(
        "diagnostics",
        help="print the merged diagnostics of files (servers and linters); exit 1 on errors",
        description="Run the configured servers and linters on the files (through the running "
        "daemon when one answers, else in a private proxy) and print their merged "
        "diagnostics, `path:line:col severity source code message`, grouped by file and "
        "sorted by severity then position. Exit status 1 when an error was found.",
    )
    diag.add_argument("paths", nargs="+", metavar="PATH_OR_GLOB", help="files or glob patterns")
    diag.add_argument("--json", action="store_true", help="machine-readable output")
    diag.add_argument(
        "--min-severity",
        choices=["error", "warning", "information", "hint"],
        default="hint",
        help="leave out diagnostics below this severity (default: show all)",
    )
    diag.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for every source (60)"
    )
    diag.add_argument("--dir", type=Path, default=None, help="project root (default: cwd)")
    diag.add_argument(
        "--no-daemon", action="store_true", help="never use a running daemon; run a private proxy"
    )
    _add_config(diag)

    doctor = sub.add_parser(
        "doctor",
        help="check that the servers and linters this project needs are installed and run",
        description="List each enabled server and linter whose file types occur in the "
        "project, with the executable found (or what is missing); linters get a "
        "`--version` smoke check.",
    )
    doctor.add_argument("--dir", type=Path, default=None, help="project folder (default: cwd)")
    _add_config(doctor)


def _diagnostics(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from lspmux.config.loader import ConfigError, load_config
    from lspmux.diagnostics import report

    root = (args.dir or Path.cwd()).resolve()
    try:
        load_config(root, list(args.config))
        files = report.expand(args.paths)
    except (ConfigError, report.ReportError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    use_daemon = not args.no_daemon and not args.config and report.daemon_running()
    argv = report.command(list(args.config), use_daemon=use_daemon)
    try:
        results, warnings = asyncio.run(
            report.collect(files, root=root, argv=argv, timeout=args.timeout)
        )
    except report.ReportError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    table = report.rows(
        results, min_severity=report.SEVERITY_LEVELS[args.min_severity], cwd=Path.cwd()
    )
    if args.json:
        print(json.dumps({"diagnostics": table, "files": len(files), "warnings": warnings}))
    else:
        print(report.format_text(table, len(files)))
    return 1 if any(r["severity"] == "error" for r in table) else 0


def _doctor(args: argparse.Namespace) -> int:
    from lspmux.config.loader import ConfigError, load_config
    from lspmux.doctor import diagnose, render

    root = (args.dir or Path.cwd()).resolve()
    try:
        config = load_config(root, list(args.config))
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    print(render(diagnose(config, root), root, config))
    return 0


_DIAGNOSTICS_COMMANDS = {"diagnostics": _diagnostics, "doctor": _doctor}


# -- locate (docs/locate.md) --------------------------------------------------------------------


def _add_locate_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    loc = sub.add_parser(
        "locate",
        help="turn a Locate description into path:line:col",
        description="Resolve a Locate description such as "
        "'app.py:Greeter.greet@return <|>message' and print path:line:col (1-based). "
        "Symbol scopes are answered by the file's language server (through the running "
        "daemon when one answers, else a private proxy). Syntax: docs/locate.md.",
    )
    loc.add_argument("spec", metavar="STRING", help="<file>[:<scope>][@<find>]")
    loc.add_argument("--range", action="store_true", help="print the range, not the position")
    loc.add_argument("--json", action="store_true", help="print the whole JSON result")
    loc.add_argument("--dir", type=Path, default=None, help="workspace root (default: cwd)")
    _add_config(loc)


def _locate(args: argparse.Namespace) -> int:
    from lspmux.locate import command

    root = (args.dir or Path.cwd()).resolve()
    return command.main(
        args.spec, want_range=args.range, as_json=args.json, root=root, configs=list(args.config)
    )


_LOCATE_COMMANDS = {"locate": _locate}


if __name__ == "__main__":
    sys.exit(main())
