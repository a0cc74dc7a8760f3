"""A session picks a backend's root with the client's workspace folder: files in folders with no
root marker share one backend rooted at the folder (before: one backend per folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .memory import MemorySession, ScriptedServer

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
