"""The verbs' command line: parsed from the tool table, and light to import (the fast path
through the daemon must not load asyncio, lsprotocol or the MCP SDK)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lspmux.agent import cli, specs

ROOT = Path(__file__).resolve().parents[3]


def test_every_tool_but_the_older_commands_is_a_verb_both_spellings() -> None:
    for name in specs.TOOLS:
        if name in cli.TAKEN:
            assert name not in cli.VERBS
        else:
            assert cli.VERBS[name].name == name
            assert cli.VERBS[name.replace("_", "-")].name == name


def test_verb_arguments() -> None:
    tool = specs.TOOLS["references"]
    ns = cli.build_verb_parser(tool).parse_args(
        ["a.py:1:2", "--no-include-declaration", "--limit", "5", "--json"]
    )
    assert cli.arguments_of(tool, ns) == {
        "at": "a.py:1:2",
        "include_declaration": False,
        "limit": 5,
    }
    tool = specs.TOOLS["code_actions"]
    ns = cli.build_verb_parser(tool).parse_args(["a.py:1:2", "--apply", "1", "--kind", "quickfix"])
    assert cli.arguments_of(tool, ns) == {
        "at": "a.py:1:2",
        "kind": "quickfix",
        "apply": 1,
        "check": True,
    }
    tool = specs.TOOLS["request"]
    ns = cli.build_verb_parser(tool).parse_args(["workspace/symbol", "--params", '{"query": "x"}'])
    assert cli.arguments_of(tool, ns) == {"method": "workspace/symbol", "params": {"query": "x"}}


def test_the_verb_path_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from lspmux.cli import main\n"
        "from lspmux.agent import cli\n"
        "cli._through_daemon  # the stdlib path\n"
        "from lspmux.daemon import shim\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('asyncio', 'lsprotocol', 'mcp', 'pydantic', 'anyio', 'attrs', 'dataclasses'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_lspmux_cli_hands_exactly_the_verbs_to_the_agent() -> None:
    from lspmux.cli import _AGENT_VERBS, build_parser

    assert set(cli.VERBS) | {"mcp"} == _AGENT_VERBS
    helptext = build_parser().format_help()
    assert "mcp" in helptext and "agent tool: find the definition of the symbol" in helptext


def _argparse_reading(tool: specs.Tool, words: list[str]) -> dict[str, object] | None:
    """argparse's namespace for `words`, or None when it refuses them (or prints help)."""
    parser = cli.build_verb_parser(tool)
    parser.exit = lambda status=0, message=None: (_ for _ in ()).throw(SystemExit(status))  # type: ignore[method-assign]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(parser.parse_args(words))
        except SystemExit:
            return None


def _words_for(tool: specs.Tool) -> st.SearchStrategy[list[str]]:
    names = [n for option in cli.verb_options(tool) for n in option.names]
    vocabulary = [
        *names,
        *(f"{n}=x" for n in names),
        *(f"{n}=7" for n in names),
        "--json",
        "--root",
        "--root=/r",
        "--private",
        "--config",
        "--bogus",
        "--",
        "-h",
        "a.py:1:2",
        "7",
        "-3",
        "x",
        "{}",
    ]
    return st.lists(st.sampled_from(vocabulary), max_size=7)


@given(data=st.data(), name=st.sampled_from(sorted(cli.VERBS)))
def test_the_fast_reader_reads_as_argparse_does(data: st.DataObject, name: str) -> None:
    tool = cli.VERBS[name]
    words = data.draw(_words_for(tool))
    fast = cli.read_verb(tool, words)
    if fast is not None:  # what it reads, argparse reads the same way
        assert vars(fast) == _argparse_reading(tool, words), words


def test_the_fast_reader_takes_the_usual_command_lines() -> None:
    examples = {
        "hover": ["a.py:1:2"],
        "definition": ["a.py:1:2", "--json", "--symbol", "x"],
        "references": ["a.py:1:2", "--no-include-declaration", "--limit=5", "--root", "/r"],
        "code-actions": ["a.py:1:2", "--apply", "1", "--kind", "quickfix"],
        "request": ["workspace/symbol", "--params", '{"query": "x"}'],
        "rename": ["a.py:1:2", "new", "--apply"],
    }
    for verb, words in examples.items():
        tool = cli.VERBS[verb]
        fast = cli.read_verb(tool, words)
        assert fast is not None, (verb, words)
        assert vars(fast) == _argparse_reading(tool, words), (verb, words)
    hover = cli.VERBS["hover"]
    for words in (["--help"], [], ["a", "b"], ["a.py:1:2", "--private"], ["x", "--limit"]):
        assert cli.read_verb(hover, words) is None, words  # argparse's to say or to run


def test_a_double_dash_is_left_to_argparse() -> None:
    """Hypothesis found `lspmux capabilities --` read by the fast reader where argparse (3.11)
    refuses it; how argparse reads `--` differs between Pythons, so it reads each one."""
    for tool in cli.VERBS.values():
        assert cli.read_verb(tool, ["--"]) is None
        assert cli.read_verb(tool, ["--json", "--", "x"]) is None
