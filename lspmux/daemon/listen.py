"""Being the only daemon for an address, and listening on it.

An flock on the address's lock file, held for the daemon's lifetime, makes a second daemon for
the same address fail with the first one's pid; a live socket is never replaced, a stale one
(nobody answers on it) is. A Unix socket is 0600 from the moment it exists, in a private
folder; TCP is opt-in, loopback only, and needs a token where the peer's uid cannot be told
(the daemon's own user is recognised through /proc/net/tcp on Linux).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import socket
from collections.abc import Callable

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
    protocol: Callable[[str], asyncio.Protocol],
    *,
    token: str | None,
) -> asyncio.AbstractServer:
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
        return await loop.create_unix_server(lambda: protocol("unix"), sock=sock)
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
