"""memory.py: a trim is asked for after large documents only, once per burst, on the loop."""

from __future__ import annotations

import asyncio
import sys

import pytest

from lspmux import memory
from lspmux.session.documents import Documents
from tests.polling import VirtualClockLoop


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(memory, "_trim", lambda pad: calls.append(pad) or 1)
    return calls


def test_a_burst_of_large_documents_costs_one_trim(trims: list[int]) -> None:
    """On a virtual clock: each sleep lets `memory.DELAY` pass at once."""
    wait = memory.DELAY * 2

    async def burst() -> None:
        docs = Documents()
        big = "x = 1\n" * (memory.TRIM_ABOVE // 6 + 1)
        docs.open("file:///a.py", "python", 1, "small\n")  # small: nothing
        await asyncio.sleep(wait)
        assert trims == []
        for i in range(3):
            docs.open(f"file:///big{i}.py", "python", 1, big)
        await asyncio.sleep(wait)
        assert trims == [0]
        doc = docs.get("file:///big0.py")
        assert doc is not None
        edit = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}}
        doc.update(2, [{**edit, "text": "y"}], "utf-16")  # the first edit cuts it: its text freed
        doc.update(3, [{**edit, "text": "z"}], "utf-16")  # later edits free nothing large
        await asyncio.sleep(wait)
        assert trims == [0, 0]

    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        runner.run(burst())


def test_without_a_loop_or_glibc_nothing_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    memory.release_soon(memory.TRIM_ABOVE)  # no running loop: no error, nothing pending
    assert memory._pending is None
    monkeypatch.setattr(memory, "_trim", None)
    assert memory.release_now() is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_trim_really_runs_here() -> None:
    """On this machine (glibc) the real malloc_trim is found and callable."""
    assert memory._trimmer() is not None
    assert memory.release_now() in (True, False)


def test_tree_memory_counts_this_process_and_nothing_for_none_or_gone() -> None:
    import os
    import subprocess

    own = memory.own_memory()
    assert own is not None and own > 1 << 20
    assert (memory.tree_memory(os.getpid()) or 0) >= own
    assert memory.tree_memory(None) is None
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert memory.tree_memory(proc.pid) is None
