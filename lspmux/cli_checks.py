"""The command line's checking verbs: `lspmux diagnostics` and `lspmux doctor` (docs/linters.md).

Parsers and entry points only; the work is in `lspmux.diagnostics.report` and `lspmux.doctor`.
"""

from __future__ import annotations

import sys

from lspmux.options import Option, read_args

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux diagnostics` reads its words fast
if TYPE_CHECKING:  # argparse and pathlib: only when a parser is built, or for `doctor`
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

    from lspmux.config.model import Config

#: The levels of --min-severity, most severe first.
SEVERITIES = ("error", "warning", "information", "hint")
#: `lspmux diagnostics`'s options besides `--config` (a private proxy: argparse's to read), for
#: argparse and `read_diagnostics`.
DIAGNOSTICS_OPTIONS = (
    Option("--json", dest="json", kind="flag", help="machine-readable output"),
    Option(
        "--timeout",
        dest="timeout",
        default=60.0,
        convert=float,
        help="seconds to wait for every source (60)",
    ),
    Option("--dir", dest="dir", metavar="DIR", help="project root (default: cwd)"),
    Option(
        "--no-daemon",
        dest="no_daemon",
        kind="flag",
        help="never use a running daemon; run a private proxy",
    ),
    Option(
        "--min-severity",
        dest="min_severity",
        default="hint",
        choices=SEVERITIES,
        help="leave out diagnostics below this severity (default: show all)",
    ),
)


def add_diagnostics_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pathlib import Path

    from lspmux.cli_common import add_config

    diag = sub.add_parser(
        "diagnostics",
        help="print the merged diagnostics of files (servers and linters); exit 1 on errors, "
        "2 when not checked",
        description="Run the configured servers and linters on the files (through the running "
        "daemon when one answers, else in a private proxy) and print their merged "
        "diagnostics, `path:line:col severity source code message`, grouped by file and "
        "sorted by severity then position. A file is called clean only when every source "
        "that applies to it diagnosed its text; otherwise each source that did not report is "
        "named with why (not installed, with the install command; crashed, with its stderr; "
        "still analysing after --timeout). '*' or '**' (quoted) is the whole workspace: "
        "project checks (basedpyright --outputjson, ruff check, cargo check, tsc, go vet) "
        "where the table has them, the other files opened. Exit status: 0 every file checked "
        "and no error; 1 an error was found; 2 some file was not checked (or the run failed).",
    )
    diag.add_argument(
        "paths", nargs="+", metavar="PATH_OR_GLOB", help="files, glob patterns, or '*' (all)"
    )
    for option in DIAGNOSTICS_OPTIONS:
        option.add_to(diag)
    add_config(diag)

    doctor = sub.add_parser(
        "doctor",
        help="check that the servers and linters this project needs are installed and run",
        description="List each enabled server and linter whose file types occur in the "
        "project, with the executable found or the command that installs it. Each server "
        "found is started (initialize, shutdown) and shows its version or its stderr; "
        "linters get a `--version` smoke check. Exit status: 0 everything needed runs; 1 a "
        "needed server or linter is missing or fails; 2 the configuration is wrong.",
    )
    doctor.add_argument("--dir", type=Path, default=None, help="project folder (default: cwd)")
    add_config(doctor)


def _diagnostics(args: argparse.Namespace) -> int:
    from lspmux.diagnostics import report

    return report.main(args)


def read_diagnostics(words: Sequence[str]) -> argparse.Namespace | None:
    """The words after `diagnostics`, read without argparse; None when argparse must read
    them (help, a mistake, `--config`)."""
    args = read_args(words, DIAGNOSTICS_OPTIONS, rest="paths", config=[])
    return args if args is not None and args.paths else None


def fast_diagnostics(words: Sequence[str]) -> int | None:
    """`lspmux diagnostics …` read without argparse; None when argparse must read the words."""
    args = read_diagnostics(words)
    return None if args is None else _diagnostics(args)


def project_config(args: argparse.Namespace) -> tuple[Path, Config] | None:
    """The project folder (`--dir`, else cwd) and its configuration (with `--config` files);
    None, after saying why on stderr, when a file is wrong."""
    from pathlib import Path

    from lspmux.config.loader import ConfigError, load_config

    root = (args.dir or Path.cwd()).resolve()
    try:
        return root, load_config(root, list(args.config))
    except ConfigError as exc:
        print(f"lspmux: {exc}", file=sys.stderr)
        return None


def _doctor(args: argparse.Namespace) -> int:
    from lspmux.doctor import diagnose, render

    loaded = project_config(args)
    if loaded is None:
        return 2
    root, config = loaded
    checks = diagnose(config, root)
    print(render(checks, root, config))
    return 1 if any(c.failed for c in checks) else 0


DIAGNOSTICS_COMMANDS = {"diagnostics": _diagnostics, "doctor": _doctor}
