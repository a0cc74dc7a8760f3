"""The blocking JSON-RPC peer (`lspmux.wire.blocking`): frames read one at a time with the one
header parser, requests answered over a real socket, and errors that name the peer."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lspmux.wire.blocking import BlockingPeer, RemoteError, WireError, open_socket, write_all
from lspmux.wire.header import frame


@pytest.fixture
def pipes() -> Iterator[list[int]]:
    """Pipe ends a test opened, closed after it."""
    fds: list[int] = []
    yield fds
    for fd in fds:
        os.close(fd)


def _reader(pipes: list[int], data: bytes, step: int) -> BlockingPeer:
    """A peer reading `data` from a pipe, written `step` bytes at a time by a thread."""
    r, w = os.pipe()
    pipes.append(r)

    def feed() -> None:
        for i in range(0, len(data), step):
            write_all(w, data[i : i + step])
        os.close(w)

    threading.Thread(target=feed, daemon=True).start()
    return BlockingPeer("the test's pipe", lambda n: os.read(r, n))


@pytest.mark.parametrize("step", [1, 7, 1 << 20])
def test_bodies_come_one_at_a_time_however_the_bytes_are_cut(pipes: list[int], step: int) -> None:
    big = b'{"x":"' + b"y" * 300_000 + b'"}'
    data = (
        frame(b'{"a":1}')
        + b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 7\r\n\r\n"
        + b'{"b":2}'
        + frame(big)
        + b"Content-Len"
    )
    peer = _reader(pipes, data, step)
    assert peer.read_body() == b'{"a":1}'
    assert peer.read_body() == b'{"b":2}'
    assert peer.read_body() == big
    assert peer.read_body() is None  # the input ended inside a header


def test_what_follows_the_first_message_is_handed_back_as_it_came(pipes: list[int]) -> None:
    peer = _reader(pipes, frame(b"{}") + b"Content-Length: 5\r\n\r\n{", 1 << 20)
    assert peer.read_body() == b"{}"
    # all of it was read at once: the rest is what a shim copies on, untouched
    assert peer.rest() == b"Content-Length: 5\r\n\r\n{"
    assert peer.rest() == b""


@pytest.mark.parametrize(
    ("header", "detail"),
    [
        (b"Content-Length: +5", "not a number"),
        (b"Content-Length: " + b"7" * 4301, "digits"),
        (b"Content-Type: x", "without Content-Length"),
        (b"Content-Length: 70000", "maximum message size"),
        (b"garbage", "malformed header line"),
    ],
)
def test_a_bad_header_is_an_error_naming_the_peer(
    pipes: list[int], header: bytes, detail: str
) -> None:
    peer = _reader(pipes, header + b"\r\n\r\n{}", 1 << 20)
    peer.limit = 65536
    with pytest.raises(WireError, match=f"the test's pipe: .*{detail}"):
        peer.read_body()


def test_a_header_without_its_end_is_not_read_forever() -> None:
    peer = BlockingPeer("the peer", lambda n: b"x" * n)
    with pytest.raises(WireError, match="no header end"):
        peer.read_body()


def _serve(sock: socket.socket, answers: list[bytes]) -> threading.Thread:
    """A peer at the other end of `sock`: reads one request, writes `answers`, closes."""

    def run() -> None:
        them = BlockingPeer.over_socket(sock, "the test's client")
        request = them.read_body()
        assert request is not None and json.loads(request)["method"] == "ask"
        for body in answers:
            sock.sendall(frame(body))
        sock.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_a_request_gets_its_result_past_what_comes_before_it() -> None:
    ours, theirs = socket.socketpair()
    t = _serve(
        theirs,
        [
            b'{"jsonrpc":"2.0","method":"window/logMessage","params":{}}',
            b'{"jsonrpc":"2.0","id":9,"result":"not ours"}',
            b'{"jsonrpc":"2.0","id":1,"result":{"ok":true}}',
        ],
    )
    assert BlockingPeer.over_socket(ours, "the daemon").request("ask", {}) == {"ok": True}
    t.join(5)
    ours.close()


def test_an_error_answer_is_a_remote_error_with_its_code() -> None:
    ours, theirs = socket.socketpair()
    t = _serve(theirs, [b'{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no"}}'])
    with pytest.raises(RemoteError, match=r"^no$") as caught:
        BlockingPeer.over_socket(ours, "the daemon").request("ask", None)
    assert caught.value.code == -32001
    t.join(5)
    ours.close()


def test_a_peer_that_leaves_without_answering_is_an_error_naming_it() -> None:
    ours, theirs = socket.socketpair()
    t = _serve(theirs, [])
    with pytest.raises(WireError, match="the daemon closed the connection without answering"):
        BlockingPeer.over_socket(ours, "the daemon").request("ask", None)
    t.join(5)
    ours.close()


def test_a_read_only_peer_refuses_to_write() -> None:
    with pytest.raises(WireError, match="never written to"):
        BlockingPeer("stdin", lambda n: b"").write_body(b"{}")


def test_open_socket_reaches_unix_and_tcp_listeners(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(path)
    unix.listen()
    tcp = socket.create_server(("127.0.0.1", 0))
    for listener, target in ((unix, path), (tcp, ("127.0.0.1", tcp.getsockname()[1]))):
        sock = open_socket(target, timeout=5)
        accepted, _ = listener.accept()
        sock.sendall(b"hi")
        assert accepted.recv(2) == b"hi"
        assert sock.gettimeout() is None  # the timeout bounded the connect only
        sock.close()
        accepted.close()
        listener.close()
    with pytest.raises(FileNotFoundError):
        open_socket(str(tmp_path / "none.sock"), timeout=1)
