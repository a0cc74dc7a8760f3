"""A server's configured settings at start: pushed (`workspace/didChangeConfiguration`) unless
the server asked for every section of them (`workspace/configuration`) at its last start here —
a server that asks has them, and a push makes it read them again (basedpyright then sets its
workspace up twice, and its first hover comes ~300 ms later)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lspmux.backends import capabilities as caps
from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.polling import eventually
from tests.unit.backends.helpers import NullHost

#: A server that asks for the sections in argv[1] (comma-separated; none: asks nothing) on
#: `initialized`, and writes every method it receives, a line each, to argv[2].
ASKING = """
import json, sys
sections = [s for s in sys.argv[1].split(",") if s]
log = open(sys.argv[2], "a")
def send(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    sys.stdout.buffer.flush()
while True:
    length = None
    while (line := sys.stdin.buffer.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if length is None:
        break
    msg = json.loads(sys.stdin.buffer.read(length))
    log.write(json.dumps([msg.get("method"), msg.get("result")]) + "\\n")
    log.flush()
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}})
    elif msg.get("method") == "initialized" and sections:
        items = [{"section": s} for s in sections]
        send({"jsonrpc": "2.0", "id": "ask", "method": "workspace/configuration",
              "params": {"items": items}})
    elif msg.get("method") == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif msg.get("method") == "exit":
        break
"""

SETTINGS = {"python": {"pythonPath": "/usr/bin/python3"}, "basedpyright": {"x": 1}}


async def _start_and_stop(tmp_path: Path, asks: str) -> list[list[object]]:
    """One start of the server asking for `asks`: every method it received, and the answer
    to its question (once it came)."""
    log = tmp_path / f"log-{asks}.jsonl"
    log.unlink(missing_ok=True)
    argv = [sys.executable, "-c", ASKING, asks, str(log)]
    config = ServerConfig(name="asking", command=tuple(argv), settings=SETTINGS)
    backend = Backend(config, tmp_path, argv, host=NullHost())
    assert await backend.ensure_running()
    if asks:  # its answer comes after what the start sent
        await eventually(lambda: '[null, [{"pythonPath"' in log.read_text(), "the answer")
    await backend.stop()
    return [json.loads(line) for line in log.read_text().splitlines()]


def _pushed(received: list[list[object]]) -> bool:
    return ["workspace/didChangeConfiguration", None] in received


async def test_a_server_that_asks_for_its_settings_is_not_pushed_them_at_its_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = await _start_and_stop(tmp_path, "python,basedpyright")
    assert _pushed(first)  # nothing known of it yet
    assert caps.load_pulled("asking") == {"python", "basedpyright"}
    second = await _start_and_stop(tmp_path, "python,basedpyright")
    assert not _pushed(second)
    assert [None, [SETTINGS["python"], SETTINGS["basedpyright"]]] in second  # asked, told


async def test_a_server_that_asks_for_part_of_its_settings_is_pushed_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    await _start_and_stop(tmp_path, "python")
    assert _pushed(await _start_and_stop(tmp_path, "python"))  # "basedpyright" not asked for
    await _start_and_stop(tmp_path, "")
    assert _pushed(await _start_and_stop(tmp_path, ""))  # asks nothing


def test_asks_for() -> None:
    assert caps.asks_for(frozenset({""}), SETTINGS)  # the whole tree
    assert caps.asks_for(frozenset({"python", "basedpyright", "other"}), SETTINGS)
    assert not caps.asks_for(frozenset({"python"}), SETTINGS)
    assert not caps.asks_for(frozenset(), SETTINGS)
