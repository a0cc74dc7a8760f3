"""A spawned server's stdout and stdin are pipes of lspmux's own that hold
`wire.stdio.PIPE_SIZE` (a pipe holds 64 KiB by default). A node server writes its stdout
blocking and reads nothing meanwhile, so in a small pipe it saw a stuck client's
`$/cancelRequest`s only after dozens of its 600 KB answers (tests/e2e/test_stuck_shim.py failed
on the standard loop only); a large text or a burst of requests crosses its stdin in fewer
writes. Its stdin closes as the subprocess transport's own would: on `close_stdin` (the server
sees its input end) and when the process exits."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from lspmux.backends.process import ServerProcess
from lspmux.wire.connection import Connection
from lspmux.wire.framing import frame
from lspmux.wire.stdio import PIPE_SIZE
from tests.polling import eventually


def _size(pid: int, fd: int) -> int:
    end = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return fcntl.fcntl(end, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(end)


async def test_a_servers_pipes_hold_a_large_answer_and_a_large_text(tmp_path: Path) -> None:
    got: list[object] = []
    conn = Connection("cat", on_request=got.append, on_notification=got.append)
    proc = await ServerProcess.spawn(
        "cat", ["cat"], cwd=tmp_path, env={}, conn=conn, on_exit=lambda _code: None
    )
    try:
        assert proc._stdout is not None and proc._stdin is not None
        end = proc._stdout.get_extra_info("pipe")
        assert fcntl.fcntl(end.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_SIZE
        assert proc.pid is not None
        assert _size(proc.pid, 0) == _size(proc.pid, 1) == PIPE_SIZE
        text = "x" * 900_000  # through cat: out on its stdin, back on its stdout
        conn.notify("big", [text])
        await eventually(lambda: got, "the notification back")
        assert got == [{"jsonrpc": "2.0", "method": "big", "params": [text]}]
    finally:
        proc.kill()
        assert await proc.wait(10)
    assert proc._stdin.is_closing()  # closed with the process: no descriptor left open


async def test_closing_a_servers_stdin_ends_its_input(tmp_path: Path) -> None:
    conn = Connection("cat", on_request=lambda _m: None, on_notification=lambda _m: None)
    codes: list[int | None] = []
    proc = await ServerProcess.spawn(
        "cat", ["cat"], cwd=tmp_path, env={}, conn=conn, on_exit=codes.append
    )
    proc._stdin.write(frame(b"{}"))  # type: ignore[union-attr]
    proc.close_stdin()
    assert await proc.wait(10)  # cat exits at the end of its input
    assert codes == [0]
