"""A daemon connection's first message: read under limits, then handed to a Session.

Each new connection gets a `Handshake` protocol until its first message is complete; the
daemon (`HandshakeHost`) decides what it is (`first_message`): a client's `initialize` (the
transport then goes to a new Session's connection, `hand_over`), or a one-shot request
answered before the connection closes (`reply_and_close`).

A `lspmux client` on the Unix socket passes its stdin and stdout with its first message
(SCM_RIGHTS, taken by listen.py's first read). A client's Session then reads and writes the
editor's pipes itself (`_take_stdio`): no process copies its messages, and the socket only says
whether the shim still lives (its end ends the session, and the session's end closes it, so the
shim exits). The shim learns that its stdio was taken from `STDIO_TAKEN`, sent first; anything
else (a one-shot answer, a refusal, descriptors the daemon cannot use) goes over the socket as
before, and the shim copies it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Coroutine
from typing import Any, Protocol

import orjson

from lspmux.daemon.address import peer_uid
from lspmux.daemon.listen import close_fds
from lspmux.daemon.shim import STDIO_TAKEN, passable
from lspmux.session.session import Session
from lspmux.wire.connection import Connection
from lspmux.wire.header import MAX_HEADER, FrameError, frame, header_length
from lspmux.wire.messages import Message

log = logging.getLogger("lspmux.daemon")

#: Seconds a new Unix-socket connection may take to send its first message.
HANDSHAKE_TIMEOUT = 30.0
#: Largest first message accepted on the Unix socket (only the user can open it).
HANDSHAKE_LIMIT = 16 * 1024 * 1024
#: On TCP, before the token is checked: the largest first message (an editor's `initialize`
#: is 5-20 KiB), how long it may take, and how many such connections may be open at once
#: (more are closed at once). 8 strangers hold at most 8 x 256 KiB.
TCP_HANDSHAKE_LIMIT = 256 * 1024
TCP_HANDSHAKE_TIMEOUT = 10.0
MAX_TCP_HANDSHAKES = 8
#: Bytes queued for a client above which its requests are no longer read (until it drains to a
#: quarter of that): a client that stops reading cannot keep the shared backends busy.
CLIENT_BACKPRESSURE = 1024 * 1024


class HandshakeHost(Protocol):
    """What a handshake needs of the daemon."""

    handshakes: set[Handshake]
    client_write_limit: int

    def first_message(self, hs: Handshake, body: bytes, rest: bytes) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None: ...


class Handshake(asyncio.Protocol):
    """Reads a connection's first message, then hands the transport to a Session.

    On TCP the peer is a stranger until its token is checked, so what it may cost is bounded:
    a first message of at most `TCP_HANDSHAKE_LIMIT` (refused as soon as its Content-Length
    says more, before any of the body is read), `TCP_HANDSHAKE_TIMEOUT` to send it, and at
    most `MAX_TCP_HANDSHAKES` such connections at once (the next ones are closed at once)."""

    def __init__(
        self, daemon: HandshakeHost, kind: str, first: tuple[bytes, list[int]] | None = None
    ) -> None:
        self.daemon = daemon
        self.kind = kind
        self.peer = kind
        #: TCP: (host, port) of the daemon's side and of the peer's.
        self.local: tuple[str, int] | None = None
        self.remote: tuple[str, int] | None = None
        self.transport: asyncio.Transport | None = None
        self.limit = TCP_HANDSHAKE_LIMIT if kind == "tcp" else HANDSHAKE_LIMIT
        self._buf = bytearray()
        self._done = False
        self._timer: asyncio.TimerHandle | None = None
        #: The Unix socket's first read (listen.py), fed when the transport exists.
        self._first = first
        #: A shim's stdin and stdout, passed with its first message: (read fd, write fd).
        self.stdio: tuple[int, int] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self.peer = f"{self.kind}:{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else self.kind
        local = transport.get_extra_info("sockname")
        if isinstance(peer, tuple) and isinstance(local, tuple):
            self.local, self.remote = (local[0], local[1]), (peer[0], peer[1])
        if self.kind == "tcp":
            waiting = sum(1 for hs in self.daemon.handshakes if hs.kind == "tcp")
            if waiting >= MAX_TCP_HANDSHAKES:
                log.warning(
                    "refused %s: %d TCP connections are already waiting to authenticate",
                    self.peer,
                    waiting,
                )
                self._done = True
                transport.abort()  # type: ignore[attr-defined]
                return
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.daemon.handshakes.add(self)
        timeout = TCP_HANDSHAKE_TIMEOUT if self.kind == "tcp" else HANDSHAKE_TIMEOUT
        self._timer = asyncio.get_running_loop().call_later(timeout, self._too_slow, timeout)
        if self._first is not None:  # before the transport reads anything after it
            data, fds = self._first
            self._first = None
            if len(fds) == 2 and passable(fds[0], fds[1]):
                self.stdio = (fds[0], fds[1])
            else:  # not a shim's stdio: the connection goes on over the socket
                close_fds(fds)
            self.data_received(data)

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        buf = self._buf
        buf += data
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEADER:
                self._refuse(f"no header end within {MAX_HEADER} bytes")
            return
        length = header_length(bytes(buf[:end]), self.limit)
        if isinstance(length, FrameError):
            self._refuse(f"first message: {length.detail}")
            return
        start = end + 4
        if len(buf) < start + length:
            return
        self._finish()
        self.daemon.first_message(
            self, bytes(buf[start : start + length]), bytes(buf[start + length :])
        )

    def peer_uid(self) -> int | None:
        """TCP: the uid of the peer's process (Linux), None when it cannot be told."""
        if self.local is None or self.remote is None:
            return None
        return peer_uid(self.local, self.remote)

    def _release_stdio(self) -> None:
        if self.stdio is not None:
            close_fds(list(self.stdio))
            self.stdio = None

    def _finish(self) -> None:
        self._done = True
        self.daemon.handshakes.discard(self)
        if self._timer is not None:
            self._timer.cancel()

    def _refuse(self, why: str) -> None:
        log.warning("refused %s: %s", self.peer, why)
        self.abort()

    def _too_slow(self, timeout: float) -> None:
        self._refuse(f"no first message within {timeout:g}s")

    def reply_and_close(self, msg: Message) -> None:
        self._finish()
        self._release_stdio()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame(orjson.dumps(msg)))
            self.transport.close()

    def hand_over(self, session: Session, data: bytes) -> None:
        transport = self.transport
        assert transport is not None
        limit = self.daemon.client_write_limit
        if self.stdio is not None:
            stdio, self.stdio = self.stdio, None
            self.daemon.spawn(_take_stdio(session, transport, stdio, data, limit))
            return
        conn = session.connection(
            session.client_id, max_write_buffer=limit, backpressure=CLIENT_BACKPRESSURE
        )
        transport.set_protocol(conn)
        conn.connection_made(transport)
        conn.data_received(data)

    def abort(self) -> None:
        """Drop the connection and what it sent (the buffer is released at once)."""
        self._finish()
        self._release_stdio()
        self._buf = bytearray()
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()
        self._release_stdio()
        self._buf = bytearray()


# -- a shim's stdio, taken ---------------------------------------------------------------------


class _ShimWatch(asyncio.Protocol):
    """The socket of a shim whose stdio the session uses: its end is the shim's end."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def data_received(self, data: bytes) -> None:
        # The shim sends its first message alone (read exactly); the rest comes on stdin.
        log.warning(
            "%s: %d bytes from its lspmux client on the socket, ignored", self.conn.name, len(data)
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.conn.closed:
            log.info("%s: its lspmux client process ended", self.conn.name)
            self.conn.close(None)


class _StdoutWatch(asyncio.Protocol):
    """The editor's pipe the session writes to: its queue's limits and its end."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def pause_writing(self) -> None:
        self.conn.pause_writing()

    def resume_writing(self) -> None:
        self.conn.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn.close(exc)  # the editor stopped reading its server's output for good


async def _take_stdio(
    session: Session,
    sock: asyncio.Transport,
    stdio: tuple[int, int],
    data: bytes,
    limit: int,
) -> None:
    """Serve `session` on the shim's stdin and stdout; `sock` stays open while both live."""
    loop = asyncio.get_running_loop()
    fd_in, fd_out = stdio
    conn = session.connection(
        session.client_id, duplex=False, max_write_buffer=limit, backpressure=CLIENT_BACKPRESSURE
    )
    closed_by_session = conn.on_close

    def on_close(exc: BaseException | None) -> None:
        sock.close()  # the shim exits
        if closed_by_session is not None:
            closed_by_session(exc)

    conn.on_close = on_close
    conn.on_eof = None  # the editor's input ended: the session ends, as on the socket
    sock.set_protocol(_ShimWatch(conn))  # from now on the shim's end is the session's
    try:
        writer, _ = await loop.connect_write_pipe(
            lambda: _StdoutWatch(conn), os.fdopen(fd_out, "wb", buffering=0)
        )
        fd_out = -1
        if conn.closed:  # the shim ended meanwhile
            writer.close()
            close_fds([fd_in])
            return
        conn.attach_writer(writer, watch=True)  # type: ignore[arg-type]
        sock.write(STDIO_TAKEN)
        log.info("%s: serving its editor's stdin and stdout (passed by lspmux client)", conn.name)
        conn.data_received(data)
        reader, _ = await loop.connect_read_pipe(lambda: conn, os.fdopen(fd_in, "rb", buffering=0))
        fd_in = -1
        if conn.closed:  # ended while the pipe was being connected: nothing reads it now
            reader.close()
    except Exception:
        log.exception("%s: the client's stdin and stdout could not be used", conn.name)
        close_fds([fd for fd in (fd_in, fd_out) if fd >= 0])
        conn.close(None)
        sock.close()
