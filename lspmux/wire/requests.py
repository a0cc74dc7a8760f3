"""The requests a connection sends its peer, and the exactly-one completion of each.

`Requests` is the half of `Connection` that owns the pending table: `request()` numbers a
request (integers, or `<prefix>N` strings for a client whose own ids must never be reused),
remembers its callback and deadline, and completes it exactly once — with the peer's response,
a timeout error (also sending the peer `$/cancelRequest`), or, when the stream closes, an error
naming the peer (`fail_all`). Timeouts cost no timer per request: deadlines go into a heap that
one timer per connection sweeps (`SWEEP_STEP`). A response handler that raises completes its
request with an error instead, so the request behind it is still answered.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from lspmux.errors import InternalError, InvalidParams, JsonRpcError, RequestFailed
from lspmux.wire.messages import Message, error

log = logging.getLogger("lspmux.wire")

ResponseCallback = Callable[[Message], None]
#: A sniffed response's body (a large one as the bytearray it was read into, which nothing
#: else holds) and the offset of its "result"/"error" key.
RawCallback = Callable[[bytes, int], None]


class _Pending:
    __slots__ = ("callback", "deadline", "method", "raw", "timeout")

    def __init__(self, method: str, callback: ResponseCallback, raw: RawCallback | None) -> None:
        self.method = method
        self.callback = callback
        self.raw = raw
        self.timeout: float | None = None  # both set by `Requests.forward`
        self.deadline = 0.0


class Record(Protocol):
    """What the pending table holds for a request: `_Pending`, or an object of the caller's
    that is its own pending record (`Requests.forward`: the session's fast lane)."""

    method: str
    timeout: float | None
    deadline: float

    def callback(self, msg: Message) -> None: ...

    @property
    def raw(self) -> RawCallback | None: ...


#: Timeouts are checked by one sweep per connection, at most this often (seconds): a request
#: times out up to this much late, and a request costs no timer of its own.
SWEEP_STEP = 0.25


class Requests:
    """The pending table of a connection (mixed into `Connection`, which sends the bytes)."""

    name: str
    _closed: bool

    def send_raw(self, body: bytes) -> None:
        raise NotImplementedError

    def notify(self, method: str, params: Any = None) -> None:
        raise NotImplementedError

    def _init_requests(self, id_prefix: str | None) -> None:
        self._pending: dict[int | str, Record] = {}
        self._next_id = 1
        self._id_prefix = id_prefix
        self._deadlines: list[tuple[float, int, int | str]] = []  # (deadline, seq, id) heap
        self._seq = 0
        self._sweep: asyncio.TimerHandle | None = None
        self._sweep_at = 0.0
        #: The loop, kept at the first deadline: `asyncio.get_running_loop()` costs a `getpid`
        #: system call per call before Python 3.12 (its fork check), once per request here.
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def has_pending(self) -> bool:
        """Whether any request sent on this connection waits for its answer."""
        return bool(self._pending)

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
        return self.forward(_Pending(method, callback, raw), params, timeout)

    def forward(self, record: Record, params: Any, timeout: float | None) -> int | str:
        """Send the request `record` stands for: its pending entry, a `_Pending` (`request`)
        or the caller's own object with `callback` and `raw` methods (the session's fast
        lane: one object per request). Its `method` is sent with `params`; its `timeout` and
        `deadline` are set here. The id this peer sees."""
        n = self._next_id
        self._next_id += 1
        msg_id: int | str = n if self._id_prefix is None else f"{self._id_prefix}{n}"
        method = record.method
        if self._closed:
            record.callback(error(msg_id, RequestFailed(f"{self.name} is not running")))
            return msg_id
        msg: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            msg["params"] = params
        try:
            body = orjson.dumps(msg)
        except orjson.JSONEncodeError as exc:
            record.callback(
                error(msg_id, InvalidParams(f"{method}: params cannot be encoded: {exc}"))
            )
            return msg_id
        record.timeout = timeout
        record.deadline = 0.0 if timeout is None else self._add_deadline(msg_id, timeout)
        self._pending[msg_id] = record
        self.send_raw(body)
        return msg_id

    def _add_deadline(self, msg_id: int | str, timeout: float) -> float:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        heap = self._deadlines
        self._seq += 1
        heapq.heappush(heap, (deadline, self._seq, msg_id))
        if len(heap) > 4 * len(self._pending) + 1024:  # answered ones pile up: drop them
            heap[:] = [e for e in heap if e[2] in self._pending]
            heapq.heapify(heap)
        if self._sweep is None or deadline < self._sweep_at:
            if self._sweep is not None:
                self._sweep.cancel()
            self._sweep_at = deadline
            self._sweep = loop.call_at(deadline, self._sweep_deadlines)
        return deadline

    def _sweep_deadlines(self) -> None:
        """Time out every request past its deadline; then wait for the next deadline."""
        self._sweep = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            deadline, _seq, msg_id = heapq.heappop(heap)
            pending = self._pending.get(msg_id)
            if pending is not None and pending.deadline == deadline:
                self._timeout(msg_id, pending.timeout or 0.0)
        if heap and not self._closed:
            self._sweep_at = max(heap[0][0], now + SWEEP_STEP)
            self._sweep = loop.call_at(self._sweep_at, self._sweep_deadlines)

    async def call(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Send a request and wait for its result; an error response raises JsonRpcError."""
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()

        def done(msg: Message) -> None:
            if not fut.done():
                fut.set_result(msg)

        self.request(method, params, done, timeout=timeout)
        msg = await fut
        if "error" in msg:
            raise JsonRpcError.from_error(msg["error"])
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
        self._deadlines.clear()
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for msg_id, p in pending.items():
            p.callback(error(msg_id, RequestFailed(f"{reason} before answering {p.method}")))

    def _complete(self, msg: Message) -> None:
        msg_id = msg.get("id")
        pending = self._pending.pop(msg_id, None) if isinstance(msg_id, int | str) else None
        if pending is None:
            log.debug("%s: response to unknown request %r", self.name, msg_id)
            return
        try:
            pending.callback(msg)
        except Exception as exc:
            self._callback_failed(msg_id, pending, exc)

    def _callback_failed(self, msg_id: Any, pending: Record, exc: Exception) -> None:
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

    @property
    def pending_count(self) -> int:
        return len(self._pending)
