"""The proxies' records (lspmux/proxy_registry.py): a listed proxy answers on its socket;
records of proxies that are gone are removed, and only files of the private folder ever are."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lspmux import proxy_registry


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "rt"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder / "lspmux" / "proxies"


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


async def test_a_listed_proxy_answers_and_leaves_no_files(runtime: Path) -> None:
    listed = await proxy_registry.listen(lambda: {"hello": "status"})
    assert listed.record == runtime / f"{os.getpid()}.json"
    assert oct(runtime.stat().st_mode & 0o777) == "0o700"
    [found] = await asyncio.to_thread(proxy_registry.running_proxies)
    assert found["pid"] == os.getpid() and found["status"] == {"hello": "status"}
    listed.close()
    assert list(runtime.iterdir()) == []
    assert await asyncio.to_thread(proxy_registry.running_proxies) == []


async def test_records_of_gone_proxies_are_removed_and_nothing_else(
    runtime: Path, tmp_path: Path
) -> None:
    listed = await proxy_registry.listen(dict)  # makes the private folder
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    gone = dead_pid()
    (runtime / f"{gone}.json").write_text(json.dumps({"pid": gone, "socket": str(precious)}))
    (runtime / f"{gone}.sock").write_text("")
    # A live pid (this one's parent) whose socket nobody listens on: killed, its pid reused.
    ppid = os.getppid()
    (runtime / f"{ppid}.json").write_text(json.dumps({"pid": ppid, "socket": str(precious)}))
    found = await asyncio.to_thread(proxy_registry.running_proxies)
    assert [p["pid"] for p in found] == [os.getpid()]
    assert sorted(p.name for p in runtime.iterdir()) == [
        f"{os.getpid()}.json",
        f"{os.getpid()}.sock",
    ]
    assert precious.read_text() == "keep me"
    listed.close()


def test_a_folder_others_can_open_is_not_read(runtime: Path) -> None:
    runtime.mkdir(parents=True, mode=0o700)
    pid = dead_pid()
    (runtime / f"{pid}.json").write_text(json.dumps({"pid": pid}))
    runtime.chmod(0o755)
    assert proxy_registry.running_proxies() == []
    assert (runtime / f"{pid}.json").exists()  # not ours to clean either
