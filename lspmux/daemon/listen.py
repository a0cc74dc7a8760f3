"""Being the only daemon for an address, and listening on it.

An flock on the address's lock file, held for the daemon's lifetime, makes a second daemon for
the same address fail with the first one's pid; a live socket is never replaced, a stale one
(nobody answers on it) is. A Unix socket is 0600 from the moment it exists, in a private
folder; TCP is opt-in, loopback only, and needs a token where the peer's uid cannot be told
(the daemon's own user is recognised through /proc/net/tcp on Linux).

On the Unix socket the daemon accepts connections itself (`UnixListener`), because a
connection's first read must be a `recvmsg`: a `lspmux client` passes its stdin and stdout with
its first message (SCM_RIGHTS; daemon/handshake.py), which an event loop's transport would
read past and lose.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import socket
import sys
from typing import Protocol

from lspmux.daemon.address import (
    Address,
    AddressError,
    check_replaceable,
    check_socket_dir,
    default_dir,
    is_loopback,
    peer_uid_checkable,
    private_dir,
)

log = logging.getLogger("lspmux.daemon")

#: Bytes of a Unix connection's first read, and the most descriptors taken with it (a shim
#: sends two: its stdin and stdout; more are refused by the kernel's truncation).
FIRST_READ = 1 << 16
MAX_PASSED_FDS = 2
#: Seconds a Unix connection may take to send its first bytes.
FIRST_READ_TIMEOUT = 30.0


class ProtocolFactory(Protocol):
    """The daemon's protocol for a connection: `kind` "unix" or "tcp"; on the Unix socket
    with the connection's first read and the descriptors that came with it."""

    def __call__(
        self, kind: str, first: tuple[bytes, list[int]] | None = None
    ) -> asyncio.Protocol: ...


class DaemonError(Exception):
    """The daemon cannot start; the message says why and what to do."""


class InstanceLock:
    """The flock that makes a daemon the only one for its address (the file holds its pid)."""

    def __init__(self, address: Address) -> None:
        self.address = address
        self._fd: int | None = None

    def take(self) -> None:
        path = self.address.lock_path("pid")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise DaemonError(
                f"another lspmux daemon (pid {other or '?'}) is already running for "
                f"{self.address}; stop it first, or choose another address with --listen"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


async def listen(
    address: Address,
    lock: InstanceLock,
    protocol: ProtocolFactory,
    *,
    token: str | None,
) -> asyncio.AbstractServer | UnixListener:
    """Take `lock` and listen on `address`; each connection gets `protocol(kind)` ("unix" or
    "tcp"). DaemonError (nothing bound, the other daemon's socket left alone) when it cannot."""
    loop = asyncio.get_running_loop()
    if address.is_unix:
        try:
            check_socket_dir(address)
        except AddressError as exc:
            raise DaemonError(str(exc)) from None
        lock.take()
        try:
            sock = bind_unix(address)
        except OSError as exc:
            raise DaemonError(f"cannot listen on {address}: {exc.strerror}") from None
        return UnixListener(sock, protocol)
    if not is_loopback(address.host):
        raise DaemonError(
            f"{address}: lspmux listens on TCP only on a loopback address "
            "(127.0.0.1, ::1); use a Unix socket or an SSH tunnel to reach it from "
            "another machine"
        )
    if not token and not peer_uid_checkable():
        raise DaemonError(
            f"{address}: on this system a TCP listener cannot tell who connects, "
            "so it needs a token: give --token-file FILE (mode 0600) or set LSPMUX_TOKEN"
        )
    try:  # the lock file lives in the private folder of the default socket
        private_dir(default_dir())
    except AddressError as exc:
        raise DaemonError(str(exc)) from None
    lock.take()
    try:
        return await loop.create_server(lambda: protocol("tcp"), address.host, address.port)
    except OSError as exc:
        raise DaemonError(f"cannot listen on {address}: {exc.strerror}") from None


def bind_unix(address: Address) -> socket.socket:
    """A listening Unix socket at `address.path`, 0600; a stale socket there is replaced, a
    live one (a daemon answers on it) is a DaemonError."""
    path = address.path
    if os.path.exists(path) or os.path.islink(path):
        try:
            check_replaceable(path)
        except AddressError as exc:
            raise DaemonError(str(exc)) from None
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(1.0)
            probe.connect(path)
        except OSError:
            os.unlink(path)  # a stale socket: nobody listens on it
        else:
            raise DaemonError(f"another lspmux daemon already listens on {address}")
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is 0600 from the moment it exists
    try:
        sock.bind(path)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    sock.setblocking(False)
    return sock


class UnixListener:
    """Accepts on a listening Unix socket and reads each connection's first bytes with
    `recvmsg`, keeping the descriptors sent with them; the connection then goes to the event
    loop as a transport whose protocol (`protocol("unix", (bytes, fds))`) starts with them.
    `close()` stops accepting, as `asyncio.Server.close` does."""

    def __init__(self, sock: socket.socket, protocol: ProtocolFactory) -> None:
        self.sock = sock
        self.protocol = protocol
        self.loop = asyncio.get_running_loop()
        #: Accepted connections whose first bytes have not come: their timers.
        self.waiting: dict[socket.socket, asyncio.TimerHandle] = {}
        self.tasks: set[asyncio.Future[None]] = set()
        self.loop.add_reader(sock.fileno(), self._accept)

    def close(self) -> None:
        if self.sock.fileno() < 0:
            return
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        for conn in list(self.waiting):
            self._drop(conn)

    def _accept(self) -> None:
        for _ in range(64):  # a burst of connections, without starving the loop
            try:
                conn, _addr = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE and the like: the next connection may succeed
                log.warning("accepting a connection failed: %s", exc)
                return
            conn.setblocking(False)
            self.waiting[conn] = self.loop.call_later(FIRST_READ_TIMEOUT, self._drop, conn)
            self.loop.add_reader(conn.fileno(), self._first_read, conn)

    def _drop(self, conn: socket.socket) -> None:
        timer = self.waiting.pop(conn, None)
        if timer is not None:
            timer.cancel()
        with contextlib.suppress(OSError, ValueError):
            self.loop.remove_reader(conn.fileno())
        conn.close()

    def _first_read(self, conn: socket.socket) -> None:
        try:
            data, fds, flags = recv_fds(conn)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not data:  # closed before saying anything
            close_fds(fds)
            self._drop(conn)
            return
        if flags & socket.MSG_CTRUNC:  # more descriptors than a shim sends: none is kept
            close_fds(fds)
            fds = []
        timer = self.waiting.pop(conn)
        timer.cancel()
        self.loop.remove_reader(conn.fileno())
        task = asyncio.ensure_future(self._hand_to_loop(conn, data, fds))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _hand_to_loop(self, conn: socket.socket, data: bytes, fds: list[int]) -> None:
        try:
            await self.loop.connect_accepted_socket(
                lambda: self.protocol("unix", (data, fds)), sock=conn
            )
        except Exception:
            log.exception("a Unix connection could not be handed to the event loop")
            close_fds(fds)
            conn.close()


def recv_fds(conn: socket.socket) -> tuple[bytes, list[int], int]:
    """Up to `FIRST_READ` bytes and `MAX_PASSED_FDS` descriptors from `conn`: (bytes,
    descriptors, recvmsg's flags). The descriptors are close-on-exec, so that no server the
    daemon starts inherits an editor's pipe: it would hold it open after the session ended,
    and the editor would wait for its end. (`socket.recv_fds` drops its `flags` argument,
    the `MSG_CMSG_CLOEXEC` that asks for this, in CPython 3.11 to 3.13.0: hence recvmsg.)"""
    space = socket.CMSG_SPACE(MAX_PASSED_FDS * 4)
    data, ancillary, flags, _addr = conn.recvmsg(FIRST_READ, space, socket.MSG_CMSG_CLOEXEC)
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            whole = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True)
                    for i in range(0, whole, 4)]  # fmt: skip
    for fd in fds:
        os.set_inheritable(fd, False)  # (already so; a kernel that ignored the flag aside)
    return data, fds, flags


def close_fds(fds: list[int]) -> None:
    """Close descriptors received from a peer that are not kept."""
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
