"""One JSON-RPC peer over a byte stream: framing, dispatch, and the table of pending requests.

`Connection` is an asyncio Protocol, so it sits directly on a pipe, a socket or a subprocess's
stdout. Incoming requests and notifications go to the owner's handlers; responses complete the
matching pending request. Every request sent through `request()` gets exactly one completion:
the peer's response, a timeout error, or — when the stream closes — an error that names the
peer. A response can be relayed without parsing it (`raw` callbacks); bad input is answered with
a JSON-RPC error and the connection lives on, except a message over the maximum size: it gets an
error and the connection is closed (nothing of it is read). A peer whose unread queue passes
`max_write_buffer` is aborted: its queue is dropped at once and the others never wait for it;
one that falls behind (`backpressure`) is not read from meanwhile (`wire/backpressure.py`).

What is sent is written by the `Writes` half (`wire/writes.py`: coalesced per read), the queue
watched by the `Backpressure` half, requests tracked by the `Requests` half.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, cast

from lspmux import speedups
from lspmux.errors import (
    InternalError,
    InvalidRequest,
)
from lspmux.wire.backpressure import Backpressure
from lspmux.wire.framing import FrameError, FrameParser
from lspmux.wire.messages import (
    Message,
    decode,
    error,
    invalid_reason,
    is_error_reply,
    looks_like_response,
    sniff_response,
)
from lspmux.wire.requests import RawCallback, Requests, ResponseCallback
from lspmux.wire.writes import BATCH, Writes, flush, flush_failed

log = logging.getLogger("lspmux.wire")

_Reader = speedups.native.Reader if speedups.native is not None else None

__all__ = ["Connection", "RawCallback", "ResponseCallback"]


class Connection(Writes, Requests, Backpressure, asyncio.BufferedProtocol):
    """A framed JSON-RPC connection. `name` appears in every log line and error message."""

    def __init__(
        self,
        name: str,
        *,
        on_request: Callable[[Message], None],
        on_notification: Callable[[Message], None],
        on_close: Callable[[BaseException | None], None] | None = None,
        reply_errors: bool = True,
        max_write_buffer: int | None = None,
        max_message_size: int | None = None,
        backpressure: int | None = None,
        stuck_after: float = 30.0,
        duplex: bool = True,
        id_prefix: str | None = None,
        on_eof: Callable[[], None] | None = None,
        on_congested: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.duplex = duplex  # False: reads from one pipe, writes to another (attach_writer)
        self.on_request = on_request
        self.on_notification = on_notification
        self.on_close = on_close
        #: With `duplex=False`: called when the read pipe ends, instead of closing both
        #: directions — the owner may still answer what was asked, then `close()`.
        self.on_eof = on_eof
        self.reply_errors = reply_errors
        self.max_write_buffer = max_write_buffer
        self._init_backpressure(backpressure, stuck_after, on_congested)
        self._parser = FrameParser(max_message_size)
        self._reader: asyncio.BaseTransport | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._closed = False
        self._init_requests(id_prefix)
        self._debug = log.isEnabledFor(logging.DEBUG)
        #: The message being handled and the bytes it was read from (during `on_request` and
        #: `on_notification` only): a handler may relay a large message as it came.
        self.handling: tuple[Message, bytes | bytearray] | None = None
        #: headers and bodies held during a read
        self._held: list[bytes | bytearray | memoryview] = []
        self._held_size = 0  # bytes of bodies in _held
        #: The owner's run over a read's messages (`session/native.py`): given the read's
        #: items and an index, it handles the messages from there that it can and returns the
        #: index of the first one left to `_dispatch_body`.
        self.lane: Callable[[list[Any], int], int] | None = None
        self._reads: Callable[[int], None] | None = None  # `buffer_updated`, made once

    @property
    def debugging(self) -> bool:
        """Whether each message is logged (at debug level)."""
        return self._debug

    # -- transport plumbing ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._reader = transport
        if self._writer is None and self.duplex:
            self._writer = transport  # type: ignore[assignment]
            self._watch_transport(transport)

    def attach_writer(self, transport: asyncio.WriteTransport, *, watch: bool = False) -> None:
        """Write to `transport` (with `duplex=False`); `watch`: its protocol passes its
        `pause_writing`/`resume_writing` on to this connection, so let it pause at the same
        bound (`_watch_transport`)."""
        self._writer = transport
        if watch:
            self._watch_transport(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.duplex and self.on_eof is not None and not self._closed:
            # The read pipe ended (a script's input, `< requests`): the write pipe still
            # works, so the owner answers what it was asked before it closes.
            self._reader = None
            self.on_eof()
            return
        self.close(exc)

    def eof_received(self) -> bool | None:
        if not self.duplex and self.on_eof is not None:
            return None  # a pipe's connection_lost follows
        self.close(None)
        return None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def queued(self) -> int:
        """Bytes sent to the peer that it has not read yet (queued in the transport, or held
        until the end of the current read)."""
        w = self._writer
        size = self._held_size
        if w is not None and not w.is_closing():
            size += w.get_write_buffer_size()
        return size

    def abort(self, reason: str) -> None:
        """Drop the connection at once: what is queued for the peer is discarded (its memory
        released), both directions are torn down, and everything pending fails. For a peer that
        stopped reading, where `close()` would wait forever for the queue to drain."""
        if not self._closed:
            log.warning("%s: disconnected (%s)", self.name, reason)
        self._stop_watching()
        self._held = []
        self._held_size = 0
        for t in (self._writer, self._reader):
            abort = getattr(t, "abort", None)
            if abort is not None:
                abort()  # also on a transport already closing: its buffer is dropped
        if not self._closed:
            self.fail_all(f"{self.name} was disconnected ({reason})")
        self.close(None)

    def _refuse_stream(self, detail: str) -> None:
        """A message too large to read: say so to the peer, then close; nothing more is read."""
        log.error("%s: %s; closing the connection", self.name, detail)
        if self.reply_errors and not self._closed:
            self.send(error(None, InvalidRequest(f"lspmux: {detail}; closing the connection")))
        self.close(None)

    def close(self, exc: BaseException | None = None) -> None:
        """Close both directions; every pending request fails at once, naming this peer."""
        if self._closed:
            return
        self._closed = True
        self._stop_watching()
        self._flush()  # what was sent before the close still goes out
        self.fail_all(f"{self.name} closed the connection")
        for t in (self._writer, self._reader):
            if t is not None and not t.is_closing():
                t.close()
        if self.on_close is not None:
            self.on_close(exc)

    # -- incoming -------------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        self._received(self._parser.feed(data))

    @property
    def get_buffer(self) -> Callable[[int], memoryview]:
        """asyncio.BufferedProtocol's `get_buffer(sizehint)`: the transport reads into the
        parser's buffer, so a large message is read straight into its place (see
        `FrameParser.get_buffer`). The parser's own method: a transport takes it once, and
        calls it at every read without a call of this connection's in between; with the
        speedups, the reader's (`buffer_updated`), which hands out the parser's scratch buffer
        without a call of the Python's."""
        reads = self.buffer_updated
        if _Reader is not None and type(reads) is _Reader:
            return cast(Any, reads).get_buffer
        return self._parser.get_buffer

    @property
    def buffer_updated(self) -> Callable[[int], None]:
        """asyncio.BufferedProtocol's `buffer_updated(nbytes)`: with the speedups, a reader in
        C (`_speedups.Reader`) that does the usual read's work in one call (its frames cut,
        the run, the held writes written: what `_buffer_updated` does), else that method.
        Made once: a transport takes it once, and calls it at every read."""
        reads = self._reads
        if reads is None:
            reads = self._reads = (
                _Reader(self, BATCH, flush, flush_failed)
                if _Reader is not None
                else self._buffer_updated
            )
        return reads

    def _buffer_updated(self, nbytes: int) -> None:
        self._received(self._parser.buffer_updated(nbytes))

    def _received(self, items: Sequence[bytes | bytearray | FrameError]) -> None:
        batch = BATCH
        outer = batch.dirty is None
        if outer:
            batch.dirty = []
        try:
            self._handle(items, 0, True)
        finally:
            if outer:
                dirty, batch.dirty = batch.dirty, None
                flush(dirty or [])

    def _handle(
        self, items: Sequence[bytes | bytearray | FrameError], at: int, lane_first: bool
    ) -> None:
        """The read's messages from `at`, inside a read: the run (`lane`) takes what it can,
        the rest is dispatched one by one (`lane_first`: whether the run is asked before the
        message at `at`, which it may already have declined)."""
        lane = self.lane
        count = len(items)
        while at < count:
            if lane_first and lane is not None and type(items) is list:
                try:
                    at = lane(items, at)  # the messages it handled, and where it stopped
                except Exception:  # it handled none of them: the Python does, from now on
                    log.exception("%s: the native lane failed; it is turned off", self.name)
                    lane = self.lane = None
                if at >= count:
                    break
            lane_first = True
            item = items[at]
            at += 1
            if isinstance(item, FrameError):
                if item.fatal:
                    self._refuse_stream(item.detail)
                    return
                log.warning("%s: bad frame: %s", self.name, item.detail)
                continue
            try:
                self._dispatch_body(item)
            except Exception:  # one message's failure must not drop the rest of the read
                log.exception("%s: a message could not be handled", self.name)

    def _dispatch_body(self, body: bytes | bytearray) -> None:
        # Only a connection waiting for answers can relay one raw (a client's requests skip this).
        sniffed = sniff_response(body) if self._pending else None
        if sniffed is not None:
            pending = self._pending.get(sniffed[0])
            if pending is not None and pending.raw is not None:
                del self._pending[sniffed[0]]
                if self._debug:
                    log.debug("%s → raw response %d (%d bytes)", self.name, sniffed[0], len(body))
                try:  # a large body as the bytearray it was read into, not copied: its
                    # handlers read it as bytes (slices, memoryview, startswith), keep no
                    # copy of it, and fitting makes it bytes (`Exchange.reply_raw`)
                    pending.raw(cast(bytes, body), sniffed[1])
                except Exception as exc:
                    self._callback_failed(sniffed[0], pending, exc)
                return
        msg = decode(body)
        if is_error_reply(msg):
            log.warning("%s: %s", self.name, msg["error"]["message"])
            if self.reply_errors:
                self.send(msg)
            return
        if self._debug:
            log.debug("%s → %s", self.name, body[:500])
        reason = invalid_reason(msg)
        if reason is not None:
            if looks_like_response(msg):  # never answer under an id of the peer's own requests
                log.warning("%s: invalid response dropped: %s", self.name, reason)
                return
            log.warning("%s: invalid message: %s", self.name, reason)
            msg_id = msg.get("id")
            # A request whose id can be read is answered under it (its sender waits for it,
            # even when its method is not a string); anything else under id null (JSON-RPC
            # 2.0, section 5).
            if not isinstance(msg_id, int | str):
                msg_id = None
            if self.reply_errors:
                self.send(error(msg_id, InvalidRequest(f"invalid JSON-RPC message: {reason}")))
            return
        if "method" in msg:
            self.handling = (msg, body)
            try:
                if "id" in msg:
                    self.on_request(msg)
                else:
                    self.on_notification(msg)
            except Exception as exc:  # a bad message must not take the connection down
                log.exception("%s: handling %s failed", self.name, msg["method"])
                if "id" in msg and self.reply_errors:
                    self.send(
                        error(
                            msg["id"],
                            InternalError(f"lspmux could not handle {msg['method']}: {exc!r}"),
                        )
                    )
            finally:
                self.handling = None
            return
        self._complete(msg)
