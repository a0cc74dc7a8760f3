"""Document sync through the session: a large didOpen reaches the server as the client's own
bytes (encoding 10 MB of text again cost tens of milliseconds per open)."""

from __future__ import annotations

from pathlib import Path

from lspmux.session.families.sync import RELAY_OPEN

from .memory import MemorySession, ScriptedServer, until

CAPS = {"hoverProvider": True, "textDocumentSync": {"openClose": True, "change": 2}}


async def test_a_large_open_is_relayed_and_versions_follow_the_clients(tmp_path: Path) -> None:
    """Before: every didOpen was encoded again, and the server's versions started at 1."""
    server = ScriptedServer("a", CAPS, {})
    m = MemorySession(tmp_path, {"a": server})
    await m.initialize()
    m.open("small.py", "y = 2\n", version=7)  # starts the server
    await until(lambda: server.notifications("textDocument/didOpen"), "the server running")
    text = "x = 1\n" * (RELAY_OPEN // 6 + 1)
    uri = m.open("big.py", text, version=7)
    opened = await until(
        lambda: (
            len(server.notifications("textDocument/didOpen")) == 2
            and server.notifications("textDocument/didOpen")
        ),
        "both opens at the server",
    )
    big = opened[1]["params"]["textDocument"]
    assert (big["uri"], big["version"], big["text"]) == (uri, 7, text)
    m.open("small2.py", "z = 3\n", version=7)
    small2 = await until(
        lambda: (
            len(server.notifications("textDocument/didOpen")) == 3
            and server.notifications("textDocument/didOpen")[2]["params"]["textDocument"]
        ),
        "the small open at the server",
    )
    assert small2["version"] == 1  # a small one is encoded by lspmux, as before
    m.change(uri, 8, (0, 4), (0, 5), "2")
    change = await until(
        lambda: server.notifications("textDocument/didChange"), "the change at the server"
    )
    assert change[0]["params"]["textDocument"]["version"] == 8
    assert m.session.body_of(opened[1]["params"]) is None  # only while that message is handled
    await m.close()
