"""The `lspmux` command line: argument parsing, logging setup, and the event loop choice.

`lspmux proxy` serves one client on stdio with private backends; `lspmux config` prints the
effective configuration. This is the only module that picks the event loop (uvloop when
importable) and configures logging (stderr or --log-file; never stdout, the protocol channel).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lspmux import __version__

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
    return parser


def setup_logging(level: str, log_file: Path | None) -> None:
    handler: logging.Handler
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("lspmux")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def _run(coro: object) -> int:
    try:
        import uvloop

        return int(uvloop.run(coro))  # type: ignore[arg-type]
    except ImportError:
        return int(asyncio.run(coro))  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "proxy":
        return _proxy(args)
    if args.command == "config":
        return _config(args)
    parser.error(f"unknown command {args.command}")
    return 2


def _proxy(args: argparse.Namespace) -> int:
    from lspmux.config.loader import ConfigError, load_config
    from lspmux.proxy import run_proxy

    setup_logging(args.log_level, args.log_file)
    extra = list(args.config)
    try:  # fail early and loudly on a bad file, before the editor sees anything
        load_config(Path.cwd(), extra)
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return 2

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


if __name__ == "__main__":
    sys.exit(main())
