"""`lspmux <verb> ...`: the agent tools on the command line, and `lspmux mcp`.

Each tool of `specs.TOOLS` is a verb (`lspmux definition src/app.py:12:16`; hyphens or
underscores: `lspmux type-definition`), its required arguments positional in table order,
the others `--options`. The verb talks to the running daemon (shared, warm backends), or to a
private `lspmux proxy` when none answers (`--private` forces it). Text by default, `--json`
for the structured result; a ToolError goes to stderr with exit status 1. The verbs `locate`,
`diagnostics`, `status` and `reload` keep their older commands (same information).

Fast path: with a daemon running, the verb is one `lspmux/tool` request on the daemon's
socket, sent with the standard library only (no event loop, no LSP session here); the daemon
runs the tool in its warm agent session for the root (lspmux/agent/hosted.py). Without a
daemon (or with --private) the tool runs here over a private proxy.
"""

from __future__ import annotations

import json
import os
import sys

from lspmux.agent.specs import TOOLS, Tool
from lspmux.options import Option, read_args

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the verbs start fast (typing costs ms)
if TYPE_CHECKING:  # argparse only for help, a mistake, or the private and remote runs
    import argparse
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

#: Verbs that older commands of `lspmux` already own (their output contracts are kept).
TAKEN = frozenset({"locate", "diagnostics", "status", "reload"})
VERBS: dict[str, Tool] = {}
for _tool in TOOLS.values():
    if _tool.name not in TAKEN:
        VERBS[_tool.name] = _tool
        VERBS[_tool.name.replace("_", "-")] = _tool

#: The session options that the fast reader knows; the others (`--private`, `--config`, the
#: `--remote` ones) run no faster than argparse's reading of them, which the reader leaves it.
FAST_SESSION_OPTIONS = (
    Option("--json", dest="json", kind="flag", help="print the structured result as JSON"),
    Option("--root", dest="root", metavar="DIR", help="workspace root (default: cwd)"),
)


def session_defaults() -> dict[str, Any]:
    """What argparse's session options (`add_session_options`) hold when not given."""
    return {
        "private": False,
        "config": [],
        "remote": None,
        "remote_exec": None,
        "map": None,
        "remote_lspmux": None,
    }


def add_session_options(p: argparse.ArgumentParser) -> None:
    from lspmux.cli_common import add_config
    from lspmux.remote.cli import add_remote_options

    FAST_SESSION_OPTIONS[1].add_to(p)
    p.add_argument(
        "--private",
        action="store_true",
        help="run a private lspmux proxy instead of using the daemon",
    )
    add_config(p, "one more TOML config file merged on top (implies --private)")
    add_remote_options(p)


def verb_options(tool: Tool) -> tuple[Option, ...]:
    """The tool's optional arguments as options: `--name VALUE`, a boolean as `--name` (or
    `--no-name` when it defaults to true)."""
    options = []
    for arg in tool.args:
        if arg.required:
            continue
        flag = f"--{arg.name.replace('_', '-')}"
        if arg.type == "boolean" and arg.default:
            flag = f"--no-{arg.name.replace('_', '-')}"
            options.append(Option(flag, dest=arg.name, kind="off", help=arg.doc))
        elif arg.type == "boolean":
            options.append(Option(flag, dest=arg.name, kind="flag", help=arg.doc))
        else:
            convert = int if arg.type == "integer" else None
            options.append(
                Option(flag, dest=arg.name, default=arg.default, convert=convert, help=arg.doc)
            )
    return tuple(options)


def build_verb_parser(tool: Tool, prog: str = "lspmux") -> argparse.ArgumentParser:
    import argparse

    p = argparse.ArgumentParser(prog=f"{prog} {tool.name}", description=tool.description)
    for arg in tool.args:
        if arg.required:
            p.add_argument(arg.name, metavar=arg.name.upper(), help=arg.doc)
    for option in verb_options(tool):
        option.add_to(p)
    FAST_SESSION_OPTIONS[0].add_to(p)
    add_session_options(p)
    return p


def read_verb(tool: Tool, words: Sequence[str]) -> argparse.Namespace | None:
    """The verb's command line (after the verb) read without argparse, from the same table as
    `build_verb_parser`; None when argparse must read it (help, a mistake, an option the fast
    path does not take, a `--`: what argparse makes of it differs between Pythons)."""
    if "--" in words:
        return None
    options = (*verb_options(tool), *FAST_SESSION_OPTIONS)
    ns = read_args(words, options, rest="positional", **session_defaults())
    required = [arg.name for arg in tool.args if arg.required]
    if ns is None or len(ns.positional) != len(required):
        return None
    for name, value in zip(required, ns.positional, strict=True):
        setattr(ns, name, value)
    del ns.positional
    return ns


def arguments_of(tool: Tool, ns: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arg in tool.args:
        value = getattr(ns, arg.name)
        if value is None:
            continue
        if arg.type == "string|integer" and isinstance(value, str) and value.isdigit():
            value = int(value)
        if arg.type in ("object", "array") and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as exc:
                print(f"lspmux {tool.name}: --{arg.name} is not JSON: {exc}", file=sys.stderr)
                raise SystemExit(2) from exc
        out[arg.name] = value
    return out


def main(words: Sequence[str]) -> int:
    """Run `lspmux VERB ...` (`words` starts with the verb)."""
    tool = VERBS[words[0]]
    ns: Any = read_verb(tool, words[1:]) or build_verb_parser(tool).parse_args(list(words[1:]))
    arguments = arguments_of(tool, ns)
    root = os.path.realpath(ns.root or os.getcwd())
    remote = _remote_words(ns)
    if not ns.private and not ns.config and not remote:
        answer = _through_daemon(tool, arguments, root)
        if answer is not None:
            return _print(tool, answer.get("text"), answer.get("data") or {},
                          answer.get("error"), as_json=ns.json)  # fmt: skip
    from pathlib import Path

    return _run(_verb(tool, arguments, Path(root), private=ns.private, configs=ns.config,
                      as_json=ns.json, remote=remote))  # fmt: skip


def _remote_words(ns: Any) -> list[str] | None:
    """`remote.cli.remote_words`, imported only when a remote is named (the relay's modules
    are no part of a verb the local daemon answers)."""
    if not (ns.remote or ns.remote_exec):
        return None
    from lspmux.remote.cli import remote_words

    return remote_words(ns)


def _through_daemon(tool: Tool, arguments: dict[str, Any], root: str) -> dict[str, Any] | None:
    """The tool run by the daemon (`lspmux/tool`), stdlib only; None when no daemon answers
    on the local socket (or it is too old to know the method)."""
    from lspmux.daemon.address import AddressError, resolve_client
    from lspmux.daemon.dial import ShimError, request

    try:
        address = resolve_client(None)
        if not address.is_unix:
            return None
        params = {"root": root, "name": tool.name, "arguments": arguments}
        answer = request(address, "lspmux/tool", params, token=None, timeout=600)
    except (OSError, AddressError):
        return None
    except ShimError as exc:
        if "expected initialize first" in str(exc):  # an older daemon
            return None
        return {"error": str(exc), "data": {"error": str(exc)}}
    return answer if isinstance(answer, dict) else None


def _print(tool: Tool, text: Any, data: dict[str, Any], error: Any, *, as_json: bool) -> int:
    if error is not None:
        if as_json:
            print(json.dumps(data, ensure_ascii=False))
        print(f"lspmux {tool.name}: {error}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(text)
    return 0


async def _verb(
    tool: Tool, arguments: dict[str, Any], root: Path, *, private: bool, configs: list[Path],
    as_json: bool, remote: list[str] | None = None,
) -> int:  # fmt: skip
    from lspmux.agent import specs
    from lspmux.agent.errors import ToolError
    from lspmux.agent.lsp import AgentLsp

    try:
        lsp = await AgentLsp.connect(
            root, private=private, configs=configs, name="lspmux cli", remote=remote
        )
    except ToolError as exc:
        print(f"lspmux {tool.name}: {exc.message}", file=sys.stderr)
        return 1
    try:
        result = await specs.call(lsp, tool.name, arguments)
    except ToolError as exc:
        data = {"error": exc.message, **exc.data}
        return _print(tool, None, data, exc.message, as_json=as_json)
    finally:
        await lsp.close()
    return _print(tool, result.text, result.data, None, as_json=as_json)


def _run(coro: Any) -> int:
    """Run a private (or remote) verb on the event loop of $LSPMUX_EVENT_LOOP (`run_loop`)."""
    from lspmux.cli_common import run_loop

    return run_loop(coro)


# -- lspmux mcp -------------------------------------------------------------------------------


def build_mcp_parser() -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    p = argparse.ArgumentParser(
        prog="lspmux mcp",
        description="Serve the agent tools over MCP on stdin/stdout (an MCP server for coding "
        "agents). By default it connects to the lspmux daemon, starting it when needed, so the "
        "agent shares warm language servers with the editor; --private runs its own. "
        "See docs/agents.md.",
    )
    add_session_options(p)
    p.add_argument("--log-file", type=Path, default=None, help="write the log here")
    return p


def mcp_main(words: Sequence[str]) -> int:
    ns = build_mcp_parser().parse_args(list(words))
    from pathlib import Path

    from lspmux.agent.mcp_server import serve

    root = Path(os.path.realpath(ns.root or os.getcwd()))
    return serve(root, private=ns.private, configs=ns.config, remote=_remote_words(ns))
