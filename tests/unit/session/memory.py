"""An in-memory Session for unit tests: a client peer and scripted servers, no processes.

`MemorySession` wires a real `Session` (the proxy's, with a private pool) to a `ClientPeer` over
an in-memory byte transport, and starts every configured server as a `ScriptedServer` in memory
through the pool's `spawn` hook. Bytes still go through lspmux's framing and connections, and
each side's messages are delivered on a later loop iteration, as a pipe would.

`ScriptedServer` answers `initialize` with the capabilities it was given and every other
request through `handlers` (method → function(params) returning a result; `RAW` bodies, delays
and errors on demand); it records every message it receives, and can send requests and
notifications of its own. `ClientPeer` records every response per request id, so a test can
assert that each request got exactly one answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from lspmux.backends.pool import Pool
from lspmux.config.model import Config, ServerConfig
from lspmux.session.session import Session
from lspmux.wire.framing import FrameParser, encode
from tests.polling import eventually

Handler = Callable[[Any], Any]


class Raw:
    """A handler's answer written as these exact body bytes (`{id}` is replaced by the id)."""

    def __init__(self, template: bytes) -> None:
        self.template = template


class Hang:
    """A handler's answer that never comes."""


class Later:
    """A handler's answer after `seconds`."""

    def __init__(self, seconds: float, value: Any) -> None:
        self.seconds, self.value = seconds, value


class Fail(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class _Pipe:
    """One direction of an in-memory byte stream: writes reach `deliver` on a later
    iteration of the loop."""

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self.deliver = deliver
        self.closed = False
        self.loop = asyncio.get_running_loop()

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.loop.call_soon(self._deliver, bytes(data))

    def writelines(self, pieces: list[bytes | memoryview]) -> None:
        self.write(b"".join(bytes(p) for p in pieces))

    def _deliver(self, data: bytes) -> None:
        self.deliver(data)  # what was written before a close still arrives, as with a pipe

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0


class ScriptedServer:
    def __init__(
        self, name: str, capabilities: dict[str, Any], handlers: dict[str, Handler]
    ) -> None:
        self.name = name
        self.capabilities = capabilities
        self.handlers = handlers
        self.received: list[dict[str, Any]] = []
        self.initialize_delay = 0.0
        self._parser = FrameParser()
        self._to_lspmux: _Pipe | None = None
        self._ids = itertools.count(1000)
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self.exited: asyncio.Future[int | None] | None = None

    # -- bytes in and out -----------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        for body in self._parser.feed(data):
            if isinstance(body, bytes):
                self._handle(orjson.loads(body))

    def write(self, msg: dict[str, Any]) -> None:
        try:
            body = orjson.dumps(msg)
        except TypeError:
            body = json.dumps(msg).encode()
        self.write_body(body)

    def write_body(self, body: bytes) -> None:
        assert self._to_lspmux is not None
        self._to_lspmux.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    # -- what the server does ---------------------------------------------------------------------

    def _handle(self, msg: dict[str, Any]) -> None:
        self.received.append(msg)
        if "method" not in msg:  # an answer to one of our requests
            fut = self._waiting.pop(msg.get("id"), None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return
        method = msg["method"]
        if "id" not in msg:
            if method == "exit":
                self.exit(0)
            return
        if method == "initialize":
            result = {"capabilities": self.capabilities, "serverInfo": {"name": self.name}}
            if self.initialize_delay:
                asyncio.get_running_loop().call_later(
                    self.initialize_delay, self._answer, msg["id"], result
                )
            else:
                self._answer(msg["id"], result)
            return
        if method == "shutdown":
            self._answer(msg["id"], None)
            return
        handler = self.handlers.get(method)
        if handler is None:
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "error": {"code": -32601, "message": f"no {method}"},
                }
            )
            return
        try:
            value = handler(msg.get("params"))
        except Fail as exc:
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "error": {"code": exc.code, "message": exc.message},
                }
            )
            return
        if isinstance(value, Hang):
            return
        if isinstance(value, Later):
            asyncio.get_running_loop().call_later(
                value.seconds, self._answer, msg["id"], value.value
            )
            return
        self._answer(msg["id"], value)

    def _answer(self, msg_id: Any, value: Any) -> None:
        if isinstance(value, Raw):
            self.write_body(value.template.replace(b"{id}", orjson.dumps(msg_id)))
        else:
            self.write({"jsonrpc": "2.0", "id": msg_id, "result": value})

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method and "id" not in m]

    def methods(self) -> list[str]:
        return [m["method"] for m in self.received if "method" in m]

    def request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        """Send lspmux a request; (its id, a future of the answer)."""
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = fut
        self.write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, fut

    def notify(self, method: str, params: Any) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def exit(self, code: int | None) -> None:
        if self.exited is not None and not self.exited.done():
            self.exited.set_result(code)
            if self._to_lspmux is not None:
                self._to_lspmux.close()
            if self._on_exit is not None:
                self._on_exit(code)

    _on_exit: Callable[[int | None], None] | None = None


class _MemoryProcess:
    """What the backend needs of a `ServerProcess`, over a `ScriptedServer`."""

    pid = 4242

    def __init__(self, server: ScriptedServer) -> None:
        self.server = server
        assert server.exited is not None
        self.exited = server.exited

    def close_stdin(self) -> None:
        self.server.exit(0)

    def kill(self) -> None:
        self.server.exit(-9)

    async def wait(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
            return True
        except TimeoutError:
            return False

    def kill_group_leftovers(self) -> None:
        pass


class ClientPeer:
    """The editor side: sends requests and notifications, records every answer per id."""

    def __init__(self) -> None:
        self._parser = FrameParser()
        self.responses: dict[Any, list[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.answers: dict[str, Callable[[Any], Any]] = {}  # server→client method → answer
        self.sent_ids: list[Any] = []
        self._ids = itertools.count(1)
        self.to_lspmux: Callable[[bytes], None] | None = None

    def feed(self, data: bytes) -> None:
        for body in self._parser.feed(data):
            if not isinstance(body, bytes):
                continue
            msg = orjson.loads(body)
            if "method" in msg and "id" in msg:
                self.server_requests.append(msg)
                answer = self.answers.get(msg["method"])
                if answer is not None:
                    self.send(
                        {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg.get("params"))}
                    )
            elif "method" in msg:
                self.notifications.append(msg)
            else:
                self.responses.setdefault(msg.get("id"), []).append(msg)

    def send(self, msg: dict[str, Any]) -> None:
        try:
            body = orjson.dumps(msg)
        except TypeError:  # deeper than orjson goes: a client in another language may send it
            body = json.dumps(msg).encode()
        self.send_body(body)

    def send_body(self, body: bytes) -> None:
        assert self.to_lspmux is not None
        self.to_lspmux(encode_body(body))

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        msg_id = next(self._ids) if msg_id is None else msg_id
        self.sent_ids.append(msg_id)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    async def answer(self, msg_id: Any, timeout: float = 10) -> dict[str, Any]:
        """The (first) response to `msg_id`, waiting for it."""
        await until(lambda: msg_id in self.responses, f"an answer to request {msg_id}", timeout)
        return self.responses[msg_id][0]

    def assert_answered_once(self) -> None:
        counts = {i: len(self.responses.get(i, [])) for i in self.sent_ids}
        wrong = {i: n for i, n in counts.items() if n != 1}
        assert not wrong, f"requests not answered exactly once (id: answers): {wrong}"

    def published(self, uri: str) -> list[dict[str, Any]]:
        return [
            n["params"]
            for n in self.notifications
            if n["method"] == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
        ]


def encode_body(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def until(probe: Callable[[], Any], what: str, timeout: float = 10) -> Any:
    """`eventually`, polling often: everything here is in memory."""
    return await eventually(probe, what, timeout=timeout, step=0.005)


class MemorySession:
    """A Session, its client and its scripted servers, all in memory."""

    def __init__(
        self,
        tmp_path: Path,
        servers: dict[str, ScriptedServer],
        *,
        file_types: tuple[str, ...] = (".py",),
        share_with: MemorySession | None = None,
        client_id: str = "memory",
        file_types_of: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        """`share_with`: another MemorySession whose (then shared) pool this one joins, as a
        second client of the daemon does."""
        self.root = tmp_path
        self.servers = servers
        config = Config(
            servers={
                name: ServerConfig(
                    name=name,
                    command=("python3",),
                    file_types=(file_types_of or {}).get(name, file_types),
                    request_timeout=5.0,
                )
                for name in servers
            }
        )
        if share_with is not None:
            self.pool = share_with.pool
            self.pool.shared = True
        else:
            self.pool = Pool(shared=False, spawn=self._spawn)
        self.exited: list[int] = []
        self.session = Session(
            self.pool,
            lambda _root: config,
            client_id=client_id,
            on_exit=lambda _s, c: self.exited.append(c),
        )
        self.client = ClientPeer()
        conn = self.session.connection("memory-client", duplex=False)
        to_client = _Pipe(self.client.feed)
        conn.attach_writer(to_client)  # type: ignore[arg-type]
        self.client.to_lspmux = _Pipe(conn.data_received).write

    async def _spawn(
        self, name: str, argv: list[str], *, cwd: Path, env: Any, conn: Any, on_exit: Any
    ) -> Any:
        server = self.servers[name.split("[", 1)[0]]
        server._parser = FrameParser()
        server.exited = asyncio.get_running_loop().create_future()
        server._on_exit = on_exit
        server._to_lspmux = _Pipe(conn.data_received)
        conn.attach_writer(_Pipe(server.feed))
        return _MemoryProcess(server)

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        msg_id = self.client.request(
            "initialize",
            {"processId": None, "rootUri": self.root.as_uri(), "capabilities": capabilities or {}},
        )
        answer = await self.client.answer(msg_id)
        self.client.notify("initialized", {})
        return answer

    def open(self, name: str, text: str, version: int = 1, language_id: str = "python") -> str:
        uri = self.uri(name)
        self.client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": language_id,
                    "version": version,
                    "text": text,
                }
            },
        )
        return uri

    def change(
        self, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
    ) -> None:
        """An incremental didChange replacing `start`..`end` (line, character) by `text`."""
        rng = {
            "start": {"line": start[0], "character": start[1]},
            "end": {"line": end[0], "character": end[1]},
        }
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": rng, "text": text}],
            },
        )

    async def close(self) -> None:
        await self.pool.stop_all()
        self.session.conn and self.session.conn.close(None)  # type: ignore[func-returns-value]


_ = encode  # the framing module's encoder frames dicts; bodies here are framed by encode_body
