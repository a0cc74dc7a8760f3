"""Slow-peer protection: a peer that does not read what it is sent is not read from, then dropped.

`Backpressure` is the half of `Connection` that watches the bytes queued for the peer. Over
`backpressure` bytes the peer is *congested*: it is not read from (a client that does not take
its answers sends no more requests to the backends it shares, so it cannot make them work for
nobody or make the others wait behind that work); if it takes none of its bytes for `QUIET`
seconds (looked at every `DRAIN_POLL`) its owner hears it once (`on_congested`: the daemon
then cancels the peer's work at the servers); if it stays behind for `stuck_after` seconds it
is aborted. Once its queue drains to a quarter of `backpressure` it is read again.

A peer that is behind is not always one that stopped reading: a client that writes 20,000
requests at once reads its answers more slowly than a server through lspmux makes them. Such a
peer takes bytes between looks; only one that took none for `QUIET` (counted from the first
look, once the loop is free after it fell behind) is told to its owner, so the work of a client
that reads is not cancelled, and that of a frozen one is within about `QUIET`.

The queue is counted here, after every write (`transport.get_write_buffer_size()`), rather than
trusted to the transport's `pause_writing`: CPython 3.12 and 3.13's default loop never pauses
the protocol from `writelines()` (only `write()` does; uvloop and 3.11 pause from both), so a
peer sent its large answers through `writelines` would never count as behind. For the same
reason the drain is polled while congested (`DRAIN_POLL`; the same poll drops a peer behind for
`stuck_after`), since a transport that did not pause the protocol does not resume it either;
where the transport does pause, its `resume_writing` ends the congestion at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("lspmux.wire")

#: While a peer is congested, seconds between two looks at whether its queue drained.
DRAIN_POLL = 0.05
#: Seconds a peer that fell behind may take none of its bytes before it counts as not reading
#: (`on_congested`). Counted from the first look at its queue, not from the moment it fell
#: behind: the loop may have been busy until then (the very burst of writes that put the peer
#: behind), so its queue had no chance to drain yet. Long enough that a reader paused by a
#: loaded machine is not taken for a frozen one (20 ms was not: a test's reader, three
#: busy processes on two CPUs); short enough that a frozen editor's work stops soon.
QUIET = 0.2


class _Congestion:
    __slots__ = ("deadline", "queued", "quiet_since", "timer", "told", "written")

    def __init__(self, deadline: float, timer: asyncio.Handle) -> None:
        self.deadline = deadline  # the loop's time at which the peer is dropped
        self.timer = timer
        self.queued = -1  # its queue at the last look (-1: not looked at yet)
        self.written = 0  # bytes written to it since (bodies: a lower bound)
        self.quiet_since = 0.0  # the loop's time of the last look that found it reading
        self.told = False  # `on_congested` was called


class Backpressure:
    """The queue watch of a connection (mixed into `Connection`, which owns the transports)."""

    name: str
    _closed: bool
    _debug: bool
    _reader: asyncio.BaseTransport | None
    _writer: asyncio.WriteTransport | None

    def abort(self, reason: str) -> None:
        raise NotImplementedError

    def _init_backpressure(
        self,
        backpressure: int | None,
        stuck_after: float,
        on_congested: Callable[[], None] | None,
    ) -> None:
        #: Bytes queued for the peer above which it is not read until its queue drains to a
        #: quarter of that; None: always read.
        self.backpressure = backpressure
        #: Seconds a peer may stay over `backpressure` before it is disconnected (aborted).
        self.stuck_after = stuck_after
        #: Called when the peer falls behind (passes `backpressure`): its owner stops the work
        #: being done for it.
        self.on_congested = on_congested
        #: While the peer is behind: since when, and the poll timer. One attribute for all of
        #: it: a `Connection` has 29, and a 30th (measured on CPython 3.11) leaves the compact
        #: layout CPython gives instances with few attributes, slowing every message by 5%.
        self._congestion: _Congestion | None = None
        self._owed = 0  # bytes being prepared for the peer (see `owe`)
        self._reading_paused = False

    def _watch_transport(self, transport: asyncio.BaseTransport) -> None:
        """Let the transport pause the protocol at the same bound, where it does (its
        `resume_writing` then ends a congestion without waiting for the poll)."""
        if self.backpressure is not None:
            transport.set_write_buffer_limits(  # type: ignore[attr-defined]
                high=self.backpressure, low=self.backpressure // 4
            )

    @property
    def congested(self) -> bool:
        """The peer is behind on what it was sent (over `backpressure`, not read from)."""
        return self._congestion is not None

    @property
    def not_reading(self) -> bool:
        """The peer is behind and took none of its queue for `QUIET` (its owner was told:
        `on_congested`)."""
        congestion = self._congestion
        return congestion is not None and congestion.told

    def _check_queue(self, w: asyncio.WriteTransport, size: int) -> None:
        """After a write of `size` bytes: is the peer now over `backpressure`? (see the
        module doc)"""
        congestion = self._congestion
        if congestion is not None:
            congestion.written += size
            return
        limit = self.backpressure
        if limit is not None and w.get_write_buffer_size() > limit:
            self._congest()

    def pause_writing(self) -> None:
        """The transport says the peer's queue passed `backpressure`."""
        self._congest()

    def resume_writing(self) -> None:
        """The transport says the peer's queue drained to a quarter of `backpressure`."""
        self._relieve()

    def _congest(self) -> None:
        if self.backpressure is None or self._reader is None or self._closed:
            return
        if self._congestion is not None:
            return  # already behind: its time runs from the first moment it was
        if self._debug:
            log.debug("%s: behind on its answers; its requests wait until it reads", self.name)
        loop = asyncio.get_running_loop()
        self._congestion = _Congestion(
            loop.time() + self.stuck_after,
            loop.call_soon(self._poll_drain),  # the baseline, once the loop is free
        )
        self._update_reading()

    def _poll_drain(self) -> None:
        """While behind: read again once the queue drained; tell the owner once the peer took
        none of its bytes for `QUIET`; abort once behind too long."""
        congestion = self._congestion
        if congestion is None or self._closed:
            return
        assert self.backpressure is not None
        w = self._writer
        loop = asyncio.get_running_loop()
        low = self.backpressure // 4
        if w is not None and w.is_closing():
            w = None
        queued = w.get_write_buffer_size() if w is not None else 0
        if w is not None and queued <= low:
            self._relieve()
            return
        now = loop.time()
        first = congestion.queued < 0
        taken = congestion.queued + congestion.written - queued  # what the peer read since
        congestion.queued, congestion.written = queued, 0
        if first or taken > 0:
            congestion.quiet_since = now
        elif now - congestion.quiet_since >= QUIET and not congestion.told:
            congestion.told = True
            if self._debug:
                log.debug("%s: took nothing of its queue: not reading", self.name)
            if self.on_congested is not None:
                self.on_congested()
            if self._congestion is not congestion or self._closed:
                return  # what the owner did relieved or closed it
        if loop.time() >= congestion.deadline:
            self.abort(f"not reading for {self.stuck_after:g}s")
            return
        congestion.timer = loop.call_later(
            min(DRAIN_POLL, congestion.deadline - loop.time()), self._poll_drain
        )

    def _relieve(self) -> None:
        self._stop_watching()
        self._update_reading()

    def _stop_watching(self) -> None:
        if self._congestion is not None:
            self._congestion.timer.cancel()
            self._congestion = None

    def owe(self, size: int) -> None:
        """Count `size` bytes that are being prepared for the peer (an answer being fitted
        off the event loop; negative when it was sent or dropped). A peer owed more than
        `backpressure` is not read from until it is owed less, as if those bytes were queued
        unread: its next requests wait for the answer it is already owed."""
        self._owed += size
        self._update_reading()

    def _update_reading(self) -> None:
        """Read from the peer unless it is behind on its answers (queued or owed)."""
        if self.backpressure is None or self._reader is None or self._closed:
            return
        pause = self._congestion is not None or self._owed > self.backpressure
        if pause != self._reading_paused:
            self._reading_paused = pause
            if pause:
                self._reader.pause_reading()  # type: ignore[attr-defined]
            else:
                self._reader.resume_reading()  # type: ignore[attr-defined]
