"""What both ways of serving clients share — the stdio proxy and the daemon, peers that do not
import each other: how much may be queued for a client that does not read, and settling the
heap once start-up is over; and the name of the request that asks either what it serves."""

from __future__ import annotations

import gc

#: What an lspmux process serves, asked of a proxy (session/families/status.py answers, on
#: stdio and on its status socket: lspmux/proxy_registry.py) or of the daemon (its one-shot
#: request; `lspmux status` asks both).
STATUS = "lspmux/status"

#: Bytes queued for a client that does not read before it is cut off (proxy and daemon).
CLIENT_WRITE_LIMIT = 64 * 1024 * 1024


#: Container objects allocated between two young-generation passes of the cyclic collector
#: once serving (Python's default: 700). The message path makes no reference cycles, but
#: each request allocates a few containers (its exchange, pending entry…): at 700, a
#: pipelined burst ran a collector pass every ~70 requests, each walking the requests in
#: flight, and promoted them to be walked again by the older passes — 10 to 16% of the
#: proxy's CPU under pipelined hovers (docs/benchmarks.md, "Proxy overhead"). Once the native
#: lane made a request cost ~2.5 µs, 20,000 still cost 15%: 100,000 pipelined hovers, CPU per
#: request 2.8-3.0 µs at 20,000, 2.4 µs at 100,000 (alternated, same run). What waits longer
#: is only cyclic garbage, which the message path does not make.
YOUNG_THRESHOLD = 100_000


def settle_heap() -> None:
    """After start-up: move the long-lived objects (the routing tables, the modules, the
    config) out of the cyclic collector's reach, so its full passes stop walking them on the
    message path; and collect the young generation less often (`YOUNG_THRESHOLD`)."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
