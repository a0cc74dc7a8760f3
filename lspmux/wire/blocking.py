"""The blocking JSON-RPC peer: framed messages over a socket or a pair of pipes, no event loop
(standard library only: the shim imports it, and must start fast).

`BlockingPeer` reads one message body at a time (`read_body`) with the header parser of
`wire/header.py`, writes framed bodies (`write_body`), and asks one request and waits for its
answer (`request`). Its users: the `lspmux client` shim (the editor's first message, and the
one-shot `lspmux/status` and `lspmux/reload` requests), and the fitting worker
(`lspmux/fit_worker.py`, a request loop over its stdin and stdout). `open_socket` connects to
a Unix or TCP address.

A peer that breaks the framing (a bad header, a length over the limit, a header without its
end) is a `WireError` naming the peer: with blocking reads there is nobody to carry on for.
"""

from __future__ import annotations

import os

from lspmux.wire.header import HEADER_END, MAX_HEADER, FrameError, frame, header_length

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from typing import Any

#: Bytes asked for per read; a large body is read in pieces of up to `MAX_READ`.
CHUNK = 1 << 16
MAX_READ = 1 << 20


class WireError(Exception):
    """A peer's bytes could not be read as JSON-RPC messages, or it left before answering."""


class RemoteError(WireError):
    """The peer answered a request with an error: its message, and its code when it gave one."""

    def __init__(self, message: str, code: Any = None) -> None:
        super().__init__(message)
        self.code = code


class BlockingPeer:
    """One framed JSON-RPC peer read and written with blocking calls. `name` says who it is in
    every error ("the client's first message", "the daemon at unix:/…"). Without `send`
    it only reads."""

    def __init__(
        self,
        name: str,
        recv: Callable[[int], bytes],
        send: Callable[[bytes], object] | None = None,
        *,
        limit: int | None = None,
    ) -> None:
        self.name = name
        self._recv = recv
        self._send = send
        self.limit = limit
        self._buf = bytearray()

    @classmethod
    def over_socket(
        cls, sock: socket.socket, name: str, *, limit: int | None = None
    ) -> BlockingPeer:
        return cls(name, sock.recv, sock.sendall, limit=limit)

    @classmethod
    def over_fds(
        cls, read_fd: int, write_fd: int, name: str, *, limit: int | None = None
    ) -> BlockingPeer:
        return cls(
            name, lambda n: os.read(read_fd, n), lambda data: write_all(write_fd, data), limit=limit
        )

    def read_body(self, *, exact: bool = False) -> bytes | None:
        """The next message's body; None when the input ends first (a partial message is
        dropped). WireError when the bytes are not a message. `exact`: read no byte past it
        (the header a byte at a time), so that what follows stays for another reader."""
        buf = self._buf
        while True:
            end = buf.find(HEADER_END)
            if end >= 0:
                break
            if len(buf) > MAX_HEADER:
                raise WireError(f"{self.name}: no header end within {MAX_HEADER} bytes")
            if not self._fill(1 if exact else CHUNK):
                return None
        length = header_length(bytes(buf[:end]), self.limit)
        if isinstance(length, FrameError):
            raise WireError(f"{self.name}: {length.detail}")
        stop = end + len(HEADER_END) + length
        while len(buf) < stop:
            wanted = stop - len(buf)
            if not self._fill(min(wanted if exact else max(wanted, CHUNK), MAX_READ)):
                return None
        body = bytes(buf[end + len(HEADER_END) : stop])
        del buf[:stop]
        return body

    def _fill(self, size: int) -> bool:
        data = self._recv(size)
        if not data:
            return False
        self._buf += data
        return True

    def rest(self) -> bytes:
        """What was read beyond the last message (and is forgotten here): the start of what
        follows, for a caller that copies the rest of the stream as it is."""
        rest = bytes(self._buf)
        self._buf.clear()
        return rest

    def write_body(self, body: bytes) -> None:
        if self._send is None:
            raise WireError(f"{self.name} is read, never written to")
        self._send(frame(body))

    def request(self, method: str, params: Any, *, msg_id: int = 1) -> Any:
        """Send one request and wait for its answer (what comes before it is skipped): the
        result, RemoteError for an error answer, WireError when the peer leaves first."""
        import json

        msg = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.write_body(json.dumps(msg).encode())
        while True:
            body = self.read_body()
            if body is None:
                raise WireError(f"{self.name} closed the connection without answering")
            try:
                reply = json.loads(body)
            except ValueError as exc:
                raise WireError(f"{self.name} answered something that is not JSON: {exc}") from None
            if not isinstance(reply, dict) or reply.get("id") != msg_id or "method" in reply:
                continue
            if "error" in reply:
                err = reply["error"]
                if isinstance(err, dict):
                    raise RemoteError(str(err.get("message", err)), err.get("code"))
                raise RemoteError(str(err))
            return reply.get("result")


def write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of `data` to `fd` (a pipe takes it in pieces)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def open_socket(target: str | tuple[str, int], timeout: float | None = None) -> socket.socket:
    """A connected blocking socket: `target` is a Unix socket's path or a TCP (host, port).
    `timeout` bounds the connect only."""
    import socket  # not at import: the proxy reads its first message with this module

    if isinstance(target, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.socket(
            socket.AF_INET6 if ":" in target[0] else socket.AF_INET, socket.SOCK_STREAM
        )
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except BaseException:
        sock.close()
        raise
    sock.settimeout(None)
    return sock
