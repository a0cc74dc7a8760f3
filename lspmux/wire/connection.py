"""One JSON-RPC peer over a byte stream: framing, dispatch, and the table of pending requests.

`Connection` is an asyncio Protocol, so it sits directly on a pipe, a socket or a subprocess's
stdout. Incoming requests and notifications go to the owner's handlers; responses complete the
matching pending request. Every request sent through `request()` gets exactly one completion:
the peer's response, a timeout error, or — when the stream closes — an error that names the
peer. A response can be relayed without parsing it (`raw` callbacks); bad input is answered with
a JSON-RPC error and the connection lives on.

Writes are coalesced per read: while any connection handles the messages of one read, what is
sent on every connection is held and written at the end of that read, one write per
connection. Forty pipelined requests that arrive in one read go to a backend in one write (one
system call, one wake-up of the server), not forty; a message sent outside a read (a timer, a
task) is written at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import orjson

from lspmux.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    RequestFailed,
)
from lspmux.wire.framing import FrameError, FrameParser
from lspmux.wire.messages import (
    Message,
    decode,
    error,
    invalid_reason,
    is_error_reply,
    looks_like_response,
    notification,
    request,
    rewrite_response_id,
    sniff_response,
)

log = logging.getLogger("lspmux.wire")

ResponseCallback = Callable[[Message], None]
RawCallback = Callable[[bytes, int], None]


class _Batch(threading.local):
    """The connections whose writes are held while one read is handled (see the module doc):
    a list during a read, None otherwise. asyncio runs a loop's protocol callbacks on the loop's
    thread, one at a time; the batch is per thread, so loops in other threads never share it."""

    dirty: list[Connection] | None = None


_BATCH = _Batch()

#: Bodies longer than this are written as they are, after their header, rather than copied
#: into one buffer with it (a megabyte copy is fresh memory the kernel must fault in).
LARGE_WRITE = 64 * 1024


def _write_pieces(w: asyncio.WriteTransport, pieces: list[bytes | memoryview]) -> None:
    """Write `pieces` in order without joining them, where the transport can (uvloop gathers
    them into one writev); otherwise as one buffer."""
    writelines = getattr(w, "writelines", None)
    if writelines is not None:
        writelines(pieces)
    else:
        w.write(b"".join(pieces))


class _Pending:
    __slots__ = ("callback", "method", "raw", "timer")

    def __init__(
        self,
        method: str,
        callback: ResponseCallback,
        raw: RawCallback | None,
        timer: asyncio.TimerHandle | None,
    ) -> None:
        self.method = method
        self.callback = callback
        self.raw = raw
        self.timer = timer


class Connection(asyncio.Protocol):
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
        duplex: bool = True,
        id_prefix: str | None = None,
    ) -> None:
        self.name = name
        self.duplex = duplex  # False: reads from one pipe, writes to another (attach_writer)
        self.on_request = on_request
        self.on_notification = on_notification
        self.on_close = on_close
        self.reply_errors = reply_errors
        self.max_write_buffer = max_write_buffer
        self._parser = FrameParser()
        self._reader: asyncio.BaseTransport | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._pending: dict[int | str, _Pending] = {}
        self._next_id = 1
        self._id_prefix = id_prefix
        self._closed = False
        self._debug = log.isEnabledFor(logging.DEBUG)
        self._held: list[bytes | memoryview] = []  # headers and bodies held during a read
        self._held_size = 0  # bytes of bodies in _held

    # -- transport plumbing ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._reader = transport
        if self._writer is None and self.duplex:
            self._writer = transport  # type: ignore[assignment]

    def attach_writer(self, transport: asyncio.WriteTransport) -> None:
        self._writer = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.close(exc)

    def eof_received(self) -> bool | None:
        self.close(None)
        return None

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, exc: BaseException | None = None) -> None:
        """Close both directions; every pending request fails at once, naming this peer."""
        if self._closed:
            return
        self._closed = True
        self._flush()  # what was sent before the close still goes out
        self.fail_all(f"{self.name} closed the connection")
        for t in (self._writer, self._reader):
            if t is not None and not t.is_closing():
                t.close()
        if self.on_close is not None:
            self.on_close(exc)

    # -- incoming -------------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        batch = _BATCH
        outer = batch.dirty is None
        if outer:
            batch.dirty = []
        try:
            for item in self._parser.feed(data):
                if isinstance(item, FrameError):
                    log.warning("%s: bad frame: %s", self.name, item.detail)
                    continue
                try:
                    self._dispatch_body(item)
                except Exception:  # one message's failure must not drop the rest of the read
                    log.exception("%s: a message could not be handled", self.name)
        finally:
            if outer:
                dirty, batch.dirty = batch.dirty, None
                for conn in dirty or ():
                    try:
                        conn._flush()
                    except Exception:  # one broken stream must not keep the others' messages
                        log.exception("%s: write failed", conn.name)

    def _dispatch_body(self, body: bytes) -> None:
        # Only a connection waiting for answers can relay one raw (a client's requests skip this).
        sniffed = sniff_response(body) if self._pending else None
        if sniffed is not None:
            pending = self._pending.get(sniffed[0])
            if pending is not None and pending.raw is not None:
                del self._pending[sniffed[0]]
                if pending.timer is not None:
                    pending.timer.cancel()
                if self._debug:
                    log.debug("%s → raw response %d (%d bytes)", self.name, sniffed[0], len(body))
                try:
                    pending.raw(body, sniffed[1])
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
            # A request whose id can be read is answered under it (its sender waits for it);
            # anything else under id null (JSON-RPC 2.0, section 5).
            if not (isinstance(msg.get("method"), str) and isinstance(msg_id, int | str)):
                msg_id = None
            if self.reply_errors:
                self.send(error(msg_id, InvalidRequest(f"invalid JSON-RPC message: {reason}")))
            return
        if "method" in msg:
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
            return
        self._complete(msg)

    def _complete(self, msg: Message) -> None:
        msg_id = msg.get("id")
        pending = self._pending.pop(msg_id, None) if isinstance(msg_id, int | str) else None
        if pending is None:
            log.debug("%s: response to unknown request %r", self.name, msg_id)
            return
        if pending.timer is not None:
            pending.timer.cancel()
        try:
            pending.callback(msg)
        except Exception as exc:
            self._callback_failed(msg_id, pending, exc)

    def _callback_failed(self, msg_id: Any, pending: _Pending, exc: Exception) -> None:
        """A response's handler raised: log it and complete the request with an error, so the
        request behind it (a client's, waiting for this answer) is still answered once."""
        log.exception(
            "%s: handling the answer to %s (id %s) failed", self.name, pending.method, msg_id
        )
        try:
            pending.callback(
                error(
                    msg_id,
                    InternalError(
                        f"lspmux could not handle {self.name}'s answer to {pending.method}: {exc}"
                    ),
                )
            )
        except Exception:
            log.exception("%s: reporting the failure of %s failed too", self.name, pending.method)

    # -- outgoing -------------------------------------------------------------------------------

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

    def send_raw(self, body: bytes) -> None:
        w = self._writer
        if w is None or w.is_closing():
            if self._debug:
                log.debug("%s: dropped a message, the stream is closed", self.name)
            return
        if self._debug:
            log.debug("%s ← %s", self.name, body[:500])
        header = b"Content-Length: %d\r\n\r\n" % len(body)
        dirty = _BATCH.dirty
        if dirty is not None:  # inside a read: hold it, flushed when the read is handled
            if not self._held:
                dirty.append(self)
            self._held += (header, body)
            self._held_size += len(body)
            return
        if len(body) > LARGE_WRITE:
            _write_pieces(w, [header, body])
        else:
            w.write(header + body)
        self._check_write_buffer(w)

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
        pieces: list[bytes | memoryview] = [b"Content-Length: %d\r\n\r\n" % size, head, rest]
        dirty = _BATCH.dirty
        if dirty is not None:
            if not self._held:
                dirty.append(self)
            self._held += pieces
            self._held_size += size
            return
        _write_pieces(w, pieces)
        self._check_write_buffer(w)

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
        if size > LARGE_WRITE:
            _write_pieces(w, held)
        else:
            w.write(b"".join(held))
        self._check_write_buffer(w)

    def _check_write_buffer(self, w: asyncio.WriteTransport) -> None:
        if self.max_write_buffer is not None and w.get_write_buffer_size() > self.max_write_buffer:
            log.warning(
                "%s: peer is not reading (%d bytes queued); disconnecting it",
                self.name,
                w.get_write_buffer_size(),
            )
            self.close(None)

    def notify(self, method: str, params: Any = None) -> None:
        self.send(notification(method, params))

    def respond(self, msg_id: int | str | None, value: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": value})

    def respond_error(self, msg_id: int | str | None, err: JsonRpcError | dict[str, Any]) -> None:
        self.send(error(msg_id, err))

    def request(
        self,
        method: str,
        params: Any,
        callback: ResponseCallback,
        *,
        timeout: float | None = None,
        raw: RawCallback | None = None,
    ) -> int | str:
        """Send a request; `callback` gets the response dict (with "result" or "error") exactly
        once. With `raw`, a response that can be sniffed is given as bytes instead. Returns the
        id this peer sees, for `$/cancelRequest`."""
        n = self._next_id
        self._next_id += 1
        msg_id: int | str = n if self._id_prefix is None else f"{self._id_prefix}{n}"
        if self._closed:
            callback(error(msg_id, RequestFailed(f"{self.name} is not running")))
            return msg_id
        timer = None
        if timeout is not None:
            timer = asyncio.get_running_loop().call_later(timeout, self._timeout, msg_id, timeout)
        try:
            body = orjson.dumps(request(msg_id, method, params))
        except orjson.JSONEncodeError as exc:  # nothing is pending: the caller hears it once
            if timer is not None:
                timer.cancel()
            callback(error(msg_id, InvalidParams(f"{method}: params cannot be encoded: {exc}")))
            return msg_id
        self._pending[msg_id] = _Pending(method, callback, raw, timer)
        self.send_raw(body)
        return msg_id

    async def call(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send a request and wait for its result; an error response raises JsonRpcError."""
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

        def done(msg: Message) -> None:
            if not fut.done():
                fut.set_result(msg)

        self.request(method, params, done, timeout=timeout)
        msg = await fut
        if "error" in msg:
            err = msg["error"] or {}
            exc = JsonRpcError(str(err.get("message", "error")), err.get("data"))
            exc.CODE = int(err.get("code", -32603))
            raise exc
        return msg.get("result")

    def cancel(self, msg_id: int | str) -> bool:
        """Tell the peer to cancel `msg_id` (it still answers, with a result or an error)."""
        if msg_id not in self._pending:
            return False
        self.notify("$/cancelRequest", {"id": msg_id})
        return True

    def _timeout(self, msg_id: int | str, seconds: float) -> None:
        pending = self._pending.pop(msg_id, None)
        if pending is None:
            return
        log.warning(
            "%s: %s (id %s) timed out after %gs", self.name, pending.method, msg_id, seconds
        )
        if not self._closed:
            self.notify("$/cancelRequest", {"id": msg_id})
        pending.callback(
            error(
                msg_id,
                RequestFailed(
                    f"{self.name} did not answer {pending.method} within {seconds:g}s "
                    "(the request was cancelled; raise request_timeout in the config if the "
                    "server needs longer)"
                ),
            )
        )

    def fail_all(self, reason: str) -> None:
        """Fail every pending request at once with an error that says why."""
        pending, self._pending = self._pending, {}
        for msg_id, p in pending.items():
            if p.timer is not None:
                p.timer.cancel()
            p.callback(error(msg_id, RequestFailed(f"{reason} before answering {p.method}")))

    @property
    def pending_count(self) -> int:
        return len(self._pending)
