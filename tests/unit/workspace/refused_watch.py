"""Run by test_workspace_watch.py in a process of its own: make the OS refuse a watch, check
that it does, then watch a folder with lspmux's Watcher and print, as JSON, what it did: whether
it became ready, whether it polls, the events a write produced and what it logged.

    python -m tests.unit.workspace.refused_watch REFUSAL FOLDER

REFUSAL is `max_inotify_instances` or `max_inotify_watches` (that limit of the user namespace
set to 0: run it inside `unshare --user --map-root-user`), or `unreadable` (a folder under
FOLDER made unreadable, and this process's power to read it anyway (root's
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH) dropped).
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from lspmux.workspace.watch import Watcher

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def drop_dac_capabilities() -> None:
    """Drop the capabilities that let root read any folder, for this thread and those it
    starts (capset(2), as the `prctl`/`setpriv` tools would)."""
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}
    if libc.capget(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    keep = ~((1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH)) & 0xFFFFFFFF
    data[0] &= keep  # effective
    data[1] &= keep  # permitted
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def unreadable(folder: Path) -> str:
    """A folder under `folder` this process cannot read: the errno reading it fails with."""
    locked = folder / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    locked.chmod(0)
    drop_dac_capabilities()
    try:
        os.listdir(locked)
    except PermissionError as err:
        return errno.errorcode[err.errno]
    raise SystemExit(f"{locked} is still readable: the test proves nothing")


def refuse(limit: str) -> str:
    """Set /proc/sys/user/`limit` to 0 (this user namespace's own) and check that inotify is
    refused now: the name of the errno it fails with."""
    Path(f"/proc/sys/user/{limit}").write_text("0\n")
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        return errno.errorcode[ctypes.get_errno()]
    try:
        if libc.inotify_add_watch(fd, b"/", 0x2) < 0:  # IN_MODIFY
            return errno.errorcode[ctypes.get_errno()]
    finally:
        os.close(fd)
    raise SystemExit(f"inotify still works with {limit} = 0: the test proves nothing")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


async def watch(folder: Path) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []
    watcher: Watcher[str] = Watcher(lambda _b, p: seen.append(p), [str(folder)], debounce_ms=50)
    await watcher.start()
    try:
        watcher.register("ruff", "1", {"watchers": [{"globPattern": "**/ruff.toml"}]})
        ready = await asyncio.wait_for(watcher.ready(), 20)
        if ready:
            (folder / "ruff.toml").write_text("x")
            for _ in range(200):  # up to 10 s: polling sees it within 300 ms
                if seen:
                    break
                await asyncio.sleep(0.05)
        return {"ready": ready, "polling": watcher.polling, "seen": seen}
    finally:
        await watcher.stop()


def main() -> None:
    limit, folder = sys.argv[1], Path(sys.argv[2])
    records = Records()
    logging.getLogger("lspmux").addHandler(records)
    logging.getLogger("lspmux").setLevel(logging.DEBUG)
    refused = unreadable(folder) if limit == "unreadable" else refuse(limit)
    try:
        result = asyncio.run(watch(folder))
    finally:
        if limit == "unreadable":
            (folder / "locked").chmod(0o700)  # pytest can remove it
    print(json.dumps({"refused": refused, **result, "log": records.lines}))


if __name__ == "__main__":
    main()
