"""A shim's stdin and stdout passed to the daemon (SCM_RIGHTS; daemon/handshake.py, listen.py,
shim.py): the daemon serves the editor's pipes itself, the socket only says whether the shim
lives, and anything the daemon cannot take goes over the socket as before.

The shim runs in a thread of the test (`shim.pump`, as `lspmux client` runs it), the daemon
in-process; the "editor" is the test, holding the other ends of two pipes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from lspmux.daemon import listen, shim
from lspmux.daemon.server import Daemon
from tests.polling import eventually


def framed(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(root: Path) -> bytes:
    params = {"capabilities": {}, "rootUri": root.as_uri(), "processId": None}
    return framed({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})


def open_paths() -> set[str]:
    """What this process (the test and the daemon in it) has open, by path."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:  # noqa: SIM105
            found.add(os.readlink(f"/proc/self/fd/{name}"))
        except OSError:
            pass
    return found


class Editor:
    """The test as the editor: its ends of the shim's stdin and stdout pipes."""

    def __init__(self) -> None:
        self.shim_in, self.to_server = os.pipe()
        self.from_server, self.shim_out = os.pipe()
        self.got = b""

    async def read_until(self, marker: bytes, timeout: float = 10) -> bytes:
        def read() -> bytes:
            while marker not in self.got:
                data = os.read(self.from_server, 1 << 16)
                if not data:
                    raise AssertionError(f"the server's output ended before {marker!r}")
                self.got += data
            return self.got

        return await asyncio.wait_for(asyncio.to_thread(read), timeout)

    def close(self) -> None:
        for fd in (self.shim_in, self.to_server, self.from_server, self.shim_out):
            try:  # noqa: SIM105
                os.close(fd)
            except OSError:
                pass


@contextmanager
def shim_thread(
    daemon: Daemon, first: bytes, stdin: int, stdout: int
) -> Iterator[tuple[socket.socket, list[int], threading.Thread]]:
    """`shim.pump` with stdio passing, in a thread: (its socket, [its exit code], thread)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(daemon.address.path)
    code: list[int] = []
    thread = threading.Thread(
        target=lambda: code.append(shim.pump(sock, first, stdin, stdout, passing=True)),
        daemon=True,
    )
    thread.start()
    try:
        yield sock, code, thread
    finally:
        sock.close()
        thread.join(10)


@asynccontextmanager
async def editor_session(
    daemon: Daemon, root: Path
) -> AsyncIterator[tuple[Editor, socket.socket, list[int], threading.Thread]]:
    """An editor's session through a shim thread, past its `initialize`: (editor, the shim's
    socket, [its exit code], its thread)."""
    editor = Editor()
    try:
        with shim_thread(daemon, initialize(root), editor.shim_in, editor.shim_out) as shim_run:
            await editor.read_until(b"serverInfo")
            yield (editor, *shim_run)
    finally:
        editor.close()


async def test_the_daemon_serves_the_editors_pipes_and_the_shim_only_waits(
    running: Daemon, tmp_path: Path
) -> None:
    async with editor_session(running, tmp_path) as (editor, _sock, code, thread):
        [session] = running.clients.info  # it reads and writes the pipes itself
        assert session.conn is not None and not session.conn.duplex
        # What the editor writes now reaches the daemon without the shim: it only waits.
        os.write(editor.to_server, framed({"jsonrpc": "2.0", "id": 7, "method": "x/y"}))
        await editor.read_until(b'"id":7')
        assert thread.is_alive() and len(running.clients.info) == 1
        # The editor asks to shut down and exit: the session ends, the shim exits 0.
        os.write(editor.to_server, framed({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}))
        await editor.read_until(b'"id":8')
        os.write(editor.to_server, framed({"jsonrpc": "2.0", "method": "exit"}))
        await asyncio.to_thread(thread.join, 10)
        assert code == [0]
        await eventually(lambda: not running.clients.info, "the session ended", timeout=10)


async def test_the_shims_end_ends_the_session(running: Daemon, tmp_path: Path) -> None:
    async with editor_session(running, tmp_path) as (_editor, sock, _code, _thread):
        assert len(running.clients.info) == 1
        sock.shutdown(socket.SHUT_RDWR)  # the shim killed: its socket closes
        await eventually(lambda: not running.clients.info, "the session ended", timeout=10)


async def test_the_editor_closing_stdin_ends_the_session_and_the_shim(
    running: Daemon, tmp_path: Path
) -> None:
    async with editor_session(running, tmp_path) as (editor, _sock, code, thread):
        os.close(editor.to_server)  # the editor went away without a word
        os.close(editor.shim_in)  # (the shim's own copy: it is a thread here)
        await asyncio.to_thread(thread.join, 10)
        assert code == [0]
        await eventually(lambda: not running.clients.info, "the session ended", timeout=10)


async def test_stdio_that_is_not_a_pipe_is_relayed_over_the_socket(
    running: Daemon, tmp_path: Path
) -> None:
    """Regular files (`lspmux client < requests > answers`): the daemon cannot serve them
    with its event loop, closes what it was passed and answers over the socket; the shim copies."""
    requests = tmp_path / "requests"
    requests.write_bytes(b"")
    answers = tmp_path / "answers"
    answers.write_bytes(b"")
    stdin = os.open(requests, os.O_RDONLY)
    stdout = os.open(answers, os.O_WRONLY)
    try:
        with shim_thread(running, initialize(tmp_path), stdin, stdout) as (_sock, code, thread):
            await asyncio.to_thread(thread.join, 10)  # stdin ends: the shim leaves, relayed
            assert code == [0]
    finally:
        os.close(stdin)
        os.close(stdout)
    assert b"serverInfo" in answers.read_bytes()
    await eventually(lambda: not running.clients.info, "the session ended", timeout=10)
    left = open_paths() & {str(requests), str(answers)}
    assert not left, f"the daemon kept what it was passed open: {left}"


async def test_descriptors_beyond_two_are_refused_and_none_leaks(running: Daemon) -> None:
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(running.address.path)
        status = framed({"jsonrpc": "2.0", "id": 1, "method": "lspmux/status"})
        socket.send_fds(sock, [status], [r1, w2, r1])
        answer = b""
        while chunk := await asyncio.to_thread(sock.recv, 1 << 16):
            answer += chunk
        assert b'"pid"' in answer and not answer.startswith(shim.STDIO_TAKEN)
        # No copy of what was passed is left in the daemon: without our read end, pipe 1
        # has no reader; without our write end, pipe 2 has no writer.
        os.close(r1)
        with pytest.raises(BrokenPipeError):
            os.write(w1, b"x")
        os.close(w2)
        assert os.read(r2, 1) == b""
    finally:
        sock.close()
        for fd in (r1, w1, r2, w2):
            try:  # noqa: SIM105
                os.close(fd)
            except OSError:
                pass


async def test_a_connection_that_sends_nothing_is_dropped(
    running: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listen, "FIRST_READ_TIMEOUT", 0.2)
    reader, writer = await asyncio.open_unix_connection(running.address.path)
    assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the daemon
    writer.close()
    # The daemon still accepts and answers.
    reader, writer = await asyncio.open_unix_connection(running.address.path)
    writer.write(framed({"jsonrpc": "2.0", "id": 2, "method": "lspmux/status"}))
    assert b'"pid"' in await asyncio.wait_for(reader.read(), 10)
    writer.close()


async def test_a_shim_that_ends_while_its_pipes_are_connected_leaves_nothing_open(
    running: Daemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    connect = loop.connect_write_pipe
    editor = Editor()
    shim_sock: list[socket.socket] = []

    async def shim_gone_first(factory: Any, pipe: Any) -> Any:
        shim_sock[0].shutdown(socket.SHUT_RDWR)  # the shim killed before the pipe is ready
        await eventually(lambda: not running.clients.info, "the session ended", timeout=10)
        return await connect(factory, pipe)

    monkeypatch.setattr(loop, "connect_write_pipe", shim_gone_first)
    try:
        with shim_thread(running, initialize(tmp_path), editor.shim_in, editor.shim_out) as (
            sock,
            code,
            thread,
        ):
            shim_sock.append(sock)
            await asyncio.to_thread(thread.join, 10)
            assert code == [0]
        # The daemon holds no end of the editor's pipes: ours closed, the pipes are done.
        os.close(editor.shim_in)
        os.close(editor.shim_out)
        await eventually(lambda: _pipe_closed(editor), "the daemon closed its ends", timeout=10)
    finally:
        editor.close()


def _pipe_closed(editor: Editor) -> bool:
    """No reader of the editor's input pipe and no writer of its output pipe is left."""
    try:
        os.write(editor.to_server, b"x")
    except BrokenPipeError:
        pass
    else:
        return False
    os.set_blocking(editor.from_server, False)
    try:
        return os.read(editor.from_server, 1) == b""
    except BlockingIOError:
        return False


async def test_one_socket_for_both_ends_is_not_taken(running: Daemon, tmp_path: Path) -> None:
    """socat's EXEC gives a server one socket as stdin and stdout: the daemon's loop cannot
    serve it (its write pipe would take the input for the peer's close), so the answer goes
    over the daemon's socket, for the shim to copy."""
    editor_end, server_end = socket.socketpair()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(running.address.path)
        socket.send_fds(sock, [initialize(tmp_path)], [server_end.fileno()] * 2)
        answer = await asyncio.to_thread(sock.recv, 1 << 16)
        assert answer.startswith(b"Content-Length") and not answer.startswith(shim.STDIO_TAKEN)
    finally:
        for s in (sock, editor_end, server_end):
            s.close()
