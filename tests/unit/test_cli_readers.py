"""The commands' fast readers (`client_options.read_args`: no argparse at start) read the
same words as the full parser does, into the same attributes; what they cannot read — help, a
mistake, a value not among an option's choices — is left to argparse, which says it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.cli import build_parser, read_locate, read_proxy
from lspmux.cli_checks import SEVERITIES, read_diagnostics
from lspmux.daemon.client_options import parse_args, parse_status_args
from lspmux.daemon.commands import read_reload

READERS: dict[str, Callable[[list[str]], Any]] = {
    "locate": read_locate,
    "diagnostics": read_diagnostics,
    "reload": read_reload,
    "status": parse_status_args,
    "client": parse_args,
    "proxy": read_proxy,
}


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """A reading with its paths as strings: argparse makes `reload DIR` a Path, its fast
    reader a string (the same folder: os.path reads both)."""

    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [plain(v) for v in value]
        return str(value) if isinstance(value, PurePath) else value

    return {k: plain(v) for k, v in values.items()}


def _argparse_reading(words: list[str]) -> dict[str, Any] | None:
    try:
        full = vars(build_parser().parse_args(words))
    except SystemExit:
        return None
    full.pop("command")
    return full


@pytest.mark.parametrize(
    "words",
    [
        ["locate", "app.py:Greeter@x", "--range", "--dir", "src"],
        ["locate", "app.py@x", "--json"],
        ["diagnostics", "a.py", "b.py", "--json", "--timeout", "5", "--min-severity", "error"],
        ["diagnostics", "*", "--no-daemon", "--dir", "src"],
        ["reload"],
        ["reload", "src", "--restart", "--connect", "unix:/x"],
        ["reload", "--all"],
        ["reload", "--root", "src"],
        ["status", "--json", "-v", "--connect", "unix:/x"],
        ["client", "--server-path", "clangd", "--pass-env", "A", "--pass-env", "B"],
        ["client", "--no-autostart", "--token-file", "t", "--", "--log=verbose"],
        ["proxy"],
        ["proxy", "--config", "a.toml", "--config=b.toml", "--log-level", "debug"],
        ["proxy", "--log-file=/tmp/p.log", "--log-level=info", "--config", "c.toml"],
    ],
)
def test_a_fast_reader_reads_as_argparse_does(words: list[str]) -> None:
    fast = READERS[words[0]](words[1:])
    assert fast is not None, words
    full = _argparse_reading(words)
    assert full is not None, words
    assert _plain(vars(fast)) == _plain(full)


def test_the_proxy_reader_gives_paths_as_argparse_does() -> None:
    """`lspmux proxy`'s log file and config files are Paths, whichever reader read them
    (`setup_logging` makes the log file's folder)."""
    fast = read_proxy(["--config", "a.toml", "--log-file", "p.log"])
    assert fast is not None
    assert fast.config == [PurePath("a.toml")] and isinstance(fast.config[0], PurePath)
    assert isinstance(fast.log_file, PurePath)


_PROXY_WORDS = [
    "--config",
    "--config=a.toml",
    "--log-file",
    "--log-file=p.log",
    "--log-level",
    "--log-level=debug",
    "--log-level=loud",
    "--conf",  # argparse takes an abbreviation; the fast reader leaves it to argparse
    "--log",
    "--",
    "-h",
    "debug",
    "warning",
    "a.toml",
    "-x",
]


@given(words=st.lists(st.sampled_from(_PROXY_WORDS), max_size=6))
def test_the_proxy_reader_reads_what_it_reads_as_argparse_does(words: list[str]) -> None:
    fast = read_proxy(words)
    if fast is not None:  # what it reads, argparse reads the same way
        assert _plain(vars(fast)) == _plain(_argparse_reading(["proxy", *words]) or {}), words


@pytest.mark.parametrize(
    "words",
    [
        ["diagnostics", "a.py", "--min-severity", "bogus"],
        ["diagnostics", "a.py", "--help"],
        ["diagnostics", "--json"],  # no path
        ["locate", "a@x", "b@y"],
        ["reload", "src", "--all"],
        ["status", "--bogus"],
        ["proxy", "--log-level", "loud"],
        ["proxy", "--conf", "a.toml"],
        ["proxy", "extra"],
        ["proxy", "--help"],
    ],
)
def test_what_a_fast_reader_cannot_read_is_argparses(words: list[str]) -> None:
    assert READERS[words[0]](words[1:]) is None


def test_an_unknown_severity_is_an_error_naming_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from lspmux.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["diagnostics", "a.py", "--min-severity", "bogus"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--min-severity: invalid choice: 'bogus'" in err, err
    assert all(repr(level) in err for level in SEVERITIES), err
