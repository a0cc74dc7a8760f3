"""The process's stdin and stdout as asyncio pipe transports, whatever they are.

An editor gives a language server pipes or sockets, and asyncio's pipe transports take those
as they are. A user or a script may give it something else — `lspmux proxy < /dev/null`,
`printf '' | lspmux proxy > out.txt` — and there the event loop refuses (a regular file) or,
under uvloop, aborts the process (a character device). Such an end is bridged: a thread copies
between it and a fresh pipe, and the transport gets the pipe. EOF travels through: stdin's end
closes the pipe, and the pipe's close ends the copy to stdout after the last byte.

Every pipe lspmux reads or writes is asked for a larger capacity (`widen`, `PIPE_SIZE`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import threading
from typing import BinaryIO

#: Bytes per read of a bridging thread.
CHUNK = 1 << 16

#: The capacity asked for the pipes lspmux reads and writes: its stdin and stdout
#: (`StdioBridge`), a spawned server's stdin and stdout (`ServerProcess.spawn`), and a server
#: started at launch's (`proxy.py`). Linux gives a pipe 64 KiB, and up to
#: `/proc/sys/fs/pipe-max-size` (1 MiB by default) on request; the kernel takes a pipe's
#: pages as they fill, so a quiet pipe costs no more. A burst of pipelined requests or a
#: 2.5 MB answer crosses in fewer reads, writes and wake-ups (pipelined hovers through the
#: proxy: 62-63% of a direct connection's rate in a 64 KiB pipe, 70-75% here; alternated
#: runs, docs/benchmarks.md). And a server that writes its stdout blocking (node:
#: basedpyright, the TypeScript server) reads nothing while an answer is being written: in a
#: 64 KiB pipe a 600 KB answer is ten waits for lspmux to read, and a `$/cancelRequest` sent
#: meanwhile is seen answers later (tests/e2e/test_stuck_shim.py failed on the standard loop).
PIPE_SIZE = 1 << 20


def widen(fd: int) -> bool:
    """Ask `PIPE_SIZE` for the pipe `fd`: whether it has it now. Not where `fd` is no pipe, the
    system has no such request (not Linux), or refuses it (over `pipe-max-size`, or the user's
    pipes already hold `pipe-user-pages-soft`): the pipe keeps its size, only slower."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is None:
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        return bool(fcntl.fcntl(fd, setsize, PIPE_SIZE) >= PIPE_SIZE)
    except OSError:
        return False


def transportable(fd: int) -> bool:
    """Whether an event loop's pipe transport takes `fd` as it is (a pipe or a socket)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _copy(src: int, dst: int) -> None:
    try:
        while chunk := os.read(src, CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view) :]
    except OSError:
        pass  # the other side is gone: the copy ends, as a pipe's would
    finally:
        with contextlib.suppress(OSError):
            os.close(src)
        with contextlib.suppress(OSError):
            os.close(dst)


class StdioBridge:
    """stdin and stdout as pipes, bridged by threads where they are not (see the module doc).

    `reader` and `writer` are file objects for `loop.connect_read_pipe` and
    `connect_write_pipe`; `close()` waits (briefly) until what was written reached stdout."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.threads: list[threading.Thread] = []
        self._ends: list[BinaryIO] = []  # the pipe ends made here (never stdin/stdout)
        self.reader = stdin if transportable(stdin.fileno()) else self._bridge_in(stdin)
        self.writer = stdout if transportable(stdout.fileno()) else self._bridge_out(stdout)
        widen(self.reader.fileno())
        widen(self.writer.fileno())

    def _bridge_in(self, stdin: BinaryIO) -> BinaryIO:
        read_end, write_end = os.pipe()
        src = os.dup(stdin.fileno())
        self._start(_copy, src, write_end, "stdin")
        end = os.fdopen(read_end, "rb", buffering=0)
        self._ends.append(end)
        return end

    def _bridge_out(self, stdout: BinaryIO) -> BinaryIO:
        read_end, write_end = os.pipe()
        dst = os.dup(stdout.fileno())
        self._start(_copy, read_end, dst, "stdout")
        end = os.fdopen(write_end, "wb", buffering=0)
        self._ends.append(end)
        return end

    def _start(self, target: object, src: int, dst: int, name: str) -> None:
        thread = threading.Thread(
            target=target,  # type: ignore[arg-type]
            args=(src, dst),
            name=f"lspmux-{name}-bridge",
            daemon=True,
        )
        thread.start()
        self.threads.append(thread)

    def close(self, timeout: float = 5.0) -> None:
        """Close our ends of the bridges; wait for the copy to stdout to finish."""
        for end in self._ends:
            with contextlib.suppress(OSError, ValueError):
                end.close()
        for thread in self.threads:
            if thread.name.endswith("stdout-bridge"):
                thread.join(timeout)
