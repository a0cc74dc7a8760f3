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
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import orjson

from lspmux.backends.pool import Pool
from lspmux.config.model import Config, ServerConfig
from lspmux.session.session import Session
from tests.polling import VirtualClockLoop, eventually

Handler = Callable[[Any], Any]


class Raw:
    """A handler's answer written as these exact body bytes (`{id}` is replaced by the id)."""

    def __init__(self, template: bytes) -> None:
        self.template = template


class Hang:
    """A handler's answer that never comes."""


class Held:
    """A handler's answer kept until the test calls `ScriptedServer.release()`: a late answer
    whose moment the test chooses, instead of a timer it must sleep past."""

    def __init__(self, value: Any) -> None:
        self.value = value


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
    iteration of the loop. `pending` counts the writes not delivered yet."""

    def __init__(self, deliver: Callable[[bytes], None]) -> None:
        self.deliver = deliver
        self.closed = False
        self.pending = 0
        self.loop = asyncio.get_running_loop()
        _PIPES.add(self)

    def write(self, data: bytes) -> None:
        if not self.closed:
            self.pending += 1
            self.loop.call_soon(self._deliver, bytes(data))

    def writelines(self, pieces: list[bytes | memoryview]) -> None:
        self.write(b"".join(bytes(p) for p in pieces))

    def _deliver(self, data: bytes) -> None:
        self.pending -= 1
        self.deliver(data)  # what was written before a close still arrives, as with a pipe

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0


class _Reader:
    """The fake peers' side of the framing: whole bodies out of the bytes received, and what is
    left over (a frame begun and never finished), so that the harness can tell that everything
    lspmux wrote was read. Not lspmux's own parser: the harness checks it, not uses it."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self.buf += data
        out = []
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return out
            length = None
            for line in bytes(self.buf[:end]).split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            assert length is not None, (
                f"{self.who} got a frame without Content-Length: {self.buf!r}"
            )
            if len(self.buf) < end + 4 + length:
                return out
            out.append(orjson.loads(bytes(self.buf[end + 4 : end + 4 + length])))
            del self.buf[: end + 4 + length]


class ScriptedServer:
    def __init__(
        self, name: str, capabilities: dict[str, Any], handlers: dict[str, Handler]
    ) -> None:
        self.name = name
        self.capabilities = capabilities
        self.handlers = handlers
        self.received: list[dict[str, Any]] = []
        self.initialize_delay = 0.0
        self.held: list[tuple[Any, Any]] = []  # (id, value) of `Held` answers not sent yet
        #: How often each of this server's own requests was answered (exactly once, each).
        self.answered: dict[Any, int] = {}
        self._reader = _Reader(f"server {name}")
        self._to_lspmux: _Pipe | None = None
        self._ids = itertools.count(1000)
        self._waiting: dict[Any, asyncio.Future[Any]] = {}
        self.exited: asyncio.Future[int | None] | None = None

    # -- bytes in and out -----------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        for msg in self._reader.feed(data):
            self._handle(msg)

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
            self.answered[msg.get("id")] = self.answered.get(msg.get("id"), 0) + 1
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
        if isinstance(value, Held):
            self.held.append((msg["id"], value.value))
            return
        if isinstance(value, Later):
            asyncio.get_running_loop().call_later(
                value.seconds, self._answer, msg["id"], value.value
            )
            return
        self._answer(msg["id"], value)

    def release(self) -> int:
        """Send every `Held` answer now; how many there were."""
        held, self.held = self.held, []
        for msg_id, value in held:
            self._answer(msg_id, value)
        return len(held)

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
        self.answered[msg_id] = 0
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
    """The editor side: sends requests and notifications, records every answer per id. It
    answers lspmux's requests whose method is in `answers`, and — as an editor does — a request
    of lspmux's that lspmux cancels, with RequestCancelled."""

    def __init__(self) -> None:
        self._reader = _Reader("the client")
        self.responses: dict[Any, list[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.answers: dict[str, Callable[[Any], Any]] = {}  # server→client method → answer
        self.sent_ids: list[Any] = []
        self._ids = itertools.count(1)
        self.to_lspmux: Callable[[bytes], None] | None = None
        self.unanswered: set[Any] = set()  # ids of lspmux's requests not answered yet

    def reply(self, msg_id: Any, result: Any) -> None:
        """Answer lspmux's request `msg_id` (one not in `answers`)."""
        self.unanswered.discard(msg_id)
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _cancelled(self, msg_id: Any) -> None:
        if msg_id in self.unanswered:
            self.unanswered.discard(msg_id)
            error = {"code": -32800, "message": "cancelled"}
            self.send({"jsonrpc": "2.0", "id": msg_id, "error": error})

    def feed(self, data: bytes) -> None:
        for msg in self._reader.feed(data):
            if "method" in msg and "id" in msg:
                self.server_requests.append(msg)
                answer = self.answers.get(msg["method"])
                if answer is not None:
                    self.send(
                        {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg.get("params"))}
                    )
                else:
                    self.unanswered.add(msg["id"])
            elif "method" in msg:
                self.notifications.append(msg)
                if msg["method"] == "$/cancelRequest":
                    self._cancelled((msg.get("params") or {}).get("id"))
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
        """Each request the client sent has exactly one answer, and no answer came for an id it
        never sent."""
        counts = {i: len(self.responses.get(i, [])) for i in self.sent_ids}
        wrong = {i: n for i, n in counts.items() if n != 1}
        assert not wrong, f"requests not answered exactly once (id: answers): {wrong}"
        strays = {i: r for i, r in self.responses.items() if i not in counts}
        assert not strays, f"answers to requests the client never sent: {strays}"

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


#: Every pipe made, so that `settle` can tell when nothing is on its way anywhere.
_PIPES: weakref.WeakSet[_Pipe] = weakref.WeakSet()


async def settle(*, quiet: float = 0.0, idle_rounds: int = 20, timeout: float = 5) -> None:
    """Wait until nothing is on its way: no pipe of this loop has an undelivered write, for
    `idle_rounds` loop iterations in a row (a message's handling may take a few iterations —
    a task started, a future awaited — before it writes).

    `quiet`: then let that many seconds pass and settle again, so that what lspmux's timers
    would send (a retry, a timeout, a poll's next turn) has arrived too. Only on a
    `VirtualClockLoop`, where that takes no time; on a real clock it is ignored and a test
    makes such things happen itself (`Held`, waiting for the event)."""
    loop = asyncio.get_running_loop()
    await _drain(loop, idle_rounds, timeout)
    if quiet and isinstance(loop, VirtualClockLoop):
        await asyncio.sleep(quiet)
        await _drain(loop, idle_rounds, timeout)


async def _drain(loop: asyncio.AbstractEventLoop, idle_rounds: int, timeout: float) -> None:
    deadline = loop.time() + timeout
    idle = 0
    while idle < idle_rounds:
        await asyncio.sleep(0)
        busy = [p for p in _PIPES if p.loop is loop and p.pending]
        idle = 0 if busy else idle + 1
        if loop.time() > deadline:
            raise AssertionError(
                f"the session kept talking for {timeout:g}s: {len(busy)} pipe(s) still busy"
            )


#: How long `check` lets pass (on a virtual clock) before it looks: longer than lspmux's
#: request timeout here (5 s), the wait of a pull for its sources (2 s) and its retries.
QUIET = 30.0


class MemorySession:
    """A Session, its client and its scripted servers, all in memory.

    `close()` first checks what every test must leave behind (see `check`): a test that closes
    its sessions gets the check, and the session tests' conftest fails a test that made one and
    did not close it."""

    #: Every MemorySession made (the conftest empties it per test and checks each was closed).
    made: ClassVar[list[MemorySession]] = []

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
        self.closed = False
        MemorySession.made.append(self)
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
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: Any,
        conn: Any,
        on_exit: Any,
        initialize: Any = None,
    ) -> Any:
        server = self.servers[name.split("[", 1)[0]]
        server._reader = _Reader(f"server {server.name}")
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

    async def check(self) -> None:
        """Once everything on its way has arrived: every client request answered exactly once,
        every request a scripted server sent answered exactly once, nothing left in flight,
        and every byte lspmux wrote to the client and the servers read (no frame cut short)."""
        await settle(quiet=QUIET)
        self.client.assert_answered_once()
        assert not self.session.inflight, (
            f"requests still in flight at lspmux: {sorted(self.session.inflight)}"
        )
        for server in self.servers.values():
            wrong = {i: n for i, n in server.answered.items() if n != 1}
            assert not wrong, (
                f"server {server.name}'s requests not answered exactly once (id: answers): {wrong}"
            )
        for reader in [self.client._reader, *(s._reader for s in self.servers.values())]:
            assert not reader.buf, f"{reader.who} was left a frame never finished: {reader.buf!r}"

    async def close(self, *, check: bool = True) -> None:
        """Check (unless `check` is false: a test that failed already) and stop everything —
        also when the check fails."""
        self.closed = True
        try:
            if check:
                await self.check()
        finally:
            await self.pool.stop_all()
            self.session.conn and self.session.conn.close(None)  # type: ignore[func-returns-value]
