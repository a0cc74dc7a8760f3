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


def test_tree_memory_counts_a_grandchild_and_scans_the_table_once_for_many_trees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A launcher's tree is the launcher, its child and its grandchild; trees asked for in a
    row (a status answer's instances) share one scan of the process table."""
    import subprocess

    import psutil

    # python → python → python, the last one saying it runs; each waits on its stdin
    inner = "import sys; print('up', flush=True); sys.stdin.read()"
    run = "import subprocess, sys; subprocess.run([sys.executable, '-c', {!r}], stdin=sys.stdin)"
    top = subprocess.Popen(
        [sys.executable, "-c", run.format(run.format(inner))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert top.stdout is not None and top.stdout.readline() == b"up\n"
        procs = [psutil.Process(top.pid), *psutil.Process(top.pid).children(recursive=True)]
        assert len(procs) == 3
        scans = []
        real = psutil._ppid_map  # type: ignore[attr-defined]
        monkeypatch.setattr(psutil, "_ppid_map", lambda: scans.append(1) or real())
        monkeypatch.setattr(memory, "_scan", None)
        total = memory.tree_memory(top.pid)
        assert total is not None
        assert total >= sum(p.memory_info().rss for p in procs) * 0.9  # RSS moves a little
        assert memory.tree_memory(procs[1].pid) is not None
        assert (memory.tree_memory(top.pid) or 0) > (memory.tree_memory(procs[2].pid) or 0)
        assert len(scans) == 1
    finally:
        assert top.stdin is not None
        top.stdin.close()
        top.wait(10)
