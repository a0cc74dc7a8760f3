"""TCP for its owner without a token: the peer's uid read from /proc/net/tcp{,6} (the parser on
recorded lines), and a real daemon on loopback that serves its own user without a token and
refuses another user (the test runs as root; the other user is `nobody`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lspmux.config.loader import load_config
from lspmux.daemon.address import Address, parse, peer_uid, uid_in_table
from lspmux.daemon.server import Daemon
from tests.e2e.daemon_harness import free_port

#: Recorded from /proc/net/tcp on this machine: a listener on 127.0.0.1:49629 (0xC1DD), a
#: client on port 45342 (0xB11E) and the daemon's accepted side. The client's row says uid
#: 1000 here (recorded as root, the column edited) so that the test tells the rows apart.
TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:C1DD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 69940 1 000000008dc5543c 100 0 0 10 0
   2: 0100007F:B11E 0100007F:C1DD 01 00000000:00000000 00:00000000 00000000  1000        0 69941 2 0000000050dd9784 20 0 0 10 -1
   3: 0100007F:C1DD 0100007F:B11E 01 00000000:00000000 00:00000000 00000000     0        0 69942 1 00000000f4a5ad8e 20 0 0 10 -1
"""

#: From /proc/net/tcp6: [::1]:38489 (0x9659) and a client on port 52452 (0xCCE4), uid 1001 for
#: the client (edited likewise); and an IPv4 client seen by an IPv6 listener (::ffff:127.0.0.1).
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   1: 00000000000000000000000001000000:9659 00000000000000000000000001000000:CCE4 01 00000000:00000000 00:00000000 00000000     0        0 69947 1 00000000b08b42c6 20 0 0 10 -1
   2: 00000000000000000000000001000000:CCE4 00000000000000000000000001000000:9659 01 00000000:00000000 00:00000000 00000000  1001        0 69946 2 00000000d136a3cf 20 0 0 10 -1
   3: 0000000000000000FFFF00000100007F:B000 0000000000000000FFFF00000100007F:9659 01 00000000:00000000 00:00000000 00000000    42        0 69950 2 00000000d136a3cf 20 0 0 10 -1
"""


@pytest.mark.skipif(sys.byteorder != "little", reason="the rows were recorded little-endian")
def test_the_peers_uid_is_read_from_the_recorded_tables() -> None:
    # the client's socket: its own address is the peer's, its peer is the daemon's side
    assert uid_in_table(TCP, own=("127.0.0.1", 45342), peer=("127.0.0.1", 49629)) == 1000
    assert uid_in_table(TCP, own=("127.0.0.1", 49629), peer=("127.0.0.1", 45342)) == 0
    assert uid_in_table(TCP, own=("127.0.0.1", 1), peer=("127.0.0.1", 49629)) is None
    assert uid_in_table(TCP6, own=("::1", 52452), peer=("::1", 38489)) == 1001
    # IPv4-mapped addresses match their IPv4 form, either way round
    assert uid_in_table(TCP6, own=("127.0.0.1", 0xB000), peer=("::ffff:127.0.0.1", 38489)) == 42
    assert (
        uid_in_table("garbage\n  0: zz:zz yy:yy 01 a b c d e\n", own=("::1", 1), peer=("::1", 2))
        is None
    )


def test_the_peers_uid_of_a_live_connection() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()) as client:
            accepted, remote = listener.accept()
            with accepted:
                assert peer_uid(accepted.getsockname(), remote) == os.getuid()
                assert client.getsockname() == remote


def test_a_bare_host_and_port_is_a_tcp_address() -> None:
    assert parse("127.0.0.1:27631") == Address("tcp", host="127.0.0.1", port=27631)
    assert parse("[::1]:27631") == Address("tcp", host="::1", port=27631)


@contextlib.asynccontextmanager
async def serving(token: str | None = None) -> AsyncIterator[Daemon]:
    """A daemon on 127.0.0.1 (with `token`, or none at all)."""
    runtime = Path(tempfile.mkdtemp(prefix="lmxt-", dir="/tmp"))
    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # the lock file's private folder
    address = Address("tcp", host="127.0.0.1", port=free_port())
    daemon = Daemon(address, lambda _root: load_config(None, user_config=None), token=token)
    try:
        await daemon.start()
        yield daemon
    finally:
        await daemon.close()
        if old is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = old
        shutil.rmtree(runtime, ignore_errors=True)


@pytest_asyncio.fixture
async def tcp_daemon() -> AsyncIterator[Daemon]:
    async with serving() as daemon:
        yield daemon


STATUS = {"jsonrpc": "2.0", "id": 1, "method": "lspmux/status"}

#: A client in another process: sends `msg` to the daemon, prints the answer.
ONE_SHOT = """
import json, socket, sys
msg = json.dumps(json.loads(sys.argv[3])).encode()
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10) as s:
    s.sendall(b"Content-Length: %d\\r\\n\\r\\n" % len(msg) + msg)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
print(data.partition(b"\\r\\n\\r\\n")[2].decode())
"""


def as_other_user() -> list[str]:
    """The command prefix that runs a program as `nobody` (the test runs as root)."""
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    runuser = shutil.which("runuser")
    assert runuser, "neither setpriv nor runuser is installed (util-linux)"
    return [runuser, "-u", "nobody", "--"]


async def one_shot(daemon: Daemon, msg: dict[str, Any], prefix: list[str]) -> dict[str, Any]:
    # the system's Python: `nobody` cannot run a pyenv one that lives under root's home
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    argv = [*prefix, python, "-c", ONE_SHOT, daemon.address.host]
    argv += [str(daemon.address.port), json.dumps(msg)]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/"
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    return dict(json.loads(out))


async def test_its_own_user_needs_no_token_and_others_are_refused(tcp_daemon: Daemon) -> None:
    assert os.getuid() == 0, "the test runs the other client as nobody, which needs root"
    mine = await one_shot(tcp_daemon, STATUS, [])
    assert mine["result"]["address"] == str(tcp_daemon.address)
    other = await one_shot(tcp_daemon, STATUS, as_other_user())
    message = other["error"]["message"]
    assert "uid 65534" in message and "token" in message, message
    init = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"capabilities": {}, "rootUri": Path("/tmp").as_uri()},
    }
    refused = await one_shot(tcp_daemon, init, as_other_user())
    assert "token" in refused["error"]["message"]
    assert tcp_daemon.clients.info == {}


async def test_with_a_token_another_user_may_still_come_in() -> None:
    async with serving(token="s3cret") as daemon:
        status = {**STATUS, "params": {"token": "s3cret"}}
        assert "result" in await one_shot(daemon, status, as_other_user())
        wrong = {**STATUS, "params": {"token": "nope"}}
        refused = await one_shot(daemon, wrong, as_other_user())
        assert "wrong token" in refused["error"]["message"]
        assert "result" in await one_shot(daemon, STATUS, [])  # its own user, no token
