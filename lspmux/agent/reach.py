"""Reaching the lspmux daemon from the agent tools: its socket (started when asked) and its
one-shot methods (`lspmux/status`, `lspmux/reload`, `lspmux/documents`) as a `DaemonQuery`.
Standard library only until a connection is made.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from lspmux.headless import HeadlessClient

#: Asks the daemon one of its one-shot methods (lspmux/status, lspmux/reload, lspmux/documents).
DaemonQuery = Callable[[str, dict[str, Any]], Awaitable[Any]]


def socket_query(address: Any) -> DaemonQuery:
    """A DaemonQuery over the daemon's socket (one connection per question)."""

    async def query(method: str, params: dict[str, Any]) -> Any:
        from lspmux.daemon.dial import request

        timeout = 120.0 if method == "lspmux/reload" else 10.0
        return await asyncio.to_thread(
            request, address, method, params, token=None, timeout=timeout
        )

    return query


async def daemon_client(autostart: bool) -> tuple[HeadlessClient | None, DaemonQuery | None]:
    """A client on the daemon's socket and its query function, or Nones when no daemon
    answers (and none may be started)."""
    from lspmux.daemon.address import AddressError, resolve_client
    from lspmux.daemon.dial import ShimError, connect

    try:
        address = resolve_client(None)
    except AddressError:
        return None, None
    if not address.is_unix:
        return None, None  # TCP needs a token: the agent tools use the local socket only
    try:
        sock = await asyncio.to_thread(connect, address, autostart=autostart, environ=os.environ)
    except (OSError, ShimError):
        return None, None
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=1 << 24)
    return HeadlessClient(reader=reader, writer=writer), socket_query(address)
