"""A language-server subprocess: spawn (argv, never a shell), stdout into a `Connection`,
stderr drained line by line into the log, exit reported, and a graceful-then-forceful stop.

The process starts in its own session (process group) so that stopping it also stops the
helpers it forked (node workers, tsserver), and no orphan survives the proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path

from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.backend")

#: Lines of a server's stderr kept for the report of its crash.
STDERR_TAIL = 20


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, proc: ServerProcess) -> None:
        self.proc = proc
        self._stderr = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stdin = transport.get_pipe_transport(0)  # type: ignore[attr-defined]
        self.proc.conn.attach_writer(stdin)

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.proc.conn.data_received(data)
            return
        buf = self._stderr
        buf += data
        while (nl := buf.find(b"\n")) >= 0:
            line = bytes(buf[:nl]).rstrip(b"\r")
            del buf[: nl + 1]
            if line:
                self._line(bytes(line))
        if len(buf) > 65536:  # a huge line without newline: log it in pieces
            self._line(bytes(buf))
            del buf[:]

    def _line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        log.info("%s stderr: %s", self.proc.name, text)
        self.proc.stderr_tail.append(text[:500])

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.proc.conn.close(exc)
        elif fd == 2 and self._stderr.strip():  # a last line without its newline
            self._line(bytes(self._stderr).rstrip())
            del self._stderr[:]

    def process_exited(self) -> None:
        self.proc._exited()


class ServerProcess:
    """One running server process and the JSON-RPC connection to it."""

    def __init__(self, name: str, conn: Connection, on_exit: Callable[[int | None], None]) -> None:
        self.name = name
        self.conn = conn
        self._on_exit = on_exit
        self._transport: asyncio.SubprocessTransport | None = None
        self.exited = asyncio.get_running_loop().create_future()
        #: The last lines the server wrote to stderr (a crash report quotes them).
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)

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
    ) -> ServerProcess:
        proc = cls(name, conn, on_exit)
        loop = asyncio.get_running_loop()
        full_env = {**os.environ, **env}
        transport, _ = await loop.subprocess_exec(
            lambda: _Protocol(proc),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=full_env,
            start_new_session=True,
        )
        proc._transport = transport
        log.info("%s: started pid %s: %s (in %s)", name, transport.get_pid(), " ".join(argv), cwd)
        return proc

    @property
    def pid(self) -> int | None:
        return self._transport.get_pid() if self._transport is not None else None

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode() if self._transport is not None else None

    def _exited(self) -> None:
        code = self.returncode
        if not self.exited.done():
            self.exited.set_result(code)
        self._on_exit(code)

    def close_stdin(self) -> None:
        if self._transport is None:
            return
        stdin = self._transport.get_pipe_transport(0)
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
