"""What every `lspmux` subcommand shares: the logging and config options, logging setup (the
only place it is configured), the event loop choice (uvloop when importable), and the
process-wide limits from the configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux client` must start fast
if TYPE_CHECKING:
    from lspmux.config.model import Config


def add_logging(p: argparse.ArgumentParser) -> None:
    p.add_argument("--log-file", type=Path, help="write the log here instead of stderr")
    p.add_argument(
        "--log-level",
        default=os.environ.get("LSPMUX_LOG", "info"),
        choices=["debug", "info", "warning", "error"],
        help="log verbosity (default: info; env LSPMUX_LOG); debug logs every message",
    )


def add_config(
    p: argparse.ArgumentParser,
    help: str = "one more TOML config file merged on top (may be repeated)",
) -> None:
    p.add_argument("--config", type=Path, action="append", default=[], metavar="FILE", help=help)


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


def run_loop(coro: object) -> int:
    import asyncio  # not at module level: `lspmux client` must start fast

    try:
        import uvloop

        return int(uvloop.run(coro))  # type: ignore[arg-type]
    except ImportError:
        return int(asyncio.run(coro))  # type: ignore[arg-type]


def apply_limits(config: Config) -> None:
    """The configured maximum message size, for every connection of this process."""
    from lspmux.wire.framing import set_max_message_size

    set_max_message_size(config.max_message_size)
