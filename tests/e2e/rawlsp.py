"""A tiny raw-LSP client for driving one real server directly (no lspmux session): plain dicts
in and out, so tests see exactly what the server sends, in its own position encoding.

Server requests are recorded; `client/registerCapability` and the like are answered `null`,
`workspace/configuration` with one `null` per item. Notifications are kept per method.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any

import orjson

from lspmux.wire.framing import FrameParser, encode


class RawClient:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.notifications: list[tuple[str, Any]] = []
        self.server_requests: list[tuple[str, Any]] = []
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self.on_request: dict[str, Callable[[Any], Any]] = {}

    async def start(self, *argv: str, cwd: str | None = None) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self._reader = asyncio.create_task(self._read())

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(encode({"jsonrpc": "2.0", **message}))

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        parser = FrameParser()
        while data := await self.proc.stdout.read(65536):
            for body in parser.feed(data):
                if isinstance(body, bytes):
                    self._dispatch(orjson.loads(body))
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("the server closed its output"))

    def _dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if method is None:
            fut = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if fut is not None and not fut.done():
                if "error" in msg:
                    fut.set_exception(RuntimeError(f"server error: {msg['error']}"))
                else:
                    fut.set_result(msg.get("result"))
            return
        params = msg.get("params")
        if "id" in msg:
            self.server_requests.append((method, params))
            if method in self.on_request:
                result = self.on_request[method](params)
            elif method == "workspace/configuration":
                result = [None for _ in (params or {}).get("items", [])]
            else:
                result = None
            self._send({"id": msg["id"], "result": result})
        else:
            self.notifications.append((method, params))
        self._changed.set()

    async def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self._send({"id": msg_id, "method": method, "params": params})
        return await asyncio.wait_for(fut, timeout)

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def wait_for(self, probe: Callable[[], Any], what: str, timeout: float = 60) -> Any:
        """Wait until `probe()` is truthy (checked after each message); return its value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (value := probe()):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"{what}: not seen within {timeout:g}s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))
        return value

    def published(self, uri: str) -> list[dict[str, Any]]:
        """Every publishDiagnostics params for `uri`, oldest first."""
        return [
            p
            for m, p in self.notifications
            if m == "textDocument/publishDiagnostics" and p.get("uri") == uri
        ]

    async def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
