"""A barrier request: what a server that handles its messages in order has sent in answer to
everything sent to it before (`initialized`: ruff's registrations, basedpyright's first
questions for its settings) comes before its answer to this request (`lifecycle.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from lspmux.wire.connection import Connection
from lspmux.wire.messages import Message

#: A method no server has, which the specification says a server answers with MethodNotFound
#: (`$/` requests may not go unanswered): its error answer is the barrier's.
BARRIER = "$/lspmux/barrier"
#: How long to wait for that answer from a server that ignores it.
SETTLE_TIMEOUT = 0.5


async def barrier(conn: Connection, timeout: float = SETTLE_TIMEOUT) -> None:
    """Send `BARRIER` on `conn`; return at its answer, whatever it is (or after `timeout`)."""
    answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done(_reply: Message) -> None:
        if not answered.done():
            answered.set_result(None)

    conn.request(BARRIER, None, done, timeout=timeout)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(answered), timeout)


#: At a server's first start: how long after its last question for settings it may ask for
#: more (basedpyright asks for one section, awaits the answer, then asks for the next).
PULL_QUIET = 0.05


async def quiet_after(asked: asyncio.Event, done: Callable[[], bool]) -> None:
    """Return once `done()`, or once `asked` was not set again within `PULL_QUIET`."""
    while not done():
        asked.clear()
        try:
            await asyncio.wait_for(asked.wait(), PULL_QUIET)
        except TimeoutError:
            return
