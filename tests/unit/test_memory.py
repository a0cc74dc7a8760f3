"""memory.py: a trim is asked for after large documents only, once per burst, on the loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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


# -- glibc's thresholds (tune_heap) -----------------------------------------------------------

#: Run in a fresh interpreter: three 8 MiB blocks made and freed, then a trim. It prints what
#: `tune_heap` set, how much of the blocks glibc mmapped (mallinfo2), and the RSS the freed
#: blocks left in the process before and after `release_now()`.
PROBE = """
import ctypes, json, os, sys
from lspmux import memory

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
page = os.sysconf("SC_PAGE_SIZE")

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page

if sys.argv[1:] == ["tune"]:
    memory.tune_heap()
base, mapped = rss(), libc.mallinfo2().hblkhd
blocks = [bytearray(8 << 20) for _ in range(3)]
mmapped = libc.mallinfo2().hblkhd - mapped
del blocks
kept = rss() - base
memory.release_now()
print(json.dumps({"tuned": memory.tuned, "mmapped": mmapped, "kept": kept,
                  "after_trim": rss() - base}))
"""

MiB = 1 << 20
glibc_only = pytest.mark.skipif(not memory.is_glibc(), reason="mallopt and mallinfo2 are glibc's")


def probe(*args: str, **env: str) -> dict[str, Any]:
    """PROBE's figures, run with `env` added to this environment (without any MALLOC_*)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    environ.pop("GLIBC_TUNABLES", None)
    root = str(Path(__file__).resolve().parents[2])
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


@glibc_only
def test_by_default_each_large_block_is_a_fresh_mmap() -> None:
    """What `tune_heap` is for: untouched, glibc maps every 8 MiB block afresh (and unmaps it
    when freed, so the next one is faulted in again)."""
    got = probe()
    assert got["tuned"] is None
    assert got["mmapped"] >= 24 * MiB


@glibc_only
def test_tuned_large_blocks_come_from_the_heap_and_a_trim_still_returns_them() -> None:
    got = probe("tune")
    assert got["tuned"] == {
        "mmap_threshold": memory.MMAP_THRESHOLD,
        "trim_threshold": memory.TRIM_THRESHOLD,
    }
    assert got["mmapped"] < 8 * MiB  # none of the three blocks
    assert got["kept"] >= 20 * MiB  # freed, under the trim threshold: kept for the next one
    assert got["after_trim"] < got["kept"] - 20 * MiB  # release_now() gives it back all the same


@glibc_only
def test_a_threshold_the_user_set_wins() -> None:
    mmap_set = probe("tune", MALLOC_MMAP_THRESHOLD_=str(MiB))
    assert mmap_set["tuned"] == {"trim_threshold": memory.TRIM_THRESHOLD}
    assert mmap_set["mmapped"] >= 24 * MiB  # the user's 1 MiB threshold stands
    trim_set = probe("tune", MALLOC_TRIM_THRESHOLD_=str(128 * 1024))
    assert trim_set["tuned"] == {"mmap_threshold": memory.MMAP_THRESHOLD}
    assert trim_set["mmapped"] < 8 * MiB
    assert trim_set["kept"] < 8 * MiB  # the user's 128 KiB trim threshold gave it back at once
    tunable = probe("tune", GLIBC_TUNABLES=f"glibc.malloc.mmap_threshold={MiB}")
    assert tunable["tuned"] == {"trim_threshold": memory.TRIM_THRESHOLD}
    assert tunable["mmapped"] >= 24 * MiB


def test_user_set_reads_the_variable_and_the_tunable() -> None:
    name = "MALLOC_TRIM_THRESHOLD_"
    assert memory.user_set(name, {name: "0"})
    assert memory.user_set(name, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1:x=2"})
    assert not memory.user_set(name, {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1"})
    assert not memory.user_set(name, {})
