"""Giving freed memory back to the system after large documents.

glibc's allocator keeps memory that Python frees: after the first large block is freed it
raises its mmap threshold (up to 32 MiB), so the next large strings and buffers come from the
heap, and the heap is trimmed only above a high-water mark. Opening a 10 MB document passes its
text through several transient buffers (the frame, the parsed message, the copy sent to each
server), which would leave the process about twice the document's size larger than what it
holds. `release_soon()` asks for a `malloc_trim(0)` a moment after such work (debounced, so a
burst of large messages costs one trim); elsewhere than glibc it does nothing.

Also how much memory a process uses with everything it started (`tree_memory`): a server is
often a launcher (basedpyright's Python entry point runs node, which holds the memory), so
`lspmux status` counts the whole process tree. psutil is imported at the first call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("lspmux.memory")

#: Documents (or full-text changes) at least this large are worth a trim afterwards.
TRIM_ABOVE = 1 << 20
DELAY = 0.5


def _load_trim() -> Callable[[int], int] | None:
    import ctypes  # here, not at start: ctypes and the library lookup cost ~5 ms
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to do
        return None
    return trim


_UNLOADED: Any = object()
#: glibc's malloc_trim, None elsewhere; looked up at the first large document.
_trim: Callable[[int], int] | None = _UNLOADED


def _trimmer() -> Callable[[int], int] | None:
    global _trim
    if _trim is _UNLOADED:
        _trim = _load_trim()
    return _trim


_pending: asyncio.TimerHandle | None = None


def release_soon(size: int) -> None:
    """`size` characters of text were just handled: when that is large, return the freed
    memory to the system in `DELAY` seconds (once, however many calls come meanwhile)."""
    global _pending
    if size < TRIM_ABOVE or _trimmer() is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no event loop (a script, a test): nothing is pending either
        return
    if _pending is not None:
        _pending.cancel()
    _pending = loop.call_later(DELAY, release_now)


def release_now() -> bool:
    """Trim now; whether memory was given back."""
    global _pending
    _pending = None
    trim = _trimmer()
    if trim is None:
        return False
    released = bool(trim(0))
    log.debug("malloc_trim: %s", "memory returned" if released else "nothing to return")
    return released


def own_memory() -> int | None:
    """The resident memory (RSS, bytes) of this process alone, its servers apart."""
    import psutil

    try:
        return int(psutil.Process().memory_info().rss)
    except psutil.Error:
        return None


#: How long one scan of the process table serves `tree_memory`: a status answer asks for every
#: instance's tree in a row, and each scan reads every process's parent (~1.5 ms with 80
#: processes), so one scan serves them all instead of one each.
SCAN_TTL = 0.25
_scan: tuple[float, dict[int, list[int]]] | None = None


def _children() -> dict[int, list[int]] | None:
    """Each process's children by pid, from one scan at most SCAN_TTL old; None where psutil
    has no table of parents (then each tree is walked by `Process.children`)."""
    import time

    import psutil

    global _scan
    ppid_map = getattr(psutil, "_ppid_map", None)  # what `children()` reads, once per call
    if ppid_map is None:
        return None
    now = time.monotonic()
    if _scan is None or now - _scan[0] > SCAN_TTL:
        children: dict[int, list[int]] = {}
        for pid, ppid in ppid_map().items():
            children.setdefault(ppid, []).append(pid)
        _scan = (now, children)
    return _scan[1]


def tree_memory(pid: int | None) -> int | None:
    """The resident memory (RSS, bytes) of process `pid` and all its descendants; None when
    there is no such process or it cannot be read. Each process's RSS is summed, as `ps` shows
    them: pages two of them share (a forked child's, shared libraries) count once for each."""
    if pid is None:
        return None
    import psutil  # here: only `lspmux status` asks, never the start path

    try:
        top = psutil.Process(pid)
        total = top.memory_info().rss
        children = _children()
        if children is None:
            descendants = [p.pid for p in top.children(recursive=True)]
        else:
            descendants, stack = [], list(children.get(pid, ()))
            while stack:  # a pid is a child of one parent: no process is met twice
                child = stack.pop()
                descendants.append(child)
                stack.extend(children.get(child, ()))
    except psutil.Error:
        return None
    for child in descendants:
        try:
            total += psutil.Process(child).memory_info().rss
        except psutil.Error:  # it ended meanwhile: it holds nothing now
            continue
    return int(total)
