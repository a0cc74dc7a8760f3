"""A language-server subprocess: spawn (argv, never a shell), stdout into a `Connection`,
stderr drained line by line into the log (its last lines kept, to say why a server that
cannot start did not), exit reported, and a graceful-then-forceful stop.

The process starts in its own session (process group) so that stopping it also stops the
helpers it forked (node workers, tsserver), and no orphan survives the proxy — not even a
SIGKILL of lspmux: the watchdog (watchdog.py) is told every group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from lspmux.backends.watchdog import WATCHDOG
from lspmux.wire.connection import Connection
from lspmux.wire.stdio import widen

log = logging.getLogger("lspmux.backend")

#: Lines of a server's stderr kept (the last ones), for the error of a server that cannot start.
STDERR_LINES = 20


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, proc: ServerProcess) -> None:
        self.proc = proc
        self._stderr = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stdin = transport.get_pipe_transport(0)  # type: ignore[attr-defined]
        if stdin is not None:  # a spawned server's stdin is a pipe of lspmux's own (`spawn`)
            self.proc.conn.attach_writer(stdin)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        # stderr only: stdout is read by the connection (`Stdout`)
        buf = self._stderr
        buf += data
        while (nl := buf.find(b"\n")) >= 0:
            line = bytes(buf[:nl]).rstrip(b"\r")
            del buf[: nl + 1]
            if line:
                self._line(line)
        if len(buf) > 65536:  # a huge line without newline: log it in pieces
            self._line(bytes(buf))
            del buf[:]

    def _line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        log.info("%s stderr: %s", self.proc.name, text)
        self.proc.stderr_tail.append(text[:1000])

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.proc.conn.close(exc)
        elif fd == 2:
            if self._stderr.strip():  # a last line without newline
                self._line(bytes(self._stderr).rstrip(b"\r\n"))
            del self._stderr[:]
            if not self.proc.stderr_closed.done():
                self.proc.stderr_closed.set_result(None)

    def process_exited(self) -> None:
        self.proc._exited()


class Stdout(asyncio.BufferedProtocol):
    """A server's stdout, read in place by its connection where the event loop's pipes can
    (uvloop; `Connection.get_buffer`: a large answer is read straight into the buffer that is
    handed on, not gathered read by read and joined); its end is the subprocess protocol's
    (`pipe_connection_lost`)."""

    def __init__(self, protocol: _Protocol) -> None:
        self.protocol = protocol
        self.conn = protocol.proc.conn
        self.pass_reads()

    def pass_reads(self) -> None:
        """Let the transport call the connection's reading methods itself (it takes them once,
        when it is connected): no call of this protocol's at each read. `data_received` is
        for asyncio's pipes, which do not read in place."""
        conn = self.conn
        self.get_buffer = conn.get_buffer  # type: ignore[method-assign,assignment]
        self.buffer_updated = conn.buffer_updated  # type: ignore[method-assign,assignment]
        self.data_received = conn.data_received

    def eof_received(self) -> bool | None:
        return None  # the transport closes, then `connection_lost`

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.pipe_connection_lost(1, exc)


class Stdin(asyncio.BaseProtocol):
    """A spawned server's stdin, a pipe of lspmux's own (`ServerProcess.spawn`): its end is the
    subprocess protocol's, as the subprocess transport's own stdin's would be."""

    def __init__(self, protocol: _Protocol) -> None:
        self.protocol = protocol

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.pipe_connection_lost(0, exc)


class ServerProcess:
    """One running server process and the JSON-RPC connection to it."""

    def __init__(self, name: str, conn: Connection, on_exit: Callable[[int | None], None]) -> None:
        self.name = name
        self.conn = conn
        self._on_exit = on_exit
        self._transport: asyncio.SubprocessTransport | None = None
        #: The transport reading its stdout (`Stdout`), once spawned.
        self._stdout: asyncio.ReadTransport | None = None
        #: The transport writing its stdin, once spawned (None: the subprocess transport's).
        self._stdin: asyncio.WriteTransport | None = None
        self.exited = asyncio.get_running_loop().create_future()
        #: The last lines the server wrote to stderr, and when it closed its stderr.
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.stderr_closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def spawn(
        cls,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        conn: Connection,
        on_exit: Callable[[int | None], None],
        initialize: Mapping[str, Any] | None = None,  # sent by the backend: nothing yet here
    ) -> ServerProcess:
        proc = cls(name, conn, on_exit)
        loop = asyncio.get_running_loop()
        full_env = {**os.environ, **env}
        protocol = _Protocol(proc)
        # stdout is a pipe of our own, read in place (`Stdout`), not the subprocess
        # transport's, which hands over each read as new bytes to be gathered and joined;
        # stdin too, the only way to give it a capacity (the transports give no descriptor)
        out, into = os.pipe()
        fed, feed = os.pipe()  # the server reads `fed`, lspmux writes `feed`
        for end in (out, feed):
            if not widen(end):  # a large answer at once, a cancel seen in time (`PIPE_SIZE`)
                log.debug("%s: a pipe keeps its size", name)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: protocol,
                *argv,
                stdin=fed,
                stdout=into,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env=full_env,
                start_new_session=True,
            )
        except BaseException:
            os.close(out)
            os.close(feed)
            raise
        finally:
            os.close(into)  # the server's ends, now its own: EOF comes when it closes them
            os.close(fed)
        proc._transport = transport
        writer = os.fdopen(feed, "wb", buffering=0)  # closed by its transport
        proc._stdin, _ = await loop.connect_write_pipe(lambda: Stdin(protocol), writer)
        conn.attach_writer(proc._stdin)
        reader = os.fdopen(out, "rb", buffering=0)  # closed by its transport
        proc._stdout, _ = await loop.connect_read_pipe(lambda: Stdout(protocol), reader)
        pid = transport.get_pid()
        if pid is not None:  # its group is stopped even if lspmux is killed (watchdog.py)
            WATCHDOG.watch(pid)
        log.info("%s: started pid %s: %s (in %s)", name, transport.get_pid(), " ".join(argv), cwd)
        return proc

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode() if self._transport is not None else None

    def _exited(self) -> None:
        if self.pid is not None:
            WATCHDOG.release(self.pid)
        stdin = self._stdin  # its pipe, lspmux's own, is closed with the process
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        code = self.returncode
        if not self.exited.done():
            self.exited.set_result(code)
        self._on_exit(code)

    async def last_stderr(self, timeout: float) -> list[str]:
        """The last lines of stderr, once the process closed it (or after `timeout`): a server
        that dies at start often writes why just before its end."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.stderr_closed), timeout)
        return list(self.stderr_tail)

    def close_stdin(self) -> None:
        if self._transport is None:
            return
        stdin = self._stdin or self._transport.get_pipe_transport(0)
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    def kill(self) -> None:
        """SIGKILL the whole process group."""
        pid = self.pid
        if pid is None or self.exited.done():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self._transport.kill()  # type: ignore[union-attr]

    async def wait(self, timeout: float) -> bool:
        """Wait for the process to exit; True when it did within `timeout`."""
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
            return True
        except TimeoutError:
            return False

    def kill_group_leftovers(self) -> None:
        """After the leader exited, kill helpers it left in its process group."""
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


class Spawn(Protocol):
    """How a server process is started: `ServerProcess.spawn`, `Prespawned.spawn` (a process
    started at launch), or a test's in-memory server."""

    def __call__(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        conn: Connection,
        on_exit: Callable[[int | None], None],
        initialize: Mapping[str, Any] | None = None,
    ) -> Awaitable[ServerProcess]:
        """`initialize`: the params of the `initialize` the backend sends first (a process
        started at launch was sent it then: `adopt.py`)."""
