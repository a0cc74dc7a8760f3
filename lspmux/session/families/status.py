"""`lspmux/status`: what this lspmux process serves the client that asks — its servers (pid,
memory of the whole process tree, uptime, state, the progress running now) and the client's
own state. An editor may ask it as an LSP request; `lspmux status` asks each running proxy
over its status socket (lspmux/proxy_registry.py), which answers with `answer` below. In the
daemon a client's session answers for its own instances; the daemon's one-shot
`lspmux/status` (daemon/server.py) covers every instance and client."""

from __future__ import annotations

import os
import time
from typing import Any

from lspmux import __version__
from lspmux.routing.route import Policy, Route, route
from lspmux.serving import STATUS
from lspmux.session.exchange import Exchange
from lspmux.session.state import SessionState

#: When this process started (as the monotonic clock counts): its uptime in the answer.
_STARTED = time.monotonic()


def answer(session: SessionState) -> dict[str, Any]:
    """The status of `session`'s process: pid, version, uptime, its own memory (servers
    apart), the session's instances (as `Pool.describe` gives them) and the session itself."""
    from lspmux.memory import own_memory  # psutil: loaded when someone asks, not at start

    now = time.monotonic()
    return {
        "pid": os.getpid(),
        "version": __version__,
        "uptime": now - _STARTED,
        "rss": own_memory(),  # this process alone; each server's tree is in its row
        "instances": session.pool.describe(only=set(session.backends)),
        "client": {
            "id": session.client_id,
            "roots": [str(r) for r in session.roots],
            "state": session.state,
            "open_documents": sum(1 for _ in session.documents),
            "idle": now - session.last_active,
        },
    }


def status(session: SessionState, ex: Exchange) -> dict[str, Any]:
    return answer(session)


REQUESTS: dict[str, Route] = {
    STATUS: route(Policy.LOCAL, "status", handler=status),
}
