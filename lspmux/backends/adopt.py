"""Server processes spawned before the event loop existed, taken over by their backends.

`lspmux proxy` spawns the servers its client's workspace needs as soon as it has read the
client's `initialize` (`proxy.py`), while asyncio, the session and the backends are still being
imported. `Prespawned` holds those processes (the watchdog was told of each at its spawn); `Prespawned.spawn` is the pool's way to start a
server: a backend asking for exactly the argv, folder and environment of a waiting process
gets that process (its pipes connected to the event loop as `ServerProcess.spawn` connects
them), any other start spawns as usual. What nobody asked for is killed by `discard()`: a
process runs only as the backend it was started for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from lspmux.backends.process import ServerProcess, _Protocol, _widen_pipe
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


class _Pipe(asyncio.Protocol):
    """One of the process's output pipes (1: stdout, 2: stderr), fed to its subprocess
    protocol as the subprocess transport would."""

    def __init__(self, protocol: _Protocol, fd: int) -> None:
        self.protocol, self.fd = protocol, fd

    def data_received(self, data: bytes) -> None:
        self.protocol.pipe_data_received(self.fd, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.pipe_connection_lost(self.fd, exc)


async def adopt(
    name: str,
    popen: subprocess.Popen[bytes],
    *,
    conn: Connection,
    on_exit: Callable[[int | None], None],
) -> ServerProcess:
    """`popen` (started with three pipes, in its own session) as a running `ServerProcess`."""
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    loop = asyncio.get_running_loop()
    proc = ServerProcess(name, conn, on_exit)
    protocol = _Protocol(proc)
    stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
    proc._transport = _AdoptedTransport(popen, stdin)  # type: ignore[assignment]
    protocol.connection_made(proc._transport)  # type: ignore[arg-type]
    stdout, _ = await loop.connect_read_pipe(lambda: _Pipe(protocol, 1), popen.stdout)
    _widen_pipe(name, stdout)  # as a spawned server's (asyncio's pipes; uvloop's too, here)
    await loop.connect_read_pipe(lambda: _Pipe(protocol, 2), popen.stderr)
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
        self, processes: Iterable[tuple[list[str], Path, Mapping[str, str], Popen]] = ()
    ) -> None:
        """`processes`: (argv, folder, configured environment, the process) each."""
        self.waiting = {start_key(argv, cwd, env): popen for argv, cwd, env, popen in processes}

    async def spawn(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        conn: Connection,
        on_exit: Callable[[int | None], None],
    ) -> ServerProcess:
        """`ServerProcess.spawn`, or the waiting process started with exactly these."""
        popen = self.waiting.pop(start_key(argv, cwd, env), None)
        if popen is None or popen.poll() is not None:
            if popen is not None:
                discard(popen)
            return await ServerProcess.spawn(
                name, argv, cwd=cwd, env=env, conn=conn, on_exit=on_exit
            )
        return await adopt(name, popen, conn=conn, on_exit=on_exit)

    def discard(self) -> None:
        """Kill every process no backend took (said: its start differed from its backend's,
        which then spawned its own — a waste of a start, and a sign of two start paths
        disagreeing)."""
        waiting, self.waiting = self.waiting, {}
        for popen in waiting.values():
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
