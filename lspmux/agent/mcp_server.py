"""`lspmux mcp`: the agent tools as an MCP server on stdio, on the official `mcp` SDK.

One low-level `mcp` Server whose `tools/list` is built from `specs.TOOLS` and whose
`tools/call` runs the tool on one `AgentLsp` session (connected on the first call: to the
daemon, started when none runs, or a private proxy with `--private`). Every result carries
the text (`content`) and the structured data (`structuredContent`); a `ToolError` becomes a
result with `isError: true` whose text says what to do next. Logging goes to stderr or
`--log-file`, never stdout (the MCP channel).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from lspmux import __version__
from lspmux.agent import specs
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp

log = logging.getLogger("lspmux.agent.mcp")

INSTRUCTIONS = (
    "Language-server tools over lspmux: every server and linter of a file merged, warm and "
    "shared with the editor. Positions (`at`) are Locate strings "
    "('src/app.py:Greeter.greet@return <|>message'), 'path:line:col' (1-based) or 'path:line' "
    "plus `symbol`. Every location in a result is 'path:line:col' and can be passed back as "
    "`at`. Edits (rename, rename_file, code_actions, format) are previews (unified diffs) "
    "until called with apply."
)


class Tools:
    """The MCP handlers over one lazily connected session."""

    def __init__(self, root: Path, *, private: bool, configs: list[Path]) -> None:
        self.root = root
        self.private = private
        self.configs = configs
        self.lsp: AgentLsp | None = None
        self._lock = asyncio.Lock()
        self.listing = types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=specs.input_schema(t),
                    annotations=types.ToolAnnotations(
                        read_only_hint=not t.writes, destructive_hint=False, idempotent_hint=True
                    ),
                )
                for t in specs.TOOLS.values()
            ]
        )

    async def session(self) -> AgentLsp:
        async with self._lock:
            if self.lsp is None or self.lsp.client.closed:
                self.lsp = await AgentLsp.connect(
                    self.root,
                    private=self.private,
                    autostart=True,
                    configs=self.configs,
                    name="lspmux mcp",
                )
            return self.lsp

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return self.listing

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            lsp = await self.session()
            result = await specs.call(lsp, params.name, params.arguments)
        except ToolError as exc:
            return _result(exc.message, {"error": exc.message, **exc.data}, error=True)
        except Exception as exc:  # a bug must not kill the server: say it as a tool error
            log.exception("tool %s failed", params.name)
            return _result(f"{params.name} failed: {exc!r}", {"error": repr(exc)}, error=True)
        return _result(result.text, result.data)

    async def close(self) -> None:
        if self.lsp is not None:
            await self.lsp.close()


def _result(text: str, data: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data,
        is_error=error,
    )


def build_server(tools: Tools) -> Server[Any]:
    return Server(
        "lspmux",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )


def serve(root: Path, *, private: bool = False, configs: list[Path] | None = None) -> int:
    """Run the MCP server on stdin/stdout until the client closes it."""
    import anyio

    tools = Tools(root, private=private, configs=list(configs or []))
    server = build_server(tools)

    async def run() -> None:
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await tools.close()

    anyio.run(run)
    return 0
