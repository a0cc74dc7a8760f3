"""lspmux's own messages to the user go through `SessionState.tell`, served by the family of
`window/*` (`families/relays.tell_client`): here, the count of server chatter dropped while the
client was behind, said once it reads again."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lspmux.backends.pool import Pool
from lspmux.config.model import Config
from lspmux.routing.table import SERVER_NOTIFICATIONS
from lspmux.session.relay import BEHIND
from lspmux.session.session import Session


def test_chatter_dropped_while_the_client_is_behind_is_told_once_it_reads_again() -> None:
    session = Session(Pool(), lambda _root: Config())
    sent: list[dict[str, Any]] = []
    session.conn_send = sent.append  # type: ignore[method-assign]  # what reaches the client
    conn = SimpleNamespace(queued=BEHIND + 1, closed=False)
    session.link.conn = conn  # type: ignore[assignment]  # only its queue length is read
    backend: Any = SimpleNamespace(name="srv")
    route = SERVER_NOTIFICATIONS["window/logMessage"]
    msg = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "x"}}

    session.relay.notification(backend, msg, route)
    session.relay.notification(backend, msg, route)
    assert sent == []  # behind: chatter dropped, and counted

    conn.queued = 0
    session.relay.notification(backend, msg, route)
    assert [(m["method"], m["params"]["type"]) for m in sent] == [
        ("window/logMessage", 2),  # lspmux's own: the count, first
        ("window/logMessage", 3),  # then the server's message, tagged with its name
    ]
    assert "2 log and progress messages" in sent[0]["params"]["message"]
    assert sent[1]["params"]["message"] == "[srv] x"
