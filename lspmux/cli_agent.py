"""The agent verbs on the command line (docs/agents.md): their names, and help entries.

`lspmux.cli.main` hands these verbs to `lspmux.agent.cli` before parsing, so that they start
fast; the full parser only lists them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux.cli` imports this on every start
if TYPE_CHECKING:
    import argparse

AGENT_VERBS = frozenset(
    [
        "mcp",
        "definition",
        "type_definition",
        "type-definition",
        "implementation",
        "declaration",
        "references",
        "hover",
        "symbols",
        "workspace_symbols",
        "workspace-symbols",
        "rename",
        "rename_file",
        "rename-file",
        "code_actions",
        "code-actions",
        "format",
        "call_hierarchy",
        "call-hierarchy",
        "check_edit",
        "check-edit",
        "source",
        "replace_symbol",
        "replace-symbol",
        "insert_before",
        "insert-before",
        "insert_after",
        "insert-after",
        "safe_delete",
        "safe-delete",
        "type_hierarchy",
        "type-hierarchy",
        "explore",
        "batch",
        "describe",
        "capabilities",
        "request",
    ]
)


def add_agent_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Help entries only: `main` hands the verbs to lspmux.agent.cli before parsing. The
    kebab-case names are the documented ones (`call-hierarchy`); the snake_case ones (the MCP
    tools' names) are still accepted, and left out of the help."""
    sub.add_parser(
        "mcp",
        help="serve the agent tools over MCP on stdio (docs/agents.md)",
        add_help=False,
    )
    from lspmux.agent.cli import VERBS

    for verb in sorted(v for v in AGENT_VERBS if v != "mcp" and "_" not in v):
        summary = VERBS[verb].description.split(". ")[0]
        sub.add_parser(verb, help=f"agent tool: {summary[0].lower()}{summary[1:]}", add_help=False)
