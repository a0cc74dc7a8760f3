"""The outgoing half of a connection: encoding, writes coalesced per read, and the write limit.

Writes are coalesced per read: while any connection handles the messages of one read, what is
sent on every connection is held (`BATCH`) and written at the end of that read, one write per
connection. Forty pipelined requests that arrive in one read go to a backend in one write (one
system call, one wake-up of the server), not forty; a message sent outside a read (a timer, a
task) is written at once. A large body is written as it is, after its header (`writelines`),
never copied into one buffer with it. After every write the queue is checked against the
backpressure (`Backpressure._check_queue`); before it, against `max_write_buffer`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import orjson

from lspmux.errors import InternalError, JsonRpcError
from lspmux.wire.header import HEADER
from lspmux.wire.messages import Message, error, notification, rewrite_response_id

log = logging.getLogger("lspmux.wire")

Pieces = list[bytes | bytearray | memoryview]


class _Batch(threading.local):
    """The connections whose writes are held while one read is handled (see the module doc):
    a list during a read, None otherwise. asyncio runs a loop's protocol callbacks on the loop's
    thread, one at a time; the batch is per thread, so loops in other threads never share it."""

    dirty: list[Writes] | None = None


BATCH = _Batch()

#: Bodies longer than this are written as they are, after their header, rather than copied
#: into one buffer with it (a megabyte copy is fresh memory the kernel must fault in).
LARGE_WRITE = 64 * 1024


def flush(dirty: list[Writes]) -> None:
    """The writes held during a read, written at its end: one write per connection."""
    for conn in dirty:
        try:
            conn._flush()
        except Exception as exc:  # one broken stream must not keep the others' messages
            flush_failed(conn, exc)


def flush_failed(conn: Writes, exc: BaseException) -> None:
    log.error("%s: write failed", conn.name, exc_info=exc)


def _write_pieces(w: asyncio.WriteTransport, pieces: Pieces) -> None:
    """Write `pieces` in order without joining them, where the transport can (uvloop gathers
    them into one writev); otherwise as one buffer."""
    writelines = getattr(w, "writelines", None)
    if writelines is not None:
        writelines(pieces)
    else:
        w.write(b"".join(pieces))


class Writes:
    """What a connection sends (mixed into `Connection`, which owns the transports)."""

    name: str
    max_write_buffer: int | None
    backpressure: int | None
    _debug: bool
    _writer: asyncio.WriteTransport | None
    #: headers and bodies held during a read, and the size of those bodies
    _held: Pieces
    _held_size: int

    # of the connection, and of its `Backpressure` half (annotations only: no stubs that
    # would come before them in the connection's method order)
    abort: Callable[[str], None]
    _check_queue: Callable[[asyncio.WriteTransport, int], None]

    def send(self, msg: Message) -> None:
        try:
            body = orjson.dumps(msg)
        except orjson.JSONEncodeError as exc:  # e.g. nested deeper than orjson encodes
            if "method" in msg or "id" not in msg:
                raise
            # A response that cannot be encoded still answers its request, with an error.
            log.warning("%s: cannot encode the answer to %r: %s", self.name, msg["id"], exc)
            body = orjson.dumps(
                error(msg["id"], InternalError(f"lspmux could not encode the answer: {exc}"))
            )
        self.send_raw(body)

    def send_raw(self, body: bytes | bytearray) -> None:
        w = self._writer
        if w is None or w.is_closing():
            if self._debug:
                log.debug("%s: dropped a message, the stream is closed", self.name)
            return
        if self._debug:
            log.debug("%s ← %s", self.name, body[:500])
        header = HEADER % len(body)
        dirty = BATCH.dirty
        if dirty is not None:  # inside a read: hold it, flushed when the read is handled
            if not self._held:
                dirty.append(self)
            self._held += (header, body)
            self._held_size += len(body)
            return
        # what `_write` does, inline: this is the path of every message sent outside a read
        if self._over_write_limit(w):
            return
        if len(body) > LARGE_WRITE:
            _write_pieces(w, [header, body])
        else:
            w.write(header + body)
        if self.backpressure is not None:
            self._check_queue(w, len(body))

    def send_raw_response(self, body: bytes, offset: int, new_id: int | str) -> None:
        """Relay a sniffed response (`sniff_response(body)` gave `offset`) under another id:
        what `send_raw(rewrite_response_id(body, offset, new_id))` sends, without copying the
        body (a large answer is written from the very bytes that were read)."""
        if len(body) <= LARGE_WRITE:
            self.send_raw(rewrite_response_id(body, offset, new_id))
            return
        w = self._writer
        if w is None or w.is_closing():
            return
        head = b'{"jsonrpc":"2.0","id":' + orjson.dumps(new_id) + b","
        rest = memoryview(body)[offset:]
        size = len(head) + len(rest)
        if self._debug:
            log.debug("%s ← %s… (%d bytes, relayed)", self.name, head, size)
        pieces: Pieces = [
            HEADER % size,
            head,
            rest,
        ]
        self._send_pieces(w, pieces, size)

    def _send_pieces(self, w: asyncio.WriteTransport, pieces: Pieces, size: int) -> None:
        """Write one message (`size`: the length of its body), or hold it until the end of the
        read being handled (see the module doc)."""
        dirty = BATCH.dirty
        if dirty is not None:  # inside a read: hold it, flushed when the read is handled
            if not self._held:
                dirty.append(self)
            self._held += pieces
            self._held_size += size
            return
        self._write(w, pieces, size)

    def _write(self, w: asyncio.WriteTransport, pieces: Pieces, size: int) -> None:
        if self._over_write_limit(w):
            return
        if size > LARGE_WRITE:
            _write_pieces(w, pieces)
        else:
            w.write(b"".join(pieces))
        if self.backpressure is not None:
            self._check_queue(w, size)

    def _flush(self) -> None:
        held = self._held
        if not held:
            return
        size = self._held_size
        self._held = []
        self._held_size = 0
        w = self._writer
        if w is None or w.is_closing():
            if self._debug:
                log.debug("%s: dropped %d messages, the stream is closed", self.name, len(held))
            return
        self._write(w, held, size)

    def _over_write_limit(self, w: asyncio.WriteTransport) -> bool:
        """Whether the peer is disconnected instead of written to: the bytes it has not read
        yet already pass `max_write_buffer`. Checked before a write, so one message of any
        size is always accepted onto a queue under the bound (a large answer to a client that
        reads is no fault); a peer that stopped reading is aborted, not closed gracefully,
        which would wait for the queue to drain and keep its memory forever."""
        limit = self.max_write_buffer
        if limit is None:
            return False
        queued = w.get_write_buffer_size()
        if queued <= limit:
            return False
        self.abort(f"not reading: {queued} bytes queued, limit {limit}")
        return True

    def notify(self, method: str, params: Any = None) -> None:
        self.send(notification(method, params))

    def respond(self, msg_id: int | str | None, value: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": value})

    def respond_error(self, msg_id: int | str | None, err: JsonRpcError | dict[str, Any]) -> None:
        self.send(error(msg_id, err))
