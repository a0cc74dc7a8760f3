"""The commands' fast readers (`client_options.read_args`: no argparse at start) read the
same words as the full parser does, into the same attributes; what they cannot read — help, a
mistake, a value not among an option's choices — is left to argparse, which says it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

import pytest

from lspmux.cli import build_parser, read_locate
from lspmux.cli_checks import SEVERITIES, read_diagnostics
from lspmux.daemon.client_options import parse_args, parse_status_args
from lspmux.daemon.commands import read_reload

READERS: dict[str, Callable[[list[str]], Any]] = {
    "locate": read_locate,
    "diagnostics": read_diagnostics,
    "reload": read_reload,
    "status": parse_status_args,
    "client": parse_args,
}


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
    ],
)
def test_a_fast_reader_reads_as_argparse_does(words: list[str]) -> None:
    fast = READERS[words[0]](words[1:])
    assert fast is not None, words
    full = vars(build_parser().parse_args(words))
    full.pop("command")
    # argparse makes `reload DIR` a Path: the same folder, as a string here (os.path reads both)
    assert vars(fast) == {k: str(v) if isinstance(v, PurePath) else v for k, v in full.items()}


@pytest.mark.parametrize(
    "words",
    [
        ["diagnostics", "a.py", "--min-severity", "bogus"],
        ["diagnostics", "a.py", "--help"],
        ["diagnostics", "--json"],  # no path
        ["locate", "a@x", "b@y"],
        ["reload", "src", "--all"],
        ["status", "--bogus"],
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
