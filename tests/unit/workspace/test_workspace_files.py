"""FileWatching: the one object the session wires, in both modes — relaying to a client that
watches (no watcher thread), and watching here with real files."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from lspmux.workspace.files import FileWatching
from tests.polling import eventually

WATCHES = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
RUFF_REG = {
    "id": "ruff-watcher",
    "method": "workspace/didChangeWatchedFiles",
    "registerOptions": {"watchers": [{"globPattern": "**/ruff.toml"}]},
}


def threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "lspmux-watch"]


async def test_relaying_to_a_client_that_watches(tmp_path: Path) -> None:
    sent: list[Any] = []
    files: FileWatching[str] = FileWatching(
        WATCHES, lambda b, p: sent.append((b, p)), [str(tmp_path)]
    )
    await files.start()
    try:
        assert files.relaying
        out = files.register("ruff", RUFF_REG)
        assert out is not None and out["id"] != "ruff-watcher"
        assert out["registerOptions"] == RUFF_REG["registerOptions"]
        assert threads() == []  # the client watches: lspmux does not
        (tmp_path / "ruff.toml").write_text("x")  # no thread here to see it: nothing is sent
        await asyncio.sleep(0)
        assert sent == [] and threads() == []
        toml = (tmp_path / "ruff.toml").as_uri()
        params = {
            "changes": [{"uri": toml, "type": 2}, {"uri": (tmp_path / "a.c").as_uri(), "type": 2}]
        }
        assert files.from_client(params) == {"ruff": {"changes": [{"uri": toml, "type": 2}]}}
        gone = files.unregister(
            "ruff", {"id": "ruff-watcher", "method": "workspace/didChangeWatchedFiles"}
        )
        assert gone == {"id": out["id"], "method": "workspace/didChangeWatchedFiles"}
        assert files.from_client(params) == {}
        again = files.register("ruff", RUFF_REG)
        assert again is not None
        assert files.forget("ruff") == [
            {"id": again["id"], "method": "workspace/didChangeWatchedFiles"}
        ]
    finally:
        await files.stop()


async def test_watching_here_for_a_client_that_does_not(tmp_path: Path) -> None:
    got: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    files: FileWatching[str] = FileWatching(
        {}, lambda b, p: got.put_nowait((b, p)), [tmp_path.as_uri()], debounce_ms=50
    )
    await files.start()
    try:
        assert not files.relaying
        assert files.register("ruff", RUFF_REG) is None
        assert len(threads()) == 1
        toml = tmp_path / "ruff.toml"
        created = {"changes": [{"uri": toml.as_uri(), "type": 1}]}
        for _ in range(50):  # created again until the new thread watches and reports it
            toml.write_text("x")
            try:
                backend, params = await asyncio.wait_for(got.get(), 0.3)
            except TimeoutError:
                toml.unlink()
                continue
            if params == created:
                break
        assert backend == "ruff"
        assert params == created
        # Events the client reports itself still reach the backends that want them.
        saved = {"changes": [{"uri": (tmp_path / "ruff.toml").as_uri(), "type": 2}]}
        assert files.from_client(saved) == {"ruff": saved}
        assert files.unregister("ruff", {"id": "ruff-watcher", "method": "x"}) is None
        # told to stop at once; it ends within the watcher's poll step
        await eventually(lambda: not threads(), "the thread's end", timeout=2, step=0.02)
        assert files.forget("ruff") == []
    finally:
        await files.stop()
    assert threads() == []
