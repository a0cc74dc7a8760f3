"""What both ways of serving clients share — the stdio proxy and the daemon, peers that do not
import each other: how much may be queued for a client that does not read, and settling the
heap once start-up is over."""

from __future__ import annotations

import gc

#: Bytes queued for a client that does not read before it is cut off (proxy and daemon).
CLIENT_WRITE_LIMIT = 64 * 1024 * 1024


def settle_heap() -> None:
    """After start-up: move the long-lived objects (the routing tables, the modules, the
    config) out of the cyclic collector's reach, so its full passes stop walking them on the
    message path."""
    gc.collect()
    gc.freeze()
