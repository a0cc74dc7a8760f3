"""A server's configured settings at start: pushed (`workspace/didChangeConfiguration`) unless
the server asks for every section of them (`workspace/configuration`) — as it did at an earlier
start here, or, at its first, right after `initialized` — a server that asks has them, and a
push makes it read them again (basedpyright then sets its workspace up twice, and its first
hover comes ~300 ms later)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lspmux.backends import capabilities as caps
from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.polling import eventually
from tests.unit.backends.helpers import SERVER_LOOP, NullHost

#: A server that asks for the sections in argv[1] (comma-separated; none: asks nothing) on
#: `initialized`, one at a time (the next once the last is answered, as basedpyright does), and
#: writes every method it receives, a line each, to argv[2]; with argv[3] "push", it asks on a
#: push of its settings instead, as rust-analyzer (2022-05) does.
ASKING = (
    """
import sys
sections = [s for s in sys.argv[1].split(",") if s]
asks_on = "workspace/didChangeConfiguration" if sys.argv[3:] == ["push"] else "initialized"
def ask():
    if sections:
        send({"jsonrpc": "2.0", "id": "ask", "method": "workspace/configuration",
              "params": {"items": [{"section": sections.pop(0)}]}})
log = open(sys.argv[2], "a")
"""
    + SERVER_LOOP
    + """
    log.write(json.dumps([msg.get("method"), msg.get("result")]) + "\\n")
    log.flush()
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}})
    elif msg.get("method") == asks_on or msg.get("id") == "ask":
        ask()
    elif msg.get("method") == "shutdown":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
    elif msg.get("method") == "exit":
        break
"""
)

SETTINGS = {"python": {"pythonPath": "/usr/bin/python3"}, "basedpyright": {"x": 1}}


async def _start_and_stop(tmp_path: Path, asks: str, when: str = "") -> list[list[object]]:
    """One start of the server asking for `asks` (`when` "push": once pushed its settings):
    every method it received, and the answer to its question (once it came)."""
    log = tmp_path / f"log-{asks}.jsonl"
    log.unlink(missing_ok=True)
    argv = [sys.executable, "-c", ASKING, asks, str(log), when]
    config = ServerConfig(name="asking", command=tuple(argv), settings=SETTINGS)
    backend = Backend(config, tmp_path, argv, host=NullHost())
    assert await backend.ensure_running()
    if asks:  # the answers come after what the start sent
        count = len(asks.split(","))
        await eventually(lambda: log.read_text().count("[null, [") == count, "the answers")
    await backend.stop()
    return [json.loads(line) for line in log.read_text().splitlines()]


def _pushed(received: list[list[object]]) -> bool:
    return ["workspace/didChangeConfiguration", None] in received


async def test_a_server_that_asks_for_its_settings_is_not_pushed_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = await _start_and_stop(tmp_path, "python,basedpyright")
    assert not _pushed(first)  # its first start: it asked right after `initialized`
    assert [None, [SETTINGS["python"]]] in first and [None, [SETTINGS["basedpyright"]]] in first
    assert caps.load_pulled("asking") == {"python", "basedpyright"}
    second = await _start_and_stop(tmp_path, "python,basedpyright")  # known from the cache
    assert not _pushed(second)


async def test_a_server_that_asks_for_part_of_its_settings_is_pushed_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert _pushed(await _start_and_stop(tmp_path, "python"))  # "basedpyright" not asked for
    assert _pushed(await _start_and_stop(tmp_path, "python"))  # nor at a later start


async def test_a_server_that_asks_nothing_is_pushed_its_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert _pushed(await _start_and_stop(tmp_path, ""))
    assert caps.load_pulled("asking") == frozenset()  # seen, asked nothing
    assert _pushed(await _start_and_stop(tmp_path, ""))


async def test_a_server_that_asks_only_when_pushed_is_pushed_at_every_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rust-analyzer (2022-05) asks for its settings only in answer to a push: what it asked
    then is no sign that it would ask unprompted, and the next start pushes them again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = await _start_and_stop(tmp_path, "python,basedpyright", "push")
    assert _pushed(first) and [None, [SETTINGS["basedpyright"]]] in first
    assert caps.load_pulled("asking") == frozenset()  # nothing asked unprompted
    assert _pushed(await _start_and_stop(tmp_path, "python,basedpyright", "push"))


def test_asks_for() -> None:
    assert caps.asks_for(frozenset({""}), SETTINGS)  # the whole tree
    assert caps.asks_for(frozenset({"python", "basedpyright", "other"}), SETTINGS)
    assert not caps.asks_for(frozenset({"python"}), SETTINGS)
    assert not caps.asks_for(frozenset(), SETTINGS)
