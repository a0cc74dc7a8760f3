"""What every `lspmux` subcommand shares: the logging and config options, logging setup (the
only place it is configured), the event loop choice (`$LSPMUX_EVENT_LOOP`, else uvloop when
importable), and the process-wide limits from the configuration.
"""

from __future__ import annotations

import os
import sys

from lspmux.options import Option

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux client` must start fast
if TYPE_CHECKING:  # argparse and pathlib: only when a parser is built (the verbs start without)
    import argparse
    from collections.abc import Coroutine, Mapping
    from pathlib import Path
    from typing import Any

    from lspmux.config.model import Config


#: Where the log level comes from when `--log-level` is not given, in this order: lspmux's
#: variable (a level name), then the Rust lspmux's (a tracing filter), then the configuration's
#: `log_filters`, then "warning" on stderr and "info" in a log file (`lspmux.logs.default_level`).
LOG_ENV = "LSPMUX_LOG"
RUST_LOG_ENV = "RUST_LOG"
LEVEL_NAMES = ("debug", "info", "warning", "error")


def _path(value: str) -> Path:
    from pathlib import Path  # not at import: the client and the verbs start without it

    return Path(value)


#: `--log-file` and `--log-level`: argparse's (`add_logging`) and the fast readers' (`lspmux
#: proxy`'s, `read_proxy` in lspmux.cli).
LOG_OPTIONS = (
    Option(
        "--log-file",
        dest="log_file",
        metavar="LOG_FILE",
        convert=_path,
        help="write the log here instead of stderr",
    ),
    Option(
        "--log-level",
        dest="log_level",
        choices=LEVEL_NAMES,
        help="log verbosity (default: $LSPMUX_LOG, else $RUST_LOG or the configuration's "
        "log_filters as a Rust tracing filter, else warning on stderr and info in --log-file); "
        "debug logs every message",
    ),
)

#: `--config FILE`, repeatable; `config_option(help)` words its help for a command.
CONFIG_HELP = "one more TOML config file merged on top (may be repeated)"


def config_option(help: str = CONFIG_HELP) -> Option:
    return Option(
        "--config", dest="config", kind="append", metavar="FILE", convert=_path, help=help
    )


def add_logging(p: argparse.ArgumentParser) -> None:
    for option in LOG_OPTIONS:
        option.add_to(p)


def log_levels(
    flag: str | None, log_filters: str | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Logger name → level name ("off" included) from `--log-level`, `$LSPMUX_LOG`,
    `$RUST_LOG`, the configuration's `log_filters`, in that order (the last three read as
    tracing filters, of which a bare level name is one); the `lspmux` logger is always set. A
    value that is not a filter is passed over, as the Rust lspmux does with `RUST_LOG`, and so
    is one that says nothing about lspmux (`tokio=debug`). When none of them sets the `lspmux`
    logger, where the log goes does (`lspmux.logs.default_level`)."""
    from lspmux.log_filters import ROOT_LOGGER, FilterError, parse
    from lspmux.logs import default_level

    env = os.environ if environ is None else environ
    if flag:
        return {ROOT_LOGGER: flag}
    levels: dict[str, str] = {}
    for spec in (env.get(LOG_ENV), env.get(RUST_LOG_ENV), log_filters):
        if spec:
            try:
                levels = parse(spec)
            except FilterError:
                continue
            if levels:
                break
    levels.setdefault(ROOT_LOGGER, default_level(ROOT_LOGGER))
    return levels


def set_levels(levels: Mapping[str, str]) -> None:
    import logging

    for name, level in levels.items():
        value = logging.CRITICAL + 10 if level == "off" else logging.getLevelName(level.upper())
        logging.getLogger(name).setLevel(value)


def add_config(p: argparse.ArgumentParser, help: str = CONFIG_HELP) -> None:
    config_option(help).add_to(p)


def setup_logging(level: str | None, log_file: Path | None, log_filters: str | None = None) -> None:
    """The one place logging is configured: a handler (the file, else a non-blocking stderr)
    on the `lspmux` logger, and the levels `log_levels` picks. Called again with the
    configuration's `log_filters` once the configuration is read."""
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
    root.propagate = False
    set_levels(log_levels(level, log_filters))


#: The event loop lspmux runs on: "uvloop" or "asyncio" (the standard library's). Unset or
#: empty: uvloop when it is installed, else asyncio. Read by every lspmux process (the proxy,
#: the daemon; the shim has no event loop) and by the test suite for its own loop, so that the
#: whole suite can run without uvloop although it is installed.
EVENT_LOOP_ENV = "LSPMUX_EVENT_LOOP"
EVENT_LOOPS = ("uvloop", "asyncio")


class EventLoopChoiceError(ValueError):
    """`$LSPMUX_EVENT_LOOP` names no loop lspmux can run on."""


def event_loop_choice(environ: Mapping[str, str] | None = None) -> str:
    """ "uvloop" or "asyncio", from `$LSPMUX_EVENT_LOOP` (unset: uvloop when importable).
    Raises EventLoopChoiceError for a value that is not one of EVENT_LOOPS, or "uvloop" when
    uvloop is not installed."""
    from importlib.util import find_spec

    env = os.environ if environ is None else environ
    value = env.get(EVENT_LOOP_ENV, "").strip().lower()
    if not value:
        return "uvloop" if find_spec("uvloop") is not None else "asyncio"
    if value not in EVENT_LOOPS:
        raise EventLoopChoiceError(
            f"{EVENT_LOOP_ENV}={env[EVENT_LOOP_ENV]!r} is not an event loop lspmux knows: "
            f"set it to one of {', '.join(EVENT_LOOPS)}, or unset it (uvloop when installed)"
        )
    if value == "uvloop" and find_spec("uvloop") is None:
        raise EventLoopChoiceError(
            f"{EVENT_LOOP_ENV}=uvloop but uvloop is not installed in {sys.prefix}: "
            f"`pip install uvloop`, or set {EVENT_LOOP_ENV}=asyncio"
        )
    return value


def run_loop(coro: Coroutine[Any, Any, int]) -> int:
    """Run `coro` to its end on the loop `event_loop_choice` picks; a bad
    `$LSPMUX_EVENT_LOOP` is said on stderr and ends the command with exit code 2."""
    import asyncio  # not at module level: `lspmux client` must start fast

    try:
        choice = event_loop_choice()
    except EventLoopChoiceError as err:
        coro.close()  # never started: no "was never awaited" warning
        print(f"lspmux: {err}", file=sys.stderr)
        return 2
    import logging

    logging.getLogger("lspmux").debug("event loop: %s (python %s)", choice, sys.version.split()[0])
    if choice == "uvloop":
        import uvloop

        return int(uvloop.run(coro))
    return int(asyncio.run(coro))


def apply_limits(config: Config) -> None:
    """The configured maximum message size, for every connection of this process."""
    from lspmux.wire.framing import set_max_message_size

    set_max_message_size(config.max_message_size)
