"""A session picks a backend's root with the client's workspace folder: files in folders with no
root marker share one backend rooted at the folder (before: one backend per folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .memory import MemorySession, ScriptedServer, until

CAPS = {"textDocumentSync": {"openClose": True, "change": 2}}


@pytest.mark.parametrize("marked", [False, True], ids=["no markers", "a marker in lib"])
async def test_backends_are_rooted_like_the_server_would(tmp_path: Path, marked: bool) -> None:
    for folder in ("lib", "src/deep"):
        (tmp_path / folder).mkdir(parents=True)
    if marked:
        (tmp_path / "lib" / ".git").mkdir()
    server = ScriptedServer("c", CAPS, {})
    m = MemorySession(tmp_path, {"c": server}, file_types=(".c",))
    await m.initialize()
    found = {
        backend.root
        for name in ("lib/x.c", "src/deep/y.c")
        for backend in m.session.backends_for(m.uri(name), "c")
    }
    assert found == ({tmp_path, tmp_path / "lib"} if marked else {tmp_path})
    await m.close()


async def test_a_workspace_folder_added_later_bounds_the_roots(tmp_path: Path) -> None:
    for folder in ("one", "two/sub"):
        (tmp_path / folder).mkdir(parents=True)
    m = MemorySession(tmp_path / "one", {"c": ScriptedServer("c", CAPS, {})}, file_types=(".c",))
    await m.initialize()
    change = {"added": [{"uri": (tmp_path / "two").as_uri(), "name": "two"}], "removed": []}
    m.client.notify("workspace/didChangeWorkspaceFolders", {"event": change})
    await until(lambda: len(m.session.roots) == 2, "the folder added")
    [backend] = m.session.backends_for((tmp_path / "two/sub/x.c").as_uri(), "c")
    assert backend.root == tmp_path / "two"
    change = {"added": [], "removed": [{"uri": (tmp_path / "two").as_uri(), "name": "two"}]}
    m.client.notify("workspace/didChangeWorkspaceFolders", {"event": change})
    await until(lambda: m.session.roots == [tmp_path / "one"], "the folder removed")
    await m.close()
