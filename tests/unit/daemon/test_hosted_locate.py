"""`lspmux locate` against a warm daemon: one `lspmux/locate` request, resolved in the daemon's
hosted session for the root (lspmux/agent/hosted.py) — the same answers and errors as the
private path, and the disk's text even when the session has held the file before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lspmux.daemon.server import Daemon
from tests.unit.daemon.test_verb_start import run_verb


async def ask(
    daemon: Daemon, params: dict[str, Any], method: str = "lspmux/locate"
) -> dict[str, Any]:
    """One request as a connection's first message; the daemon's reply."""
    reader, writer = await asyncio.open_unix_connection(daemon.address.path)
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode())
    data = await asyncio.wait_for(reader.read(), 30)  # until the daemon closes
    writer.close()
    reply: dict[str, Any] = json.loads(data.partition(b"\r\n\r\n")[2])
    assert reply["id"] == 7
    return reply


async def test_the_hosted_session_resolves_the_text_on_disk(
    hosting: Daemon, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("# notes\nhello\n")
    root = str(tmp_path)
    first = await ask(hosting, {"root": root, "locate": "notes.txt@hel<|>lo"})
    assert first["result"]["label"] == "notes.txt:2:4", first
    assert first["result"]["position"] == {"line": 1, "character": 3}
    # the session holds the file (a verb opened it too), and a change on disk is what is seen
    hover = {"root": root, "name": "hover", "arguments": {"at": "notes.txt:1:1"}}
    assert "error" in (await ask(hosting, hover, "lspmux/tool"))["result"]  # no server: opened
    notes.write_text("# notes\n\nsay hello\n")
    again = await ask(hosting, {"root": root, "locate": "notes.txt@hel<|>lo", "range": True})
    assert again["result"]["label"] == "notes.txt:3:5-3:10", again
    assert "range" in again["result"] and "position" not in again["result"]


async def test_errors_are_the_sessions_own_or_say_what_is_missing(
    hosting: Daemon, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    miss = await ask(hosting, {"root": str(tmp_path), "locate": "notes.txt@nowhere"})
    assert "nowhere" in miss["error"]["message"], miss
    assert "tool failed" not in miss["error"]["message"]  # locate/resolve's error, as it gave it
    assert miss["error"]["code"] != -32603
    bad = await ask(hosting, {"root": str(tmp_path)})
    assert bad["error"]["code"] == -32602 and "`locate`" in bad["error"]["message"], bad
    gone = await ask(hosting, {"root": str(tmp_path / "gone"), "locate": "x@y"})
    assert "is not a folder" in gone["error"]["message"], gone


@pytest.mark.parametrize(
    "words",
    [
        ["locate", "notes.txt@hel<|>lo"],
        ["locate", "notes.txt@hel<|>lo", "--range", "--json"],
        ["locate", "notes.txt@nowhere"],
    ],
)
async def test_the_daemon_prints_what_the_private_path_prints(
    hosting: Daemon, tmp_path: Path, words: list[str]
) -> None:
    """The same words, once with the daemon (its hosted session) and once with none (a
    private `lspmux proxy`): the same exit code, output and error."""
    (tmp_path / "notes.txt").write_text("# notes\nhello\n")
    runtime = Path(hosting.address.path).parent.parent
    code, output, modules = await run_verb("lspmux.cli:main", words, runtime, tmp_path)
    assert "asyncio" not in modules.split(), output  # the daemon answered: the fast path
    alone = tmp_path / "no-daemon"
    private_code, private_output, _ = await run_verb("lspmux.cli:main", words, alone, tmp_path)
    assert (code, output) == (private_code, private_output)
