"""`wire/stdio.py`: the process's stdin and stdout as pipes (bridged where they are not), and
the capacity asked for the pipes lspmux reads and writes (`widen`, `PIPE_SIZE`)."""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from lspmux.wire.stdio import PIPE_SIZE, StdioBridge, widen


def size(fd: int) -> int:
    return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)


def test_a_pipe_is_widened_and_both_ends_see_it() -> None:
    read_end, write_end = os.pipe()
    try:
        assert size(read_end) < PIPE_SIZE  # the kernel's default, 64 KiB
        assert widen(write_end) is True
        assert size(read_end) == size(write_end) == PIPE_SIZE
        os.write(write_end, b"x" * (PIPE_SIZE - 1))  # held without a reader
        assert len(os.read(read_end, PIPE_SIZE)) == PIPE_SIZE - 1
    finally:
        os.close(read_end)
        os.close(write_end)


def test_what_is_no_pipe_is_left_as_it_is(tmp_path: Path) -> None:
    with (tmp_path / "f").open("wb") as f:
        assert widen(f.fileno()) is False
    a, b = socket.socketpair()
    with a, b:
        assert widen(a.fileno()) is False
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.close(write_end)
    assert widen(write_end) is False  # closed: no error, nothing done


def test_the_bridge_widens_stdin_and_stdout_pipes_and_the_pipes_it_makes(tmp_path: Path) -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    with os.fdopen(in_r, "rb") as stdin, os.fdopen(out_w, "wb") as stdout:
        bridge = StdioBridge(stdin, stdout)
        assert bridge.reader is stdin and bridge.writer is stdout
        assert size(in_w) == size(out_r) == PIPE_SIZE
        bridge.close()
    os.close(in_w)
    os.close(out_r)
    with (tmp_path / "in").open("wb") as f:
        f.write(b"")
    with (tmp_path / "in").open("rb") as stdin, (tmp_path / "out").open("wb") as stdout:
        bridge = StdioBridge(stdin, stdout)  # files: bridged by pipes of its own
        assert size(bridge.reader.fileno()) == size(bridge.writer.fileno()) == PIPE_SIZE
        bridge.close()
