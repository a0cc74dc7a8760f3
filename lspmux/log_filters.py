"""Log levels from a Rust `tracing` filter string, as the Rust lspmux reads them.

The Rust lspmux takes its log level from `RUST_LOG`, else from the `log_filters` key of its
configuration file (default `"info"`), both in tracing's `EnvFilter` syntax: comma-separated
directives `LEVEL`, `TARGET` or `TARGET=LEVEL` (a target may carry a `[span{field=value}]`
part). `parse` maps such a string onto lspmux's loggers:

- a bare level sets the level of every lspmux logger (a directive naming lspmux wins over
  it, as in tracing, where the more specific directive wins);
- a target that names lspmux (`lspmux`, `ra_multiplex`, or `lspmux::daemon` for the
  `lspmux.daemon` logger) sets that logger's level; other targets (`tokio=warn`) name no
  logger of lspmux and are left out;
- tracing's levels map onto Python's: `trace` and `debug` → debug, `info`, `warn` → warning,
  `error`, `off` (and the numbers 0 to 5: off, error, warn, info, debug, trace).

It imports nothing: the configuration checker and the CLI both use it.
"""

from __future__ import annotations

#: tracing's level names (and numbers) → lspmux's level names.
LEVELS: dict[str, str] = {
    "trace": "debug",
    "debug": "debug",
    "info": "info",
    "warn": "warning",
    "warning": "warning",
    "error": "error",
    "off": "off",
    "0": "off",
    "1": "error",
    "2": "warning",
    "3": "info",
    "4": "debug",
    "5": "debug",
}

#: Crate names that mean lspmux itself (the Rust tool's old and new names).
OWN_TARGETS = ("lspmux", "ra_multiplex", "ra-multiplex")

#: The logger every lspmux module logs under.
ROOT_LOGGER = "lspmux"


class FilterError(ValueError):
    """A directive that is not tracing's syntax; the message names it."""


def _logger(target: str) -> str | None:
    """The lspmux logger a tracing target names, or None when it names none of ours."""
    head, _, rest = target.partition("::")
    if head not in OWN_TARGETS:
        return None
    return ".".join([ROOT_LOGGER, *rest.split("::")]) if rest else ROOT_LOGGER


def parse(spec: str) -> dict[str, str]:
    """Logger name → level name ("debug", "info", "warning", "error", "off") for a filter
    string; raises FilterError for a directive whose level is not one of tracing's."""
    levels: dict[str, str] = {}
    default: str | None = None  # a bare level: weaker than a directive naming lspmux
    for raw in spec.split(","):
        directive = raw.strip()
        if not directive:
            continue
        target, eq, level = directive.rpartition("=")
        if not eq or "]" in level or "}" in level:  # no level: `info`, or a bare target
            target, level = directive, ""
        if not level:
            if directive.lower() in LEVELS:
                default = LEVELS[directive.lower()]
                continue
            target, level = directive, "trace"  # a bare target enables everything in it
        name = LEVELS.get(level.strip().lower())
        if name is None:
            raise FilterError(
                f"{directive!r}: {level!r} is not a level (one of trace, debug, info, warn, "
                "error, off)"
            )
        logger = _logger(target.split("[", 1)[0].strip())
        if logger is not None:
            levels[logger] = name
    if default is not None:
        levels.setdefault(ROOT_LOGGER, default)
    return levels
