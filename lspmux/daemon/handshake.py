"""A daemon connection's first message: read under limits, then handed to a Session.

Each new connection gets a `Handshake` protocol until its first message is complete; the
daemon (`HandshakeHost`) decides what it is (`first_message`): a client's `initialize` (the
transport then goes to a new Session's connection, `hand_over`), or a one-shot request
answered before the connection closes (`reply_and_close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Protocol

import orjson

from lspmux.daemon.address import peer_uid
from lspmux.session.session import Session
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


class Handshake(asyncio.Protocol):
    """Reads a connection's first message, then hands the transport to a Session.

    On TCP the peer is a stranger until its token is checked, so what it may cost is bounded:
    a first message of at most `TCP_HANDSHAKE_LIMIT` (refused as soon as its Content-Length
    says more, before any of the body is read), `TCP_HANDSHAKE_TIMEOUT` to send it, and at
    most `MAX_TCP_HANDSHAKES` such connections at once (the next ones are closed at once)."""

    def __init__(self, daemon: HandshakeHost, kind: str) -> None:
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
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame(orjson.dumps(msg)))
            self.transport.close()

    def hand_over(self, session: Session, data: bytes) -> None:
        transport = self.transport
        assert transport is not None
        limit = self.daemon.client_write_limit
        conn = session.connection(
            session.client_id, max_write_buffer=limit, backpressure=CLIENT_BACKPRESSURE
        )
        transport.set_protocol(conn)
        conn.connection_made(transport)
        conn.data_received(data)

    def abort(self) -> None:
        """Drop the connection and what it sent (the buffer is released at once)."""
        self._finish()
        self._buf = bytearray()
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()
        self._buf = bytearray()
