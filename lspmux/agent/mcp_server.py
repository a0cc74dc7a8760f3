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
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from lspmux import __version__
from lspmux.agent import specs
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.errors import InvalidRequest

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

    def __init__(
        self, root: Path, *, private: bool, configs: list[Path], remote: list[str] | None = None
    ) -> None:
        self.root = root
        self.remote = remote
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
                    remote=self.remote,
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


#: The longest MCP message (one line) read; a longer one is answered with an error and skipped.
MAX_LINE = 1 << 24


class _PipeLines:
    """stdin as the SDK's stdio transport reads it (`async for line`), on an asyncio pipe:
    no worker thread per line as with `anyio.wrap_file`.

    A line longer than `limit` is not held: it is answered at once with an InvalidRequest
    error (under its id when the top level of its first bytes names one), the rest of it is
    skipped as it arrives, and the next line is served as usual."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: _PipeWriter | None = None, limit: int = MAX_LINE
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.limit = limit
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline
        self._skipping = False

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        buf = self._buf
        while True:
            newline = buf.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(buf[: newline + 1])
                del buf[: newline + 1]
                self._scanned = 0
                if self._skipping:  # the end of a refused line
                    self._skipping = False
                    continue
                if len(line) > self.limit:  # it came whole, in one read
                    await self._refuse(line[:4096])
                    continue
                return line.decode("utf-8", "replace")
            self._scanned = len(buf)
            if not self._skipping and len(buf) > self.limit:
                await self._refuse(bytes(buf[:4096]))
                self._skipping = True
            if self._skipping:
                buf.clear()
                self._scanned = 0
            chunk = await self.reader.read(1 << 16)
            if not chunk:
                if buf and not self._skipping:
                    line = bytes(buf)
                    buf.clear()
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            buf += chunk

    async def _refuse(self, head: bytes) -> None:
        msg_id = top_level_id(head)
        log.warning("refused an MCP message of more than %d bytes (id %r)", self.limit, msg_id)
        if self.writer is None:
            return
        reply = {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": InvalidRequest(
                f"lspmux mcp: a message longer than {self.limit // (1 << 20)} MiB was refused; "
                "send less in one call (a path or a Locate string instead of a file's text)"
            ).to_response_error(),
        }
        await self.writer.write(json.dumps(reply) + "\n")
        await self.writer.flush()


def top_level_id(head: bytes) -> str | int | None:
    """The `id` of a JSON object from its first bytes, when its top level names one there (an
    `id` nested in params is not it), else None."""
    text = head.decode("utf-8", "replace")
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            key = text[i + 1 : end]
            i = end + 1
            if depth == 1 and key == "id":
                match = _ID_VALUE.match(text, i)
                if match:
                    return json.loads(match.group(1))  # type: ignore[no-any-return]
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return None


_ID_VALUE = re.compile(r'\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


class _PipeWriter:
    """stdout as the SDK writes it (`write`, `flush`), on an asyncio pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


async def _stdio_pipes() -> tuple[_PipeLines, _PipeWriter]:
    """The MCP channel on private copies of fd 0 and 1; fd 0 then reads /dev/null and fd 1
    goes to stderr, so nothing else in the process can write into the channel."""
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = _PipeWriter(asyncio.StreamWriter(transport, protocol, reader, loop))
    return _PipeLines(reader, writer), writer


def serve(
    root: Path,
    *,
    private: bool = False,
    configs: list[Path] | None = None,
    remote: list[str] | None = None,
) -> int:
    """Run the MCP server on stdin/stdout until the client closes it."""
    import anyio

    tools = Tools(root, private=private, configs=list(configs or []), remote=remote)
    server = build_server(tools)

    async def run() -> None:
        stdin, stdout = await _stdio_pipes()
        try:
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await tools.close()

    anyio.run(run)
    return 0
