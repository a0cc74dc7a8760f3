"""The verbs' command line: parsed from the tool table, and light to import (the fast path
through the daemon must not load asyncio, lsprotocol or the MCP SDK)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
