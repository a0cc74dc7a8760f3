"""The client link of a session, and one client request in flight, answered exactly once.

`ClientLink` owns what a session says to its client: the connection (once it is made), the
in-flight table of the client's requests, and the sends. An exchange answers through the link
alone: the answer leg of a request never goes back up through the session.

An `Exchange` is made for every request the client sends, before anything is awaited, and is
kept in the session's `inflight` table until it is answered. Whatever happens next — a backend's
answer relayed as raw bytes, a merged result, an error, a cancellation by the client, an
exception in lspmux — goes through `reply`, `reply_error` or `reply_raw`, and only the first of
them reaches the client.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from lspmux.errors import JsonRpcError, ServerCancelled
from lspmux.routing import adapt, fit_raw
from lspmux.session import fitting
from lspmux.wire.messages import Message, error

if TYPE_CHECKING:
    from lspmux.backends.backend import Backend
    from lspmux.wire.connection import Connection


log = logging.getLogger("lspmux.session")

#: The error a request gets when its client stopped taking its answers (see
#: `ClientLink.stop_work_at_servers`): the servers do no more work for it.
NOT_READING = (
    "lspmux: cancelled because this client is not reading its answers (its queue is full); "
    "ask again once it reads"
)


class ClientLink:
    """One session's connection to its client: its in-flight requests and what is sent."""

    __slots__ = ("_idle", "_released", "conn", "inflight")

    def __init__(self) -> None:
        self.conn: Connection | None = None
        #: The client's requests not yet answered, by the client's id.
        self.inflight: dict[Any, Exchange[Any]] = {}
        self._idle: asyncio.Event | None = None  # set when the last request is answered
        self._released = False

    async def all_answered(self) -> None:
        """Return once no request of the client is in flight (or `release` was called: the
        session closed, its requests will not be answered)."""
        while self.inflight and not self._released:
            self._idle = idle = asyncio.Event()
            await idle.wait()

    def release(self) -> None:
        """The session closed: whoever waits in `all_answered` stops waiting."""
        self._released = True
        if self._idle is not None:
            self._idle.set()

    def send(self, msg: Message) -> None:
        if self.conn is not None:
            self.conn.send(msg)

    def send_raw_response(self, body: bytes, offset: int, new_id: Any) -> None:
        """Relay a backend's sniffed response under the client's id, without copying it."""
        if self.conn is not None:
            self.conn.send_raw_response(body, offset, new_id)

    def owe(self, size: int) -> None:
        """Count `size` bytes being prepared for the client (negative: done); see
        `Connection.owe`."""
        if self.conn is not None:
            self.conn.owe(size)

    def not_reading(self) -> bool:
        """The client stopped taking its answers (see `Backpressure.not_reading`)."""
        return self.conn is not None and self.conn.not_reading

    def stop_work_at_servers(self) -> None:
        """The client stopped taking its answers (behind on its queue and taking none of it:
        `Backpressure.not_reading`): the shared servers stop working for it. Each request it
        has at a server is cancelled there and answered with ServerCancelled (a client that
        reads again asks again); a server busy with a stuck editor's backlog would make every
        other client wait."""
        stopped = 0
        for ex in list(self.inflight.values()):
            if ex.targets and not ex.answered:
                ex.cancel()
                ex.reply_error(ServerCancelled(NOT_READING))
                stopped += 1
        if stopped:
            name = self.conn.name if self.conn is not None else "client"
            log.warning("%s: not reading its answers: cancelled its %d requests at the servers",
                        name, stopped)  # fmt: skip

    def body_of(self, params: Any) -> bytes | bytearray | None:
        """The bytes of the client message being handled, if `params` are that message's
        (not a message held back and handled later): to relay a large one as it came."""
        handling = self.conn.handling if self.conn is not None else None
        if handling is None or handling[0].get("params") is not params:
            return None
        return handling[1]


class Replier(Protocol):
    """What an exchange is made for: a session, which answers through its `link`."""

    @property
    def link(self) -> ClientLink: ...


S = TypeVar("S", bound=Replier)


class Exchange(Generic[S]):
    """One client request: its targets (for cancellation) and its single answer. Generic in
    the session it answers for (`Exchange[SessionState]` for the session's helpers)."""

    __slots__ = (
        "answered",
        "client_id",
        "fit_for",
        "fit_kind",
        "link",
        "method",
        "params",
        "per_backend",
        "session",
        "targets",
    )

    def __init__(self, session: S, msg: Message) -> None:
        self.session = session
        self.link = link = session.link
        self.client_id = msg["id"]
        self.method: str = msg["method"]
        self.params: Any = msg.get("params")
        self.targets: list[tuple[Backend, int | str]] = []
        self.answered = False
        #: Params that differ per backend (by backend name): a code action request carries
        #: each backend's own diagnostics.
        self.per_backend: dict[str, Any] | None = None
        #: The client's capabilities when its answers must be fitted to them (a shared server
        #: was told more than it declared; see routing/adapt.py), and how: the route's
        #: fitting kind (`Route.fit`), set with them.
        self.fit_for: dict[str, Any] | None = None
        self.fit_kind = ""
        link.inflight[self.client_id] = self

    def params_for(self, backend: Backend) -> Any:
        if self.per_backend is None:
            return self.params
        return self.per_backend.get(backend.name, self.params)

    def sent(self, backend: Backend, backend_id: int | str | None) -> None:
        if backend_id is not None:
            self.targets.append((backend, backend_id))

    def reply(self, value: Any) -> None:
        if self._finish():
            if self.fit_for is not None:
                value = adapt.adapt(self.fit_kind, value, self.fit_for)
            self.link.send({"jsonrpc": "2.0", "id": self.client_id, "result": value})

    def reply_error(self, err: JsonRpcError | dict[str, Any]) -> None:
        if self._finish():
            self.link.send(error(self.client_id, err))

    def reply_raw(self, body: bytes, offset: int) -> None:
        """Answer with a backend's sniffed response (its "result"/"error" key at `offset`)."""
        # A result must be read to be fitted — unless the client is not reading what it was
        # sent: then fitting would only spend the CPU the other clients need.
        # A scan of the bytes says whether it holds anything the client cannot take at all.
        client = self.fit_for
        if (
            client is not None
            and body.startswith(b'"result"', offset)
            and not self.link.not_reading()
        ):
            body = bytes(body)  # fitting takes bytes (a large body is read into a bytearray)
            if not fit_raw.needs_fitting(self.fit_kind, body, client):
                self.relay(body, offset)
                return
            if len(body) > fitting.FIT_ON_LOOP:  # the other clients must not wait for it
                fitting.fit_off_loop(self, body, client)
            else:
                fitting.fit_on_loop(self, body, client)
            return
        self.relay(body, offset)

    def relay(self, body: bytes, offset: int) -> None:
        """Answer with a sniffed response as it is, under this client's id (not copied)."""
        if self._finish():
            self.link.send_raw_response(body, offset, self.client_id)

    def owe(self, size: int) -> None:
        """Count `size` bytes being prepared for this client (see `Connection.owe`)."""
        self.link.owe(size)

    def _finish(self) -> bool:
        if self.answered:
            return False
        self.answered = True
        link = self.link
        inflight = link.inflight
        if inflight.get(self.client_id) is self:
            del inflight[self.client_id]
            if not inflight and link._idle is not None:
                link._idle.set()
        return True

    def cancel(self) -> None:
        """Tell every backend working on it (each still answers; the client's answer is
        whatever comes first)."""
        for backend, backend_id in self.targets:
            backend.cancel(backend_id)
