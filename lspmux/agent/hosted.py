"""The agent tools run inside the daemon, for `lspmux <verb>`: `lspmux/tool`.

A verb on the command line sends one request (`lspmux/tool`: root, tool name, arguments) as
the first message of a connection to the daemon, with the standard library only, and prints
the answer: no event loop, no LSP session of its own, nothing to open. The daemon keeps one
agent session per workspace root (an `AgentLsp` connected to the daemon's own socket, like any
client), so files stay open and backends stay warm between verbs; a session unused for
`IDLE` seconds is closed, letting the daemon's reaper stop instances nobody uses.

`lspmux locate` sends `lspmux/locate` (root, Locate string, range) the same way: the string is
resolved in the root's session (its file synced from disk first, as the `at` of a tool is), and
the answer — or the error, nearest candidates included — is `locate/resolve`'s own.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from lspmux.agent import paths, specs
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.reach import DaemonQuery
from lspmux.errors import InvalidParams, JsonRpcError, RequestFailed
from lspmux.headless import HeadlessClient, LspError, ReportError
from lspmux.locate.command import RESOLVE_TIMEOUT

IDLE = 600.0
#: How long `lspmux/locate` may take (the file's server may be starting).


class HostedTools:
    """Agent sessions per root inside the daemon at `socket_path`."""

    def __init__(self, socket_path: str | None, query: DaemonQuery) -> None:
        self.socket_path = socket_path
        self.query = query
        self.sessions: dict[Path, AgentLsp] = {}
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._lock = asyncio.Lock()
        self._busy: dict[Path, asyncio.Lock] = {}

    async def run(self, params: dict[str, Any]) -> dict[str, Any]:
        """`{"text", "data"}`, or `{"error", "data"}` for a ToolError."""
        name = params.get("name")
        root_given = params.get("root")
        try:
            if not isinstance(name, str) or not isinstance(root_given, str):
                raise ToolError("lspmux/tool needs `root` (a folder) and `name` (a tool)")
            root = Path(os.path.realpath(root_given))
            if not root.is_dir():
                raise ToolError(f"the workspace root {root_given} is not a folder")
            lsp = await self._session(root)
            async with self._busy.setdefault(root, asyncio.Lock()):  # one tool at a time per root
                result = await specs.call(lsp, name, params.get("arguments") or {})
        except ToolError as exc:
            return {"error": exc.message, "data": {"error": exc.message, **exc.data}}
        finally:
            if isinstance(root_given, str):
                self._touch(Path(os.path.realpath(root_given)))
        return {"text": result.text, "data": result.data}

    async def locate(self, params: dict[str, Any]) -> Any:
        """`lspmux/locate`: `locate/resolve` (`locate/resolveRange` when `range`) of the
        string `locate` in the session for `root`; its error raised as the session gave it."""
        spec, root_given = params.get("locate"), params.get("root")
        if not isinstance(spec, str) or not isinstance(root_given, str):
            raise InvalidParams("lspmux/locate needs `root` (a folder) and `locate` (a string)")
        root = Path(os.path.realpath(root_given))
        if not root.is_dir():
            raise InvalidParams(f"lspmux: the workspace root {root_given} is not a folder")
        method = "locate/resolveRange" if params.get("range") else "locate/resolve"
        try:
            lsp = await self._session(root)
            async with self._busy.setdefault(root, asyncio.Lock()):
                named = paths.locate_file(root, spec)
                if named is not None:  # what the session holds for it is the disk's text
                    await lsp.sync(named)
                return await lsp.client.request(method, {"locate": spec}, timeout=RESOLVE_TIMEOUT)
        except LspError as exc:
            error = {"code": exc.code, "message": str(exc), "data": exc.data}
            raise JsonRpcError.from_error(error) from None
        except (ToolError, ReportError) as exc:
            raise RequestFailed(f"lspmux: {method}: {exc}") from None
        finally:
            self._touch(root)

    async def _session(self, root: Path) -> AgentLsp:
        async with self._lock:
            lsp = self.sessions.get(root)
            if lsp is not None and not lsp.client.closed:
                return lsp
            if self.socket_path is None:
                raise ToolError("this daemon listens on TCP only; run the verb with --private")
            reader, writer = await asyncio.open_unix_connection(self.socket_path, limit=1 << 24)
            lsp = AgentLsp(root, HeadlessClient(reader=reader, writer=writer),
                           daemon_query=self.query)  # fmt: skip
            lsp.name = "lspmux verbs"
            await lsp.initialize()
            self.sessions[root] = lsp
            return lsp

    def _touch(self, root: Path) -> None:
        timer = self._timers.pop(root, None)
        if timer is not None:
            timer.cancel()
        if root in self.sessions:
            loop = asyncio.get_running_loop()
            self._timers[root] = loop.call_later(IDLE, self._expire, root)

    def _expire(self, root: Path) -> None:
        self._timers.pop(root, None)
        lsp = self.sessions.pop(root, None)
        if lsp is not None:
            task = asyncio.ensure_future(lsp.close())
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        sessions, self.sessions = list(self.sessions.values()), {}
        for lsp in sessions:
            try:
                await asyncio.wait_for(lsp.close(), 10)
            except Exception:
                continue
