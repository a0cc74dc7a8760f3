"""Server processes spawned before the event loop existed, taken over by their backends.

`lspmux proxy` spawns the servers its client's workspace needs as soon as it has read the
client's `initialize` (`proxy.py`), and sends each its own `initialize` at once (built as its
backend builds it: `initialize.py`), while asyncio, the session and the backends are still
being imported. `Prespawned` holds those processes (the watchdog was told of each at its
spawn); `Prespawned.spawn` is the pool's way to start a server: a backend asking for exactly
the argv, folder and environment of a waiting process, and whose `initialize` says exactly what
the process was sent, gets that process (its pipes connected to the event loop as
`ServerProcess.spawn` connects them; the `initialize` the backend writes is not written again,
and the server's answer, perhaps already waiting in the pipe, is read once the backend's
connection waits for it: `_SentAtLaunch`). Any other start spawns as usual, and a process whose
start or `initialize` differs is killed (`discard()`): a process runs only as the backend it was
started for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from lspmux.backends.initialize import says_the_same
from lspmux.backends.process import ServerProcess, Stdout, _Protocol
from lspmux.backends.watchdog import WATCHDOG
from lspmux.wire.connection import Connection

log = logging.getLogger("lspmux.backend")

#: What a started process is: (argv, working folder, the environment it was given on top of
#: lspmux's own).
StartKey = tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]]
Popen = subprocess.Popen[bytes]


def start_key(argv: list[str], cwd: Path | str, env: Mapping[str, str]) -> StartKey:
    return tuple(argv), str(cwd), tuple(sorted(env.items()))


class _AdoptedTransport:
    """What `ServerProcess` asks of its subprocess transport, for a process it did not
    spawn: the pid, the exit status, stdin's transport, kill."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: asyncio.WriteTransport) -> None:
        self.popen = popen
        self.stdin = stdin

    def get_pid(self) -> int:
        return self.popen.pid

    def get_returncode(self) -> int | None:
        return self.popen.returncode

    def get_pipe_transport(self, fd: int) -> asyncio.WriteTransport | None:
        return self.stdin if fd == 0 else None

    def kill(self) -> None:
        self.popen.kill()


class _Stderr(asyncio.Protocol):
    """The process's stderr, fed to its subprocess protocol as the subprocess transport
    would."""

    def __init__(self, protocol: _Protocol) -> None:
        self.protocol = protocol

    def data_received(self, data: bytes) -> None:
        self.protocol.pipe_data_received(2, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.pipe_connection_lost(2, exc)


class _HeldStdout(Stdout):
    """The process's stdout, read in place by its connection as a spawned server's is
    (`Stdout`); but what arrives before the connection waits for it (the answer to an
    `initialize` sent at launch) is held until `release`."""

    def __init__(self, protocol: _Protocol, *, held: bool) -> None:
        #: What was read while held; None once released (or never held).
        self.held: bytearray | None = bytearray() if held else None
        self._scratch: memoryview | None = None  # what is read into while held
        self.lost: tuple[Exception | None] | None = None
        self._transport: asyncio.BaseTransport | None = None
        super().__init__(protocol)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def pass_reads(self) -> None:
        if self.held is None:  # held: this protocol's methods read
            super().pass_reads()

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.held is None:
            return self.conn.get_buffer(sizehint)
        if self._scratch is None:
            self._scratch = memoryview(bytearray(65536))
        return self._scratch

    def buffer_updated(self, nbytes: int) -> None:
        if self.held is None:
            self.conn.buffer_updated(nbytes)
            return
        assert self._scratch is not None  # the transport asked `get_buffer` for this read
        self.held += self._scratch[:nbytes]

    def data_received(self, data: bytes) -> None:  # asyncio's pipes do not read in place
        if self.held is None:
            self.conn.data_received(data)
            return
        self.held += data

    def connection_lost(self, exc: Exception | None) -> None:
        if self.held is not None:
            self.lost = (exc,)
            return
        super().connection_lost(exc)

    def release(self) -> None:
        """Pass on what was held, and all that comes after."""
        held, self.held, self._scratch = self.held, None, None
        self.pass_reads()
        if self._transport is not None and not self._transport.is_closing():
            self._transport.set_protocol(self)  # it takes the connection's methods now
        if held:
            self.conn.data_received(bytes(held))
        if self.lost is not None:
            super().connection_lost(self.lost[0])


class _SentAtLaunch:
    """The stdin of a process that was sent its `initialize` at launch, as its backend's
    connection writes to it: the first message written — that `initialize` again — is not
    written, and once it is passed, the server's output (held until then: `_HeldStdout.held`) is
    passed on: the answer is taken by a connection that waits for it. When what the backend writes differs from what
    was sent at launch (it cannot, `Prespawned.spawn` compared them), the process is killed:
    its backend sees it exit, and starts a server of its own."""

    def __init__(
        self, stdin: asyncio.WriteTransport, sent: Any, passed: Callable[[bool], None]
    ) -> None:
        self.stdin, self.sent, self.passed = stdin, sent, passed
        self._head: bytearray | None = bytearray()  # None once the first message is passed

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._head is None:
            self.stdin.write(data)
            return
        head = self._head
        head += data
        end = head.find(b"\r\n\r\n")
        if end < 0:
            return
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in bytes(head[:end]).split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        if len(head) < end + 4 + length:
            return
        body, rest = bytes(head[end + 4 : end + 4 + length]), bytes(head[end + 4 + length :])
        self._head = None
        same = says_the_same(json.loads(body), self.sent)
        self.passed(same)
        if same and rest:
            self.stdin.write(rest)

    def writelines(self, pieces: Iterable[bytes | bytearray | memoryview]) -> None:
        self.write(b"".join(pieces))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stdin, name)


async def adopt(
    name: str,
    popen: subprocess.Popen[bytes],
    *,
    conn: Connection,
    on_exit: Callable[[int | None], None],
    sent: Any = None,
) -> ServerProcess:
    """`popen` (started with three pipes, in its own session) as a running `ServerProcess`;
    `sent`: the message written to it at launch (its `initialize`), None when none was."""
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    loop = asyncio.get_running_loop()
    proc = ServerProcess(name, conn, on_exit)
    protocol = _Protocol(proc)
    stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
    # The answer to what was sent at launch is passed on once the connection waits for it.
    out = _HeldStdout(protocol, held=sent is not None)
    stdout, _ = await loop.connect_read_pipe(lambda: out, popen.stdout)
    if sent is not None:
        pipe = stdin

        def passed(same: bool) -> None:
            if same:  # the request is pending once written: its answer, read after
                conn.attach_writer(pipe)  # what follows is written as to a spawned server
                loop.call_soon(out.release)
                return
            log.error("%s: initialize differs from what pid %s was sent: killed", name, popen.pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(popen.pid, signal.SIGKILL)

        stdin = _SentAtLaunch(stdin, sent, passed)  # type: ignore[assignment]
    proc._stdout = stdout
    proc._transport = _AdoptedTransport(popen, stdin)  # type: ignore[assignment]
    protocol.connection_made(proc._transport)  # type: ignore[arg-type]
    await loop.connect_read_pipe(lambda: _Stderr(protocol), popen.stderr)
    log.info("%s: took over pid %s, started at launch: %s", name, popen.pid, " ".join(popen.args))  # type: ignore[arg-type]

    def wait() -> None:  # the exit, as the event loop's child watcher would report it
        popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody to tell
            loop.call_soon_threadsafe(protocol.process_exited)

    threading.Thread(target=wait, name=f"lspmux-wait-{popen.pid}", daemon=True).start()
    return proc


class Prespawned:
    """Processes started before the event loop, each waiting for the backend it was started
    for (see the module doc)."""

    def __init__(
        self,
        processes: Iterable[tuple[list[str], Path, Mapping[str, str], Popen, Any]] = (),
    ) -> None:
        """`processes`: (argv, folder, configured environment, the process, the message it
        was sent at launch — its `initialize` — or None) each."""
        self.waiting = {
            start_key(argv, cwd, env): (popen, sent) for argv, cwd, env, popen, sent in processes
        }

    async def spawn(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        conn: Connection,
        on_exit: Callable[[int | None], None],
        initialize: Mapping[str, Any] | None = None,
    ) -> ServerProcess:
        """`ServerProcess.spawn`, or the waiting process started with exactly these and sent
        at launch exactly this `initialize` (params) if any."""
        popen, sent = self.waiting.pop(start_key(argv, cwd, env), (None, None))
        if (
            popen is not None
            and sent is not None
            and (initialize is None or not says_the_same(sent.get("params"), initialize))
        ):
            log.warning(
                "%s: pid %s, started at launch, was sent another initialize than its "
                "backend's: killed",
                name,
                popen.pid,
            )
            discard(popen)
            popen = None
        if popen is None or popen.poll() is not None:
            if popen is not None:
                discard(popen)
            return await ServerProcess.spawn(
                name, argv, cwd=cwd, env=env, conn=conn, on_exit=on_exit
            )
        return await adopt(name, popen, conn=conn, on_exit=on_exit, sent=sent)

    def discard(self) -> None:
        """Kill every process no backend took (said: its start differed from its backend's,
        which then spawned its own — a waste of a start, and a sign of two start paths
        disagreeing)."""
        waiting, self.waiting = self.waiting, {}
        for popen, _sent in waiting.values():
            log.warning("pid %s, started at launch, was taken by no server: killed", popen.pid)
            discard(popen)


def discard(popen: subprocess.Popen[bytes]) -> None:
    """Kill a process nobody took (its whole group) and reap it."""
    WATCHDOG.release(popen.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    popen.wait()
