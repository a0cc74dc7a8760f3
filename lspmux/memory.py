"""glibc's heap settings for large messages, and giving freed memory back after large documents.

**The thresholds (`tune_heap`).** By default glibc serves each block over its mmap threshold
(128 KiB at start) with a fresh `mmap`, whose pages the kernel faults in and zeroes on first
touch, and unmaps it when freed; only freeing such a block raises the threshold (to that
block's size, up to 32 MiB) and the trim threshold (to twice that). Until then, and again
whenever a larger message comes or the top of the heap was trimmed, every buffer of a 2.5 MB
answer (the frame it is read into, its relayed copy) costs page faults: measured through the
proxy, the first 2.5 MB answers of a session took +5 ms over the direct connection instead of
+2 ms (docs/benchmarks.md, "Why: glibc's allocator"). So once the client has its `initialize`
answer (off the start path: ctypes costs ~3 ms to import) each serving process sets them fixed:

- `MMAP_THRESHOLD` = 32 MiB, the ceiling glibc's own rule reaches (and the largest value
  `mallopt` takes on 64-bit): every message under it comes from the heap from the first one,
  as it would after glibc had seen a 32 MiB block freed. Larger ones (up to the 64 MiB
  `max_message_size`) are still mmapped and unmapped each time.
- `TRIM_THRESHOLD` = 64 MiB, twice that, as glibc's rule pairs them: free memory at the top of
  the heap below it stays with the process for the next large message instead of being given
  back at each free and faulted in again. What large answers leave free is kept and reused
  (measured after the bench's 2.5 MB answers: the daemon 6-8 MiB more resident, the proxy
  0.5-4 MiB); it is bounded by the largest burst the process served, as under glibc's own
  raised thresholds.

A 10 MB document therefore no longer passes through mmapped buffers that are unmapped when
freed: its transient copies (the frame, the parsed text, what is sent on) come from the heap
and stay free inside the process, under the trim threshold — `release_soon()` gives them back
(below): `malloc_trim(0)` is not bound by the trim threshold, it returns the free top of the
heap and every free page inside it.

A variable the user set (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`, or the same in
`GLIBC_TUNABLES`) wins: that threshold is left as glibc set it.

**Giving memory back (`release_soon`).** With the thresholds raised, the heap is trimmed only
above a high-water mark. Opening a 10 MB document passes its text through several transient
buffers (the frame, the parsed message, the copy sent to each server), which would leave the
process about twice the document's size larger than what it holds. `release_soon()` asks for a
`malloc_trim(0)` a moment after such work (debounced, so a burst of large messages costs one
trim). Elsewhere than glibc (musl, macOS, Windows) both do nothing.

Also how much memory a process uses with everything it started (`tree_memory`): a server is
often a launcher (basedpyright's Python entry point runs node, which holds the memory), so
`lspmux status` counts the whole process tree. psutil is imported at the first call.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ctypes

log = logging.getLogger("lspmux.memory")

#: Documents (or full-text changes) at least this large are worth a trim afterwards.
TRIM_ABOVE = 1 << 20
DELAY = 0.5


#: glibc's `mallopt` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
#: Each threshold set by `tune_heap`: (name, `mallopt` parameter, value, the environment
#: variable by which a user sets it instead; `user_set` derives its GLIBC_TUNABLES name).
THRESHOLDS = (
    ("mmap_threshold", M_MMAP_THRESHOLD, MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_"),
    ("trim_threshold", M_TRIM_THRESHOLD, TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_"),
)


def is_glibc() -> bool:
    """Whether this process runs on glibc (asked of the C library, without ctypes)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # no confstr (Windows), or no such name
        return False


def _libc() -> ctypes.CDLL | None:
    """The process's own C library when it is glibc, else None. `CDLL(None)`: the symbols
    already loaded, so no library lookup (ctypes.util.find_library runs `ldconfig`: ~18 ms)."""
    if not is_glibc():
        return None
    import ctypes  # here, not at start: ~3 ms

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def _load_trim() -> Callable[[int], int] | None:
    libc = _libc()
    try:
        return None if libc is None else libc.malloc_trim  # type: ignore[no-any-return]
    except AttributeError:
        return None


_UNLOADED: Any = object()
#: glibc's malloc_trim, None elsewhere; looked up at the first large document.
_trim: Callable[[int], int] | None = _UNLOADED


def _trimmer() -> Callable[[int], int] | None:
    global _trim
    if _trim is _UNLOADED:
        _trim = _load_trim()
    return _trim


def user_set(env_name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user set this threshold (`MALLOC_MMAP_THRESHOLD_`…, or in GLIBC_TUNABLES
    as `glibc.malloc.mmap_threshold`…): then glibc already applied it, and it stays."""
    env = os.environ if environ is None else environ
    tunable = "glibc.malloc." + env_name.removeprefix("MALLOC_").rstrip("_").lower() + "="
    return env_name in env or tunable in env.get("GLIBC_TUNABLES", "")


#: What `tune_heap` set, by name (None before it ran): empty elsewhere than glibc, and
#: without the thresholds the user set.
tuned: dict[str, int] | None = None


def tune_heap() -> None:
    """Set glibc's mmap and trim thresholds (`THRESHOLDS`), once per process (later calls
    touch nothing): every session calls it once the client has its `initialize` answer."""
    global tuned
    if tuned is not None:
        return
    tuned = {}
    libc = _libc()
    if libc is None:
        return
    for name, param, value, env_name in THRESHOLDS:
        if user_set(env_name):
            continue
        if libc.mallopt(param, value) == 1:
            tuned[name] = value
        else:  # a glibc that refuses the value (a 32-bit one caps the mmap threshold lower)
            log.debug("mallopt(%s, %d) refused", name, value)
    log.debug("heap thresholds set: %s", tuned)


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
