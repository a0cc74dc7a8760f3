"""Local copies of far files outside every mapped root (a crate under ~/.cargo/registry, the
far Python's stubs), so that an editor can open what a definition names.

A far file is read through the transport (`ssh … sh -c 'stat …; cat …'`, or the
`--remote-exec` command) into `$XDG_CACHE_HOME/lspmux/remote/<target>/<far path>`, read-only,
together with its stamp (size, mtime, inode). When an answer names it again, one `stat` of all
the copied files it names (one process, no bytes of the files) tells which changed since; those
are read again. An answer naming such files reaches the editor once their copies are current
(or failed, which is logged: the answer still arrives).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from pathlib import Path
from typing import Any

from lspmux.remote.mapping import PathMap
from lspmux.remote.target import Target

log = logging.getLogger("lspmux.remote")

#: What the stamp command says of a far file that is gone (its copy is then kept).
GONE = "-"


def mirror_root(target: Target, environ: Any = os.environ) -> str:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "lspmux" / "remote" / target.mirror_name())


class Mirror:
    def __init__(self, target: Target) -> None:
        self.target = target
        self.stamps: dict[str, str] = {}  # far path -> the stamp its copy was read with
        self.busy: dict[str, asyncio.Future[None]] = {}  # far path -> its copy being read
        self.reads = 0  # far files read (a first copy or a refresh)

    async def ensure(self, pmap: PathMap, paths: list[str]) -> None:
        """Current copies of the far `paths`: made when missing, read again when the far file
        changed since (a failure is logged; the old copy, if any, stays)."""
        stale = {path for path in paths if path not in self.stamps and path not in self.busy}
        known = [path for path in paths if path in self.stamps and path not in self.busy]
        if known:
            now = await self._stamps(known)
            stale |= {p for p in known if now.get(p, GONE) not in (GONE, self.stamps.get(p))}
        for path in sorted(stale):
            if path not in self.busy:
                task = asyncio.ensure_future(self._copy(pmap, path))
                self.busy[path] = task
                task.add_done_callback(functools.partial(self._copied, path))
        waits = [self.busy[path] for path in paths if path in self.busy]
        for outcome in await asyncio.gather(*waits, return_exceptions=True):
            if isinstance(outcome, Exception):
                log.warning("copy from %s failed: %s", self.target.label, outcome)

    def _copied(self, path: str, _task: asyncio.Future[None]) -> None:
        self.busy.pop(path, None)

    async def _stamps(self, paths: list[str]) -> dict[str, str]:
        """The far files' stamps now (none when the far side cannot be asked)."""
        try:
            out, err, code = await self._run(self.target.stamps_command(paths))
        except OSError as exc:
            log.warning("cannot stat files on %s: %s", self.target.label, exc)
            return {}
        lines = out.decode(errors="replace").splitlines()
        if code != 0 or len(lines) != len(paths):
            log.warning("cannot stat files on %s: %s", self.target.label, err.decode().strip())
            return {}
        return dict(zip(paths, lines, strict=True))

    async def _copy(self, pmap: PathMap, remote: str) -> None:
        local = pmap.local_path(remote, mirror=True)
        if local is None or pmap.fallback is None or not local.startswith(pmap.fallback + "/"):
            return  # (a normalized far path always lands inside the mirror)
        data, err, code = await self._run(self.target.read_command(remote))
        stamp, newline, body = data.partition(b"\n")
        if code != 0 or not newline:
            log.warning("cannot copy %s from %s: %s", remote, self.target.label, err.decode())
            return
        self.reads += 1
        path = Path(local)
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_name(f".{path.name}.lspmux-new")
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
        fresh.write_bytes(body)
        fresh.chmod(0o444)  # a copy: edits belong on the far side
        fresh.replace(path)  # an editor holding the old copy sees the new one whole
        self.stamps[remote] = stamp.decode(errors="replace").strip()

    @staticmethod
    async def _run(argv: list[str]) -> tuple[bytes, bytes, int]:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate()
        return out, err, proc.returncode or 0
