"""The `lspmux` command line: argument parsing, logging setup, and the event loop choice.

`lspmux proxy` serves one client on stdio with private backends; `lspmux config` prints the
effective configuration. This is the only module that picks the event loop ($LSPMUX_EVENT_LOOP,
else uvloop when importable) and configures logging (stderr or --log-file; never stdout, the protocol channel).
"""

from __future__ import annotations

import os
import sys

from lspmux.cli_agent import AGENT_VERBS as _AGENT_VERBS
from lspmux.options import Option, read_args

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux client` and the verbs start fast
if TYPE_CHECKING:  # the rest is imported when a parser is built (`build_parser`, `_parsed`)
    import argparse
    from collections.abc import Sequence

DESCRIPTION = """\
lspmux: one language server connection for many servers and linters.

An editor or agent talks LSP to lspmux as if it were one language server; lspmux starts the
real servers for each file type, routes every request to the right ones, merges their answers
and diagnostics, and adds locate/* methods that turn "in Greeter.greet, at return <|>message"
into an exact position.
"""

EPILOG = """\
getting started:
  lspmux doctor                     which servers this project needs, and whether they run
  lspmux install --missing          install those that are missing (PyPI/npm, pinned)
  lspmux setup nvim                 the editor's setup to paste (nvim, helix, emacs, vscode, zed)

examples:
  lspmux proxy                      serve one editor on stdin/stdout
  lspmux proxy --config my.toml     add a config file on top of the defaults
  lspmux config                     show the effective configuration and where it came from
  lspmux client                     share backends through the daemon (started when needed)
  lspmux --server-path clangd       Rust-lspmux style: share exactly one server
  lspmux status                     the daemon's instances and clients (docs/sharing.md)
  lspmux trust                      let this project's lspmux.toml and bin/ run

docs: {docs} (editors.md: editor setups, configuration.md: every key)
"""


def build_parser(*, agent_help: bool = True) -> argparse.ArgumentParser:
    """The full parser; `agent_help=False` leaves out the agent verbs' help entries (they import
    the agent's tool table), for a command that is none of them and prints no list of them."""
    import argparse
    from pathlib import Path

    from lspmux import __version__
    from lspmux.cli_agent import add_agent_commands
    from lspmux.cli_checks import add_diagnostics_commands
    from lspmux.cli_common import add_config, add_logging
    from lspmux.completion import add_command as add_completion_command
    from lspmux.daemon.commands import add_daemon_commands
    from lspmux.install.command import add_command as add_install_command
    from lspmux.setup_editor import add_command as add_setup_command

    parser = argparse.ArgumentParser(
        prog="lspmux",
        description=DESCRIPTION,
        epilog=EPILOG.format(docs=os.path.realpath(Path(__file__).parent / "docs")),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="version", version=f"lspmux {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    proxy = sub.add_parser(
        "proxy",
        help="serve one client on stdin/stdout with its own backends",
        description="Serve one editor or agent on stdin/stdout. The language servers the "
        "workspace needs start with the proxy (others when the first file they handle opens), "
        "and stop with it.",
    )
    add_config(proxy)
    add_logging(proxy)

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
    cfg.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON Schema of lspmux.toml (for taplo / Even Better TOML) and stop",
    )
    add_config(cfg)
    sub.add_parser(
        "help", help="print this help, or the help of COMMAND (lspmux help COMMAND)"
    ).add_argument("topic", nargs="?", metavar="COMMAND")
    add_daemon_commands(sub)
    _add_trust_command(sub)
    add_diagnostics_commands(sub)
    add_install_command(sub)
    add_setup_command(sub)
    add_completion_command(sub)
    _add_locate_commands(sub)
    if agent_help:
        add_agent_commands(sub)
    return parser


#: The exit status of a command whose reader went away (`lspmux status | head`): what a shell
#: reports for a program stopped by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a reader that closes its end of stdout early (`| head`) ends it
    quietly with EXIT_BROKEN_PIPE, never a traceback."""
    try:
        code = _main(argv)
        if not sys.stdout.closed:  # `lspmux proxy` closes it when its client goes away
            sys.stdout.flush()  # a broken pipe shows here when the output was buffered
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null so that fails silently
        # too (the recipe of the `signal` module's documentation)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    if argv is None and _nothing_left_at_exit():
        # The interpreter's own teardown (every module's dict cleared, a last collection) costs
        # a verb 3-6 ms of its ~40 (issue 21): with nothing registered to run at exit and no
        # thread to join, ending the process now skips only that (the kernel closes the fds)
        try:  # noqa: SIM105 (contextlib would cost an import at exit)
            sys.stderr.flush()
        except OSError:  # a reader of stderr that went away: as Python's own exit ignores it
            pass
        os._exit(code)
    return code


def _nothing_left_at_exit() -> bool:
    """Whether this process would run nothing of its own at exit: no `atexit` callback (logging,
    a temporary folder's finalizer, a test's probe … register one) and no thread (`threading`
    joins the non-daemon ones). Only the command line's own run asks (`main` without argv)."""
    import atexit

    count = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere exit as usual
    return count is not None and count() == 0 and "threading" not in sys.modules


def _help(parser: argparse.ArgumentParser, words: Sequence[str]) -> int:
    """`lspmux help [COMMAND]`, as the Rust lspmux (clap) has it: the help of COMMAND, or of
    lspmux."""
    if not words:
        parser.print_help()
        return 0
    from lspmux.agent.cli import main as agent_main

    if words[0] in _AGENT_VERBS:
        return agent_main([words[0], "--help"])
    try:
        parser.parse_args([words[0], "--help"])
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def _main(argv: Sequence[str] | None = None) -> int:
    """The commands a user waits for at every start are read without argparse (it and the
    other commands' modules cost tens of milliseconds): the client shim, the agent verbs and
    `lspmux status`, `lspmux proxy`. Everything else, and help or a mistake, goes through the
    full parser."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in _FAST_READERS:  # before the shim: none of these is a client's
        from importlib import import_module  # words, and `lspmux proxy` spawns its servers

        module, name = _FAST_READERS[words[0]].split(":")  # sooner without its imports (socket)
        code = getattr(import_module(module), name)(words[1:])
        if code is not None:
            return int(code)
    from lspmux.daemon import shim  # stdlib only: the client must start fast

    words = shim.command_first(words)
    code = shim.run_if_client(words)
    if code is not None:  # `lspmux client …`, or bare `lspmux` (the Rust lspmux's client)
        return code
    if words and words[0] in _AGENT_VERBS:  # before the full parser: the verbs start fast
        from lspmux.agent import cli as agent_cli

        if words[0] == "mcp":
            return agent_cli.mcp_main(words[1:])
        return agent_cli.main(words)
    if words and words[0] == "status":
        from lspmux.daemon.client_options import parse_status_args

        status_args = parse_status_args(words[1:])
        if status_args is not None:
            from lspmux.daemon.commands import DAEMON_COMMANDS

            return DAEMON_COMMANDS["status"](status_args)  # type: ignore[arg-type]
    return _parsed(words)


#: The other commands read without argparse when their words are plain (issue 21: a fresh
#: `lspmux <verb>` against a warm daemon imports only the shim and what the verb needs), each
#: reader saying None when argparse must read them.
_FAST_READERS = {
    "proxy": "lspmux.cli:fast_proxy",
    "reload": "lspmux.daemon.commands:fast_reload",
    "locate": "lspmux.cli:fast_locate",
    "diagnostics": "lspmux.cli_checks:fast_diagnostics",
}


def _parsed(words: Sequence[str]) -> int:
    """Any command, read by the full parser."""
    from lspmux.cli_checks import DIAGNOSTICS_COMMANDS
    from lspmux.daemon.commands import DAEMON_COMMANDS

    # `lspmux proxy` and the daemon commands skip the agent verbs' help: an editor waits for
    # them, and their parsing never prints the list of commands (unlike `help`, `--help`, typos)
    quiet = {"proxy", *DAEMON_COMMANDS}
    parser = build_parser(agent_help=not words or words[0] not in quiet)
    if words and words[0] == "help":
        return _help(parser, words[1:])
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command in DIAGNOSTICS_COMMANDS:
        return DIAGNOSTICS_COMMANDS[args.command](args)
    if args.command in _LOCATE_COMMANDS:
        return _LOCATE_COMMANDS[args.command](args)
    if args.command in DAEMON_COMMANDS:
        return DAEMON_COMMANDS[args.command](args)
    if args.command == "proxy":
        return _proxy(args)
    if args.command == "config":
        return _config(args)
    if args.command == "trust":
        return _trust(args)
    if args.command == "completion":
        from lspmux.completion import script

        print(script(args.shell, build_parser()), end="")
        return 0
    if args.command == "setup":
        from lspmux.setup_editor import main as setup_main

        return setup_main(args)
    if args.command == "install":
        from lspmux.install.command import main as install_main

        return install_main(args)
    parser.error(f"unknown command {args.command}")
    return 2


def _proxy(args: argparse.Namespace) -> int:
    from lspmux.proxy import main as proxy_main  # its start is ordered there

    return proxy_main(args)


def read_proxy(words: Sequence[str]) -> argparse.Namespace | None:
    """The words after `proxy`, read without argparse (building the full parser costs ~10 ms
    of the proxy's start, before its servers spawn); None when argparse must read them (help,
    a mistake)."""
    from lspmux.cli_common import LOG_OPTIONS, config_option

    return read_args(words, (config_option(), *LOG_OPTIONS))


def fast_proxy(words: Sequence[str]) -> int | None:
    """`lspmux proxy …` read without argparse; None when argparse must read the words."""
    args = read_proxy(words)
    return None if args is None else _proxy(args)


def _config(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lspmux.config.loader import ConfigError, format_config, load_config

    if args.schema:
        import json

        from lspmux.config.schema import schema

        print(json.dumps(schema(), indent=2))
        return 0
    try:
        config = load_config(args.dir or Path.cwd(), list(args.config))
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2
    print(format_config(config, only_available=args.available, as_json=args.json))
    return 0


# -- trust (docs/configuration.md#trust-a-projects-own-configuration-and-executables) --------


def _add_trust_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    trust = sub.add_parser(
        "trust",
        help="let a project's lspmux.toml and its own executables (bin/, node_modules/.bin) run",
        description="Trust the project configuration that applies to DIR (its exact content: a "
        "change needs trusting again) and DIR's own executables (its bin/, node_modules/.bin, "
        ".venv/bin; not those of a project nested inside it), like `direnv allow`. Until then "
        "lspmux runs only what the built-in table and your own files name, from PATH, with "
        "servers in restricted mode. See docs/configuration.md.",
    )
    trust.add_argument("dir", nargs="?", type=Path, default=None, metavar="DIR")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--revoke", action="store_true", help="take the trust of DIR back")
    what.add_argument("--list", action="store_true", help="list what is trusted")


def _trust(args: argparse.Namespace) -> int:
    from pathlib import Path

    from lspmux import trust
    from lspmux.config.loader import ConfigError

    try:
        lines = trust.command(args.dir or Path.cwd(), revoke=args.revoke, listing=args.list)
    except (OSError, ConfigError) as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


# -- locate (docs/locate.md) --------------------------------------------------------------------


#: The options of `lspmux locate` besides `--config` (a private proxy: argparse's to read), for
#: both readers: argparse (`_add_locate_commands`) and `read_locate`.
LOCATE_OPTIONS = (
    Option("--range", dest="range", kind="flag", help="print the range, not the position"),
    Option("--json", dest="json", kind="flag", help="print the whole JSON result"),
    Option("--dir", dest="dir", metavar="DIR", help="workspace root (default: cwd)"),
)


def read_locate(words: Sequence[str]) -> argparse.Namespace | None:
    """The words after `locate`, read without argparse; None when argparse must read them
    (help, a mistake, `--config`)."""
    args = read_args(words, LOCATE_OPTIONS, rest="spec", config=[])
    if args is None or len(args.spec) != 1:
        return None
    args.spec = args.spec[0]
    return args


def fast_locate(words: Sequence[str]) -> int | None:
    """`lspmux locate …` read without argparse; None when argparse must read the words."""
    args = read_locate(words)
    return None if args is None else _locate(args)


def _add_locate_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from lspmux.cli_common import add_config

    loc = sub.add_parser(
        "locate",
        help="turn a Locate description into path:line:col",
        description="Resolve a Locate description such as "
        "'app.py:Greeter.greet@return <|>message' and print path:line:col (1-based). "
        "Symbol scopes are answered by the file's language server (through the running "
        "daemon when one answers, else a private proxy). Syntax: docs/locate.md.",
    )
    loc.add_argument("spec", metavar="STRING", help="<file>[:<scope>][@<find>]")
    for option in LOCATE_OPTIONS:
        option.add_to(loc)
    add_config(loc)


def _locate(args: argparse.Namespace) -> int:
    from lspmux.locate import command

    return command.run(args)


_LOCATE_COMMANDS = {"locate": _locate}


if __name__ == "__main__":
    sys.exit(main())
