"""Reaching the daemon from a client process (standard library only: the shim imports it).

`connect` opens a socket to the daemon and, when none answers on a Unix address, starts one
(under an flock on a lock file beside the socket, so two shims starting together produce one
daemon; `subprocess` is imported only then). `request` sends one request as a connection's
first message and returns its result (`lspmux status`, `lspmux reload`, `lspmux locate`, the
agent's verbs).
"""

from __future__ import annotations

import os
import sys

from lspmux.daemon.address import Address, check_socket_dir
from lspmux.wire.blocking import BlockingPeer, WireError
from lspmux.wire.blocking import open_socket as _open

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:
    import socket
    from collections.abc import Mapping
    from typing import Any

AUTOSTART_TIMEOUT = 15.0


class ShimError(Exception):
    """A failure the shim reports on stderr (never on stdout, the protocol channel)."""


def open_socket(address: Address, timeout: float | None = None) -> socket.socket:
    """A blocking socket to the daemon at `address` (`timeout` bounds the connect)."""
    return _open(address.path if address.is_unix else (address.host, address.port), timeout)


_NOT_RUNNING = (FileNotFoundError, ConnectionRefusedError)


def connect(address: Address, *, autostart: bool, environ: Mapping[str, str]) -> socket.socket:
    """A socket to the daemon; starts it first (Unix addresses only) when none answers."""
    try:
        return open_socket(address)
    except _NOT_RUNNING:
        if not autostart or not address.is_unix:
            raise
    import fcntl
    import time

    check_socket_dir(address)
    lock = os.open(address.lock_path("lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one shim at a time decides whether to start it
        try:
            return open_socket(address)
        except _NOT_RUNNING:
            pass
        proc = start_daemon(address, environ)
        deadline = time.monotonic() + AUTOSTART_TIMEOUT
        while True:
            try:
                return open_socket(address)
            except _NOT_RUNNING:
                code = proc.poll()
                if code is not None or time.monotonic() > deadline:
                    log = address.lock_path("log")
                    why = f"exited with code {code}" if code is not None else "did not answer"
                    raise ShimError(
                        f"the lspmux daemon {why} (started for {address}); see {log}"
                    ) from None
                time.sleep(0.02)
    finally:
        os.close(lock)  # releases the flock


def start_daemon(address: Address, environ: Mapping[str, str]) -> Any:
    import subprocess

    log_path = address.lock_path("log")
    argv = [sys.executable, "-m", "lspmux", "server", "--listen", str(address)]
    argv += ["--log-file", str(log_path)]
    with open(os.devnull, "rb") as null_in, open(log_path, "ab") as err:
        os.chmod(log_path, 0o600)
        return subprocess.Popen(
            argv,
            stdin=null_in,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd="/",
            env=dict(environ),
            start_new_session=True,
            close_fds=True,
        )


def request(
    address: Address,
    method: str,
    params: dict[str, Any],
    *,
    token: str | None,
    timeout: float,
    connect_timeout: float | None = None,
) -> Any:
    """One request as the connection's first message (`lspmux/status`, `lspmux/reload`, an
    agent verb's `lspmux/tool`, `lspmux locate`'s `lspmux/locate`); its result. OSError when no
    daemon answers the connect (within `connect_timeout`, else `timeout`); ShimError, naming
    the daemon, with its error message, or when it leaves or says nothing for `timeout`
    seconds once connected."""
    if token is not None:
        params = {**params, "token": token}
    sock = open_socket(address, timeout if connect_timeout is None else connect_timeout)
    try:
        sock.settimeout(timeout)
        peer = BlockingPeer.over_socket(sock, f"the daemon at {address}")
        return peer.request(method, params)
    except TimeoutError:
        raise ShimError(f"the daemon at {address} did not answer within {timeout:g}s") from None
    except OSError as exc:
        raise ShimError(f"the daemon at {address} went away: {exc}") from None
    except WireError as exc:
        raise ShimError(str(exc)) from None
    finally:
        sock.close()
