"""A server's stdout holds a whole large answer (`wire.stdio.PIPE_SIZE`; a pipe holds 64 KiB by
default). A node server writes its stdout blocking and reads nothing
meanwhile, so in a small pipe it saw a stuck client's `$/cancelRequest`s only after dozens of
its 600 KB answers (tests/e2e/test_stuck_shim.py failed on the standard loop only)."""

from __future__ import annotations

import fcntl
from pathlib import Path

from lspmux.backends.process import ServerProcess
from lspmux.wire.connection import Connection
from lspmux.wire.stdio import PIPE_SIZE


async def test_a_servers_stdout_pipe_holds_a_large_answer(tmp_path: Path) -> None:
    conn = Connection("cat", on_request=lambda _m: None, on_notification=lambda _m: None)
    proc = await ServerProcess.spawn(
        "cat", ["cat"], cwd=tmp_path, env={}, conn=conn, on_exit=lambda _code: None
    )
    try:
        assert proc._stdout is not None  # a pipe of lspmux's own, on either loop
        end = proc._stdout.get_extra_info("pipe")
        assert fcntl.fcntl(end.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_SIZE
    finally:
        proc.kill()
        assert await proc.wait(10)
