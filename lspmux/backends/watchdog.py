"""No server outlives lspmux, even when lspmux is killed with SIGKILL.

lspmux stops its servers on every exit it sees (shutdown, EOF, SIGTERM). SIGKILL it does not
see: its servers would stay, and a server that ignores EOF on stdin (or the helpers it started
in its process group) would live on. So the first server started also starts a watchdog: a
small process of its own (its own session, so the signal that kills lspmux's group does not
reach it), told over a pipe the process group of every server as it starts and ends. When the
pipe ends — lspmux is gone, however it went — the watchdog stops each group still running
(SIGTERM, then SIGKILL after a grace period) and exits. On an orderly exit lspmux has already
stopped its servers and unregistered them, and the watchdog has nothing left to do.

The watchdog is `python -S -c` with the stdlib only: about 10 ms to start, a few MiB.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys

log = logging.getLogger("lspmux.backend")

#: Seconds between SIGTERM and SIGKILL for the groups left behind.
GRACE = 2.0

_PROGRAM = r"""
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    sign, _, pgid = line.strip().partition(" ")
    if pgid.isdigit():
        (groups.add if sign == "+" else groups.discard)(int(pgid))
def alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False
left = [g for g in groups if alive(g)]
for g in left:
    try:
        os.killpg(g, signal.SIGTERM)
    except OSError:
        pass
deadline = time.monotonic() + float(sys.argv[1])
while left and time.monotonic() < deadline:
    time.sleep(0.05)
    left = [g for g in left if alive(g)]
for g in left:
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    """The watchdog of this lspmux process (started on first use; see the module doc)."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid = 0  # the lspmux process that started it (a fork must start its own)

    def _pipe(self) -> subprocess.Popen[bytes] | None:
        if self._proc is not None and self._pid == os.getpid() and self._proc.poll() is None:
            return self._proc
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _PROGRAM, str(GRACE)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            log.warning("cannot start the watchdog that stops servers if lspmux is killed: %s", exc)
            self._proc = None
            return None
        self._pid = os.getpid()
        return self._proc

    def _say(self, line: str) -> None:
        proc = self._pipe()
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(line.encode())
            proc.stdin.flush()
        except OSError:
            self._proc = None

    def watch(self, pgid: int) -> None:
        """Stop the process group `pgid` if lspmux ends before `release(pgid)`."""
        self._say(f"+ {pgid}\n")

    def release(self, pgid: int) -> None:
        if self._proc is not None:
            self._say(f"- {pgid}\n")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """On an orderly exit: end the watchdog (the groups it still knows are stopped)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(GRACE + 1)


#: The one watchdog of this process.
WATCHDOG = Watchdog()
