"""The headless LSP client of lspmux: how its own commands (`lspmux diagnostics`, `locate`, the
agent tools) talk LSP to lspmux itself.

Standard library + orjson + `wire` only, so a command-line verb starts fast (frames are read
by `wire.framing.FrameParser`, like every other peer's). The peer is a child
process (a private `lspmux proxy`, or the `lspmux client` shim) or a stream pair (the daemon's
Unix socket, reached directly). The client keeps what a one-shot caller needs to know: the
published diagnostics per uri, the `$/progress` tokens still open, the last time anything was
published or reported, and the server's log/show messages. Requests from the server are
answered as a plain client would, or by `on_request` when the owner sets it (the agent
answers `workspace/applyEdit` itself).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from lspmux.errors import RequestFailed
from lspmux.wire.blocking import open_socket
from lspmux.wire.framing import FrameError, FrameParser, frame

#: Bytes asked of the stream per read.
READ_SIZE = 1 << 16

#: languageId by file extension, for the didOpen of files read from disk.
LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".swift": "swift",
    ".json": "json",
    ".md": "markdown",
}


class ReportError(Exception):
    """The run could not produce a report (the proxy did not start, a path matched nothing)."""


ServerRequestHandler = Callable[[str, Any], Awaitable[Any]]


class HeadlessClient:
    """Speaks LSP to lspmux over a child's stdin/stdout or a (reader, writer) stream pair."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process | None = None,
        *,
        reader: asyncio.StreamReader | None = None,
        writer: asyncio.StreamWriter | None = None,
    ) -> None:
        self.proc = proc
        if proc is not None:
            reader, writer = proc.stdout, proc.stdin  # type: ignore[assignment]
        assert reader is not None and writer is not None
        self._in = reader
        self._out = writer
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        self.last_publish = time.monotonic()
        self.last_progress = 0.0
        self.progress: set[Any] = set()
        self.messages: list[tuple[int, str]] = []
        self.on_request: ServerRequestHandler | None = None
        self.closed = False
        self._tasks: set[asyncio.Future[Any]] = set()
        self._reader = asyncio.ensure_future(self._read())

    def send(self, msg: dict[str, Any]) -> None:
        if self.closed:
            raise ReportError("lspmux closed the connection")
        self._out.write(frame(orjson.dumps({"jsonrpc": "2.0", **msg})))

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        self._ids += 1
        msg_id = self._ids
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = fut
        self.send({"id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            self._waiting.pop(msg_id, None)
            if not self.closed:
                self.notify("$/cancelRequest", {"id": msg_id})
            raise ReportError(f"{method}: no answer from lspmux within {timeout:g}s") from None

    async def _read(self) -> None:
        stream = self._in
        parser = FrameParser()
        try:
            while data := await stream.read(READ_SIZE):
                for item in parser.feed(data):
                    if isinstance(item, FrameError):
                        if item.fatal:  # nothing after it can be read
                            return
                        continue
                    self._handle(orjson.loads(item))
        except ConnectionError:
            return
        finally:
            self.closed = True
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(ReportError("lspmux exited before answering"))

    def _handle(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:
            fut = self._waiting.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if fut is not None and not fut.done():
                if "error" in msg:
                    err = msg["error"] or {}
                    fut.set_exception(
                        LspError(err.get("message"), err.get("code"), err.get("data"))
                    )
                else:
                    fut.set_result(msg.get("result"))
            return
        params = msg.get("params") or {}
        if "id" in msg:
            task = asyncio.ensure_future(self._answer(msg["id"], method, params))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        if method == "textDocument/publishDiagnostics":
            self.diagnostics[params.get("uri", "")] = list(params.get("diagnostics") or [])
            self.last_publish = time.monotonic()
        elif method == "$/progress":
            value = params.get("value") or {}
            self.last_progress = time.monotonic()
            if value.get("kind") == "begin":
                self.progress.add(params.get("token"))
            elif value.get("kind") == "end":
                self.progress.discard(params.get("token"))
        elif method in ("window/logMessage", "window/showMessage"):
            self.messages.append((int(params.get("type") or 4), str(params.get("message"))))

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        """Answer a request from the server: the owner's handler, else what a plain client
        would say (settings unknown, no folders, anything else null)."""
        result: Any = None
        try:
            if self.on_request is not None:
                result = await self.on_request(method, params)
            elif method == "workspace/configuration":
                result = [None for _ in params.get("items") or ()]
            elif method == "workspace/workspaceFolders":
                result = []
        except Exception as exc:
            if not self.closed:
                self.send({"id": msg_id, "error": RequestFailed(str(exc)).to_response_error()})
            return
        if not self.closed:
            self.send({"id": msg_id, "result": result})

    async def close(self) -> None:
        try:
            await self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
        except (ReportError, ConnectionError):
            pass
        if self.proc is not None:
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        else:
            self._out.close()
        self._reader.cancel()


class LspError(ReportError):
    """An error answer from lspmux: its message, JSON-RPC code and data."""

    def __init__(self, message: Any, code: Any = None, data: Any = None) -> None:
        super().__init__(str(message))
        self.code = code
        self.data = data


def daemon_running() -> bool:
    """Whether an lspmux daemon answers on its default socket (env LSPMUX_ADDRESS)."""
    from lspmux.daemon.address import resolve_client  # the address rules only

    try:
        address = resolve_client(None)
        if not address.is_unix:
            return False
        open_socket(address.path, timeout=0.5).close()
    except Exception:
        return False
    return True


def command(configs: list[Any], *, use_daemon: bool) -> list[str]:
    """The argv of the LSP endpoint: the daemon's client shim, or a private proxy."""
    if use_daemon:
        return [sys.executable, "-m", "lspmux", "client", "--no-autostart"]
    argv = [sys.executable, "-m", "lspmux", "proxy", "--log-level", "warning"]
    for cfg in configs:
        argv += ["--config", str(cfg)]
    return argv


def initialize_params(root: Any, name: str, **capabilities: Any) -> dict[str, Any]:
    """`initialize` params for a headless client of lspmux rooted at `root` (a Path)."""
    caps: dict[str, Any] = {"general": {"positionEncodings": ["utf-16"]}}
    caps.update(capabilities)
    return {
        "processId": os.getpid(),
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": caps,
        "clientInfo": {"name": name},
    }
