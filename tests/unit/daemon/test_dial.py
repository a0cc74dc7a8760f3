"""`dial.request`: one request to the daemon with blocking calls (`lspmux status`, `reload`,
`locate`, the agent verbs): a connect that fails is an OSError (no daemon: the caller may do
without it), a daemon that fails once connected is a ShimError naming it."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lspmux.daemon.address import Address
from lspmux.daemon.dial import ShimError, request
from lspmux.locate import command


@pytest.fixture
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="lmxd-", dir="/tmp") as name:  # short socket paths
        yield Path(name)


def default_socket_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon's default socket is `folder/lspmux/lspmux.sock`, as a user's verb finds it."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.delenv("LSPMUX_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / "config"))


def test_no_daemon_is_an_os_error(folder: Path) -> None:
    address = Address("unix", path=str(folder / "none.sock"))
    with pytest.raises(FileNotFoundError):
        request(address, "lspmux/status", {}, token=None, timeout=5)


def test_a_daemon_that_accepts_and_never_answers_is_named_after_the_timeout(
    folder: Path,
) -> None:
    path = folder / "mute.sock"
    with socket.socket(socket.AF_UNIX) as mute:
        mute.bind(str(path))
        mute.listen()
        with pytest.raises(ShimError, match=r"the daemon at unix:.*mute.sock did not answer"):
            request(Address("unix", path=str(path)), "lspmux/status", {}, token=None, timeout=0.2)


def test_a_daemon_that_accepts_nobody_fails_the_connect(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wedged daemon (its backlog full: it accepts nobody) fails the connect within
    `connect_timeout` (a Unix socket's at once), an OSError however long the request may take:
    `lspmux locate` then answers without the daemon."""
    path = folder / "lspmux" / "lspmux.sock"
    path.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as full:
        full.bind(str(path))
        full.listen(0)
        waiting = []
        try:
            while True:  # fill the backlog: a connect that would wait fails here instead
                sock = socket.socket(socket.AF_UNIX)
                sock.setblocking(False)
                waiting.append(sock)
                sock.connect(str(path))
        except BlockingIOError:
            pass
        try:
            address = Address("unix", path=str(path))
            with pytest.raises(OSError):
                request(address, "lspmux/status", {}, token=None, timeout=60, connect_timeout=0.1)
            default_socket_in(folder, monkeypatch)
            assert command.through_daemon("a.py@x", root=str(folder), want_range=False) is None
        finally:
            for sock in waiting:
                sock.close()


def test_locate_without_a_daemon_says_none(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default_socket_in(folder, monkeypatch)
    assert command.through_daemon("a.py@x", root=str(folder), want_range=False) is None
