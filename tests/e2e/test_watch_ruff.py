"""Real `ruff server` hears about its configuration changing on disk through lspmux's Watcher.

ruff registers watchers for `**/pyproject.toml`, `**/ruff.toml` and `**/.ruff.toml` when the
client takes dynamic registration; the test client here feeds those registrations to
`lspmux.workspace.watch.Watcher` and relays what it reports as `workspace/didChangeWatchedFiles`.
Editing ruff.toml on disk then changes ruff's diagnostics for an open file without reopening or
editing it. The control test shows that without the watcher ruff keeps the old rules.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from lspmux.workspace.files import FileWatching
from tests.e2e.rawlsp import RawClient

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed"),
]

CODE = "import os\nx = 1;\n"  # F401 (unused import) and E703 (useless semicolon)
SELECT_F = '[lint]\nselect = ["F"]\n'
SELECT_E7 = '[lint]\nselect = ["E7"]\n'


def codes(params: dict[str, Any]) -> set[str]:
    return {str(d.get("code")) for d in params["diagnostics"]}


class Ruff:
    def __init__(self, client: RawClient, ws: Path) -> None:
        self.client = client
        self.ws = ws
        self.uri = (ws / "a.py").as_uri()

    def latest(self) -> set[str] | None:
        published = self.client.published(self.uri)
        return codes(published[-1]) if published else None

    async def until(self, expected: set[str], what: str) -> None:
        await self.client.wait_for(lambda: self.latest() == expected, what, timeout=30)


async def start_ruff(ws: Path, files: FileWatching[str] | None) -> Ruff:
    client = RawClient()

    def register(params: Any) -> None:
        for reg in params["registrations"]:
            if files is not None and reg["method"] == "workspace/didChangeWatchedFiles":
                assert files.register("ruff", reg) is None  # watched here, not relayed

    client.on_request["client/registerCapability"] = register
    await client.start("ruff", "server", cwd=str(ws))
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": ws.as_uri(),
            "workspaceFolders": [{"uri": ws.as_uri(), "name": "ws"}],
            "capabilities": {
                "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
                "textDocument": {"publishDiagnostics": {}},
            },
        },
    )
    client.notify("initialized", {})
    ruff = Ruff(client, ws)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": ruff.uri, "languageId": "python", "version": 1, "text": CODE}},
    )
    return ruff


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text(CODE)
    (ws / "ruff.toml").write_text(SELECT_F)
    return ws


@pytest_asyncio.fixture
async def started() -> AsyncIterator[list[Any]]:
    things: list[Any] = []
    yield things
    for thing in things:
        await thing.stop()


async def test_editing_ruff_toml_on_disk_changes_ruffs_diagnostics(
    ws: Path, started: list[Any]
) -> None:
    relayed: list[dict[str, Any]] = []
    ruff: Ruff | None = None

    def send(backend: str, params: dict[str, Any]) -> None:
        assert ruff is not None and backend == "ruff"
        relayed.append(params)
        ruff.client.notify("workspace/didChangeWatchedFiles", params)

    files: FileWatching[str] = FileWatching({}, send, [ws.as_uri()], debounce_ms=100)
    await files.start()
    started.append(files)
    ruff = await start_ruff(ws, files)
    started.insert(0, ruff.client)
    await ruff.until({"F401"}, "ruff's diagnostics with select = F")
    assert files.watcher is not None
    patterns = sorted(w.pattern for w in files.watcher.registrations.watchers("ruff"))
    assert patterns == ["**/.ruff.toml", "**/pyproject.toml", "**/ruff.toml"]
    assert files.watcher.folders == [str(ws)]
    # The watches are set up in the watcher's thread, started by ruff's registration: ruff's
    # diagnostics may come first (they did, 15 ms after the thread started, before its first
    # inotify watch), and a write before the watches is never seen.
    assert await asyncio.wait_for(files.watcher.ready(), 10), "the watcher gave up (logged)"

    (ws / "ruff.toml").write_text(SELECT_E7)
    await ruff.until({"E703"}, "ruff's diagnostics after selecting E7 on disk")
    assert {"uri": (ws / "ruff.toml").as_uri(), "type": 2} in relayed[-1]["changes"]

    # A new pyproject.toml next to it (ruff.toml wins over it, so ruff keeps E7), then the
    # ruff.toml deleted: ruff falls back to pyproject.toml's rules.
    (ws / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["F", "E7"]\n')
    await ruff.client.wait_for(
        lambda: any(c["uri"].endswith("pyproject.toml") for p in relayed for c in p["changes"]),
        "the creation of pyproject.toml relayed",
    )
    (ws / "ruff.toml").unlink()
    await ruff.until({"F401", "E703"}, "ruff's diagnostics after ruff.toml was deleted")
    assert {"uri": (ws / "ruff.toml").as_uri(), "type": 3} in [
        c for p in relayed for c in p["changes"]
    ]


async def test_without_the_watcher_ruff_keeps_the_old_rules(ws: Path, started: list[Any]) -> None:
    ruff = await start_ruff(ws, None)
    started.append(ruff.client)
    await ruff.until({"F401"}, "ruff's diagnostics with select = F")
    (ws / "ruff.toml").write_text(SELECT_E7)
    # Re-lint by an edit (same text, new version): ruff still applies select = F.
    before = len(ruff.client.published(ruff.uri))
    ruff.client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": ruff.uri, "version": 2}, "contentChanges": [{"text": CODE}]},
    )
    await ruff.client.wait_for(
        lambda: len(ruff.client.published(ruff.uri)) > before, "diagnostics after the edit"
    )
    assert ruff.latest() == {"F401"}
